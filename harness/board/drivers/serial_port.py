"""The console of a board: its `serial` URL opened by pyserial's
serial_for_url, so /dev/tty*, socket:// and rfc2217:// all work."""
from __future__ import annotations

import socket

from harness import failures
from harness.board.drivers.base import BoardFault


class SerialConsole:
    def __init__(self, board):
        self.board = board

    def open(self, read_timeout: float = 0.05):
        import serial   # pyserial (pyserial-labgrid provides the same module)
        board = self.board
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
    sock = getattr(port, "_socket", None)
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


def _reason(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__
