"""A board's drivers: its console, flasher, reset and power switch, each
behind a small protocol, as labgrid's ConsoleProtocol, BootstrapProtocol,
ResetProtocol and PowerProtocol are. The board target asks these four for
what it needs and never knows how a driver does it.

The inventory names a board's flash, reset and power driver per field
(harness/board/inventory.py):

    flash = ["openocd", "-f", "board/gap9.cfg", "-c", "program {firmware} exit"]   # an argv: command.py
    power = {driver = "virtual_board", control = "127.0.0.1:7000"}                # a table: that driver

An argv list is the command driver (drivers/command.py). A table names a
driver module, either one of this folder (`virtual_board`) or any
importable module by its dotted name (`mylab.tasmota`), and passes the
table's other keys to it. A driver module has one function,

    make(board, field, params) -> a driver    # ValueError when params are wrong

whose driver has the field's method: flash(firmware), reset() or
power(on), and optionally missing() -> str | None (what is not installed).
A new driver (a power switch with a Python API, a debugger's flash) is one
module; nothing here changes.

The console is the board's `serial` URL opened by pyserial
(drivers/serial_port.py): /dev/tty*, socket:// and rfc2217:// all work.

Every failure is a BoardFault with its class and a message that names the
board and the field.
"""
from __future__ import annotations

import importlib

from harness import failures
from harness.board.drivers import command
from harness.board.drivers.base import BoardFault, Console, Flasher, PowerSwitch, Resetter  # noqa: F401 (the
from harness.board.drivers.serial_port import SerialConsole                                  # drivers' interface)

# An inventory field, and the protocol of its driver (whose method has the field's name).
PROTOCOLS = {"flash": Flasher, "reset": Resetter, "power": PowerSwitch}


def driver_module(name: str):
    """The module of a driver table's `driver`: one of this folder, else any
    importable module. ValueError says why it is not a driver."""
    module = None
    for candidate in ([f"{__name__}.{name}", name] if "." not in name else [name]):
        try:
            module = importlib.import_module(candidate)
            break
        except ModuleNotFoundError as exc:
            if exc.name != candidate and not candidate.startswith(f"{exc.name}."):
                raise ValueError(f"driver {name!r} failed to import: {exc}") from None
    if module is None:
        raise ValueError(f"no driver {name!r}: neither a module of harness/board/drivers/ nor an importable "
                         f"module")
    if not callable(getattr(module, "make", None)):
        raise ValueError(f"module {module.__name__} is not a board driver: it has no make(board, field, params)")
    return module


def make(board, field: str):
    """The driver of a board's flash, reset or power field; None when the
    inventory gives none (reset and power are optional). ValueError when
    the field's driver refuses its parameters or lacks the method."""
    spec = getattr(board, field)
    if not spec:
        return None
    if isinstance(spec, tuple):
        return command.make(board, field, {"argv": spec})
    try:
        driver = driver_module(spec.driver).make(board, field, dict(spec.params))
    except ValueError:
        raise
    except Exception as exc:   # a driver's own bug: one line, not a traceback
        raise ValueError(f"driver {spec.driver!r}: make() failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(driver, PROTOCOLS[field]):
        raise ValueError(f"driver {spec.driver!r} has no {field}() for the field {field!r}")
    return driver


def _driver(board, field: str):
    try:
        driver = make(board, field)
    except ValueError as exc:   # the inventory checked it; a module changed since is still one clear failure
        raise BoardFault(failures.LOAD, f"board {board.name}: field '{field}': {exc}") from None
    return None if driver is None else _Guarded(board, field, driver)


class _Guarded:
    """A driver whose method fails with a BoardFault, whatever it raises: a
    driver's bug or its device's error is the board's load failure (tried on
    another board, counted towards quarantine), not a traceback."""

    def __init__(self, board, field: str, driver):
        self._board, self._field, self._driver = board, field, driver

    def __getattr__(self, name: str):
        method = getattr(self._driver, name)

        def guarded(*args, **kwargs):
            try:
                return method(*args, **kwargs)
            except BoardFault:
                raise
            except Exception as exc:
                raise BoardFault(failures.LOAD, f"board {self._board.name}: field '{self._field}': "
                                                f"{name}() failed: {type(exc).__name__}: {exc}") from None
        return guarded


def flasher(board) -> Flasher:
    return _driver(board, "flash")


def resetter(board) -> Resetter | None:
    return _driver(board, "reset")


def power_switch(board) -> PowerSwitch | None:
    return _driver(board, "power")


def console(board) -> Console:
    return SerialConsole(board)


def open_console(board, read_timeout: float = 0.05):
    """The board's serial port, open."""
    return console(board).open(read_timeout)


def missing(board) -> list[str]:
    """'field: what' for each driver that cannot work here (a program not
    installed, a module that does not import)."""
    out = []
    for field in PROTOCOLS:
        try:
            driver = make(board, field)
        except ValueError as exc:
            out.append(f"{field}: {exc}")
            continue
        reason = getattr(driver, "missing", lambda: None)() if driver is not None else None
        if reason:
            out.append(f"{field}: {reason}")
    return out
