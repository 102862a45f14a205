"""What a board driver is: the four protocols, and the fault every driver
raises (harness/board/drivers/__init__.py says how the inventory names one)."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable


class BoardFault(Exception):
    """A failure of the board or its link, not of the case: another board may do better."""

    def __init__(self, kind: str, message: str, checked: bool = False):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.checked = checked    # the board already failed a health check (or a reset and power cycle)


@runtime_checkable
class Flasher(Protocol):
    def flash(self, firmware: Path) -> None:
        """Writes the firmware to the board; BoardFault(load) when it cannot."""


@runtime_checkable
class Resetter(Protocol):
    def reset(self) -> None:
        """Restarts the board's firmware; BoardFault(load) when it cannot."""


@runtime_checkable
class PowerSwitch(Protocol):
    def power(self, on: bool) -> None:
        """Switches the board's supply; BoardFault(load) when it cannot."""


class Console(Protocol):
    def open(self, read_timeout: float = 0.05):
        """The board's serial port, open (pyserial's Serial interface:
        read, write, close); BoardFault(transport) when it cannot be opened."""
