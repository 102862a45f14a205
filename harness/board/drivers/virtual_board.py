"""A driver with a Python API: flash, reset and power of a virtual board
(`python -m harness boards serve`) through its control server, called in
this process instead of through a command.

    flash = {driver = "virtual_board", control = "127.0.0.1:7000"}
    reset = {driver = "virtual_board", control = "127.0.0.1:7000"}
    power = {driver = "virtual_board", control = "127.0.0.1:7000", board = "vb0"}

`board` defaults to the inventory's board name."""
from __future__ import annotations

from pathlib import Path

from harness import failures
from harness.board.drivers.base import BoardFault

PARAMS = {"control", "board"}


def make(board, field: str, params: dict) -> "VirtualBoardDriver":
    unknown = set(params) - PARAMS
    if unknown:
        raise ValueError(f"unknown parameter(s) {sorted(unknown)} of driver 'virtual_board'; it takes "
                         f"{sorted(PARAMS)}")
    control = params.get("control")
    if not isinstance(control, str) or ":" not in control:
        raise ValueError(f"driver 'virtual_board' needs control = \"HOST:PORT\" (the control server), "
                         f"got {control!r}")
    name = params.get("board", board.name)
    if not isinstance(name, str) or not name:
        raise ValueError(f"driver 'virtual_board': board must be a board name, got {name!r}")
    return VirtualBoardDriver(board, field, control, name)


class VirtualBoardDriver:
    def __init__(self, board, field: str, control: str, name: str):
        self.board, self.field, self.control, self.name = board, field, control, name

    def flash(self, firmware: Path) -> None:
        self._ask("flash", str(Path(firmware).resolve()))

    def reset(self) -> None:
        self._ask("reset")

    def power(self, on: bool) -> None:
        self._ask("power", "on" if on else "off")

    def _ask(self, *words: str) -> None:
        from harness.board.virtual import BoardError, control
        try:
            control(self.control, [self.name, *words])
        except BoardError as exc:
            raise BoardFault(failures.LOAD, f"board {self.board.name}: field '{self.field}': driver "
                                            f"virtual_board: {exc}") from None
