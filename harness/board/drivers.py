"""The drivers of a board: its serial console (pyserial's serial_for_url, so
/dev/tty*, socket:// and rfc2217:// all work) and its flash, reset and power
commands (argv templates from the inventory). Each failure is a BoardFault
with its class and a message that names the board and the field."""
from __future__ import annotations

import subprocess

from harness import failures
from harness.board.inventory import Board

COMMAND_TIMEOUT = 120.0
STDERR_LINES = 200      # of a failed command's output kept in its message (and the quarantine line)


class BoardFault(Exception):
    """A failure of the board or its link, not of the case: another board may do better."""

    def __init__(self, kind: str, message: str, checked: bool = False):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.checked = checked    # the board already failed a health check (or a reset and power cycle)


def open_console(board: Board, read_timeout: float = 0.05):
    """The board's serial port, open."""
    import serial   # pyserial (pyserial-labgrid provides the same module)
    url = board.serial
    if url.startswith("rfc2217://") and "?" not in url:
        url += "?ign_set_control"   # ser2net does not answer SET_CONTROL; pyserial would wait for it in vain
    try:
        port = serial.serial_for_url(url, baudrate=board.baud, timeout=read_timeout)
    except (serial.SerialException, OSError, ValueError, NotImplementedError) as exc:
        raise BoardFault(failures.TRANSPORT, f"board {board.name}: field 'serial': cannot open {url}: "
                                             f"{_reason(exc)}") from None
    _no_delay(port)
    return port


def _no_delay(port) -> None:
    """Small frames go out at once (no Nagle delay on TCP transports)."""
    import socket
    sock = getattr(port, "_socket", None)
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


def _reason(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__


def run_command(board: Board, which: str, timeout: float = COMMAND_TIMEOUT, **values) -> str:
    """Runs the board's flash, reset or power command; returns its output.
    Raises BoardFault(load) when it is missing, fails or hangs."""
    argv = board.command(which, **values)
    shown = " ".join(argv)
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise BoardFault(failures.LOAD, f"board {board.name}: field '{which}': program {argv[0]!r} not found "
                                        f"(install it, or fix the inventory)") from None
    except subprocess.TimeoutExpired:
        raise BoardFault(failures.LOAD, f"board {board.name}: field '{which}': `{shown}` did not finish "
                                        f"within {timeout:g} s") from None
    except OSError as exc:
        raise BoardFault(failures.LOAD, f"board {board.name}: field '{which}': cannot run {argv[0]!r}: "
                                        f"{exc.strerror or exc}") from None
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        if len(lines) > STDERR_LINES:     # a tool that printed its whole log: its end says why
            lines = [f"({len(lines) - STDERR_LINES} earlier lines left out)", *lines[-STDERR_LINES:]]
        tail = "\n  ".join(lines) or "(no output)"
        raise BoardFault(failures.LOAD, f"board {board.name}: field '{which}': `{shown}` failed "
                                        f"(exit {result.returncode}):\n  {tail}")
    return result.stdout
