"""Host half of the serial link to a board's runner firmware.

The device half and the frame format are in
targets/board/runtime/ptl_board_link.h, whose PTL_LINK_* numbers are read from
there. A run is: PING until READY, START, DATA chunks, GO; wait for
FINISHED; QUERY the buffered console output chunk by chunk; DONE. Every
request is acknowledged, and one whose answer is damaged, refused (NAK) or
late is simply sent again: a dropped or corrupted byte costs one frame.
When the board does not answer for `answer_timeout` after `attempts`
tries, the link gives up with LinkTimeout; when the port itself fails,
with LinkBroken. The caller (the board target) resets the board or moves
to another one.
"""
from __future__ import annotations

import re
import select
import struct
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

HEADER_FILE = Path(__file__).resolve().parent.parent / "targets" / "board" / "runtime" / "ptl_board_link.h"


@lru_cache(maxsize=None)
def constants() -> dict[str, int]:
    """The PTL_LINK_* numbers and kinds of ptl_board_link.h."""
    values = {}
    for match in re.finditer(r"^#define PTL_LINK_(\w+) ('.'|0x[0-9a-fA-F]+|\d+)", HEADER_FILE.read_text(),
                             re.MULTILINE):
        text = match.group(2)
        values[match.group(1)] = ord(text[1]) if text.startswith("'") else int(text, 0)
    return values


class LinkError(Exception):
    """The link failed; the message says where."""


class LinkTimeout(LinkError):
    """The board stopped answering."""


class LinkBroken(LinkError):
    """The serial port failed or went away."""


@dataclass
class LinkStats:
    """What it took: the tests and the benchmark read these."""

    requests: int = 0
    resends: int = 0          # requests sent again (NAK, damaged or missing answer)
    naks: int = 0
    damaged: int = 0          # frames from the device that failed COBS or CRC
    timeouts: int = 0         # answers that did not come in time

    def add(self, other: "LinkStats") -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Finished:
    length: int
    crc: int
    status: int
    overflowed: bool


@dataclass
class LinkRun:
    output: bytes
    status: int
    overflowed: bool
    stats: LinkStats = field(default_factory=LinkStats)


# ---- framing ---------------------------------------------------------------------------

def cobs_encode(data: bytes) -> bytes:
    out = bytearray([0])
    code_at, code = 0, 1
    for byte in data:
        if byte == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
        else:
            out.append(byte)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at, code = len(out), 1
                out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode(data: bytes) -> bytes | None:
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        i += 1
        if code == 0 or i + code - 1 > len(data):
            return None
        out += data[i:i + code - 1]
        i += code - 1
        if code < 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def encode_frame(kind: int, seq: int, arg: int, data: bytes = b"") -> bytes:
    raw = struct.pack("<BII", kind, seq, arg) + data
    raw += struct.pack("<I", zlib.crc32(raw))
    return b"\0" + cobs_encode(raw) + b"\0"


@dataclass(frozen=True)
class Frame:
    kind: int
    seq: int
    arg: int
    data: bytes


def decode_frame(encoded: bytes) -> Frame | None:
    """A checked frame, or None when it is damaged."""
    raw = cobs_decode(encoded)
    if raw is None or len(raw) < 13:
        return None
    body, crc = raw[:-4], struct.unpack("<I", raw[-4:])[0]
    if zlib.crc32(body) != crc:
        return None
    kind, seq, arg = struct.unpack_from("<BII", body)
    return Frame(kind, seq, arg, body[9:])


class FrameReader:
    """Splits the bytes from the device at 0x00 into frames."""

    def __init__(self, port):
        self.port = port
        self.pending = bytearray()

    def next(self, deadline: float) -> Frame | None | bool:
        """The next frame: a Frame, None for a damaged one, or False when
        nothing came before the deadline."""
        while True:
            end = self.pending.find(0)
            if end >= 0:
                encoded = bytes(self.pending[:end])
                del self.pending[:end + 1]
                if not encoded:
                    continue
                return decode_frame(encoded)
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                self.pending += self._read_some(left)
            except LinkBroken:
                raise
            except Exception as exc:  # pyserial raises SerialException, OSError, or worse on a dead socket
                raise LinkBroken(f"reading the serial port failed: {exc}") from None

    def _read_some(self, wait: float) -> bytes:
        """What has arrived, waiting at most `wait` for the first byte.
        pyserial's socket:// port reports at most 1 byte waiting, so it is
        read from its socket directly, a whole segment at a time."""
        sock = getattr(self.port, "_socket", None)
        if sock is not None and type(self.port).__module__.endswith("protocol_socket"):
            ready, _, _ = select.select([sock], [], [], min(wait, 0.05))
            if not ready:
                return b""
            data = sock.recv(65536)
            if not data:
                raise LinkBroken("the serial port's connection closed")
            return data
        waiting = getattr(self.port, "in_waiting", 0) or 0
        return self.port.read(max(1, min(65536, waiting)))


# ---- the link --------------------------------------------------------------------------

class BoardLink:
    """One conversation with a board over an open serial port (pyserial)."""

    MIN_CHUNK = 16

    def __init__(self, port, answer_timeout: float = 1.0, attempts: int = 20):
        self.port = port
        self.reader = FrameReader(port)
        self.answer_timeout = answer_timeout
        self.attempts = attempts
        self.stats = LinkStats()
        self.seq = 1
        self.k = constants()
        # Chunks shrink when frames arrive damaged and grow back when they do
        # not: long frames are cheap on a clean cable, short ones survive a noisy one.
        self.chunk = self.k["MAX_DATA"]

    def reopen(self, port) -> None:
        """Goes on over a new port (the board's console reopened after a reset
        or a power cycle); bytes half read from the old one are dropped."""
        self.port = port
        self.reader = FrameReader(port)

    def _write(self, data: bytes) -> None:
        try:
            self.port.write(data)
            flush = getattr(self.port, "flush", None)
            if flush:
                flush()
        except Exception as exc:
            raise LinkBroken(f"writing to the serial port failed: {exc}") from None

    def request(self, kind: int, arg: int = 0, data: bytes | Callable[[], bytes] = b"",
                answers: tuple[int, ...] = ()) -> Frame:
        """Sends a request until an answer of one of `answers` (or an ACK)
        with its sequence number comes back. A NAK other than 'damaged
        frame' is returned to the caller, who knows what it means. `data`
        may be a function, called for every try: a chunk made anew after a
        damaged try is shorter (self.chunk halves), where the same long
        frame would fail again on a noisy cable."""
        k = self.k
        seq, self.seq = self.seq, self.seq + 1
        wanted = answers or (k["ACK"],)
        self.stats.requests += 1
        for attempt in range(self.attempts):
            if attempt:
                self.stats.resends += 1
                self.chunk = max(self.MIN_CHUNK, self.chunk // 2)
            self._write(encode_frame(kind, seq, arg, data() if callable(data) else data))
            deadline = time.monotonic() + self.answer_timeout
            while True:
                got = self.reader.next(deadline)
                if got is False:
                    self.stats.timeouts += 1
                    break
                if got is None:
                    self.stats.damaged += 1
                    break  # an answer was damaged: ask again
                if got.kind == k["NAK"] and got.arg == k["NAK_FRAME"]:
                    self.stats.naks += 1
                    break
                if got.seq != seq:
                    continue  # a late answer to an earlier request, or the boot notice
                if got.kind in wanted or got.kind == k["NAK"]:
                    if not attempt:
                        self.chunk = min(k["MAX_DATA"], self.chunk * 2)
                    return got
        raise LinkTimeout(f"no answer to request {chr(kind)!r} after {self.attempts} tries "
                          f"({self.answer_timeout:g} s each)")

    def ping(self) -> int:
        """Waits until the firmware is ready; returns its payload capacity."""
        return self.request(self.k["PING"], answers=(self.k["READY"],)).arg

    def send_payload(self, payload: bytes) -> None:
        k = self.k
        answer = self.request(k["START"], len(payload), struct.pack("<I", zlib.crc32(payload)))
        if answer.kind == k["NAK"]:
            if answer.arg == k["NAK_TOO_BIG"]:
                raise PayloadTooBig(len(payload), struct.unpack("<I", answer.data[:4])[0] if answer.data else 0)
            raise LinkError(f"the board refused the payload's start (reason {answer.arg})")
        offset = 0
        while offset < len(payload):
            sizes = []      # of each try's chunk; the last one got through

            def part() -> bytes:
                sizes.append(min(self.chunk, len(payload) - offset))
                return payload[offset:offset + sizes[-1]]
            answer = self.request(k["DATA"], offset, part)
            if answer.kind == k["NAK"]:
                raise LinkError(f"the board refused the chunk at {offset} (reason {answer.arg})")
            offset += sizes[-1]
        answer = self.request(k["GO"])
        if answer.kind == k["NAK"] and answer.arg == k["NAK_STATE"]:
            # An earlier try of this GO got through and its ACK was lost: the
            # board left the receiving state, which only a GO with the
            # payload's CRC does, and runs (or has run) this payload.
            return
        if answer.kind == k["NAK"]:
            reason = {k["NAK_MISSING"]: "incomplete", k["NAK_CRC"]: "CRC mismatch"}.get(answer.arg, "unexpected")
            raise LinkError(f"the board refused to run the payload (reason {answer.arg}: {reason})")

    def wait_finished(self, timeout: float, poll: float = 1.0) -> Finished:
        """Waits for the run's FINISHED notice; asks again every `poll`
        seconds in case it was lost."""
        k = self.k
        end = time.monotonic() + timeout
        query = None
        while time.monotonic() < end:
            got = self.reader.next(min(end, time.monotonic() + poll))
            if got is False or got is None:
                if got is None:
                    self.stats.damaged += 1
                query = encode_frame(k["QUERY"], self.seq, 0, struct.pack("<I", 0))
                self._write(query)
                continue
            if got.kind == k["FINISHED"] and len(got.data) >= 12:
                crc, status, overflowed = struct.unpack_from("<IiI", got.data)
                return Finished(got.arg, crc, status, bool(overflowed))
            if got.kind == k["BOOT"]:
                raise LinkError("the board rebooted during the run (its output is lost)")
            if got.kind == k["NAK"] and got.arg == k["NAK_STATE"] and query is not None:
                raise LinkError("the board forgot the run (it answers as if no payload was sent)")
        raise LinkTimeout(f"the run did not finish within {timeout:g} s")

    def fetch_leftover(self, payload_crc: int) -> bytes | None:
        """After a reset: the console output of the run that was going, if
        the board kept it and it was this payload's; else None."""
        k = self.k
        answer = self.request(k["LEFTOVER"], 0, struct.pack("<I", 0), answers=(k["FINISHED"],))
        if answer.kind != k["FINISHED"] or len(answer.data) < 16:
            return None
        crc, status, overflowed, kept_for = struct.unpack_from("<IiII", answer.data)
        if kept_for != payload_crc:
            return None
        return self.fetch_output(Finished(answer.arg, crc, status, bool(overflowed)), k["LEFTOVER"])

    def fetch_output(self, finished: Finished, kind: int | None = None) -> bytes:
        k = self.k
        out = bytearray()
        while len(out) < finished.length:
            wants = []      # of each try; the last one's answer came back whole

            def want() -> bytes:
                wants.append(min(self.chunk, finished.length - len(out)))
                return struct.pack("<I", wants[-1])
            answer = self.request(kind or k["QUERY"], len(out), want, answers=(k["OUTPUT"],))
            if answer.kind != k["OUTPUT"] or answer.arg != len(out) or not answer.data:
                raise LinkError(f"the board answered the output request at {len(out)} with "
                                f"{chr(answer.kind)!r} (arg {answer.arg})")
            out += answer.data[:wants[-1]]
        if zlib.crc32(bytes(out)) != finished.crc:
            raise LinkError("the output read back does not match the board's CRC of it")
        return bytes(out)

    def done(self) -> None:
        """Lets the board reset for the next payload. The ACK is not awaited:
        the next PING finds the board either way."""
        self._write(encode_frame(self.k["DONE"], self.seq, 0))
        self.seq += 1

    def run(self, payload: bytes, timeout: float) -> LinkRun:
        self.ping()
        self.send_payload(payload)
        finished = self.wait_finished(timeout)
        output = self.fetch_output(finished)
        self.done()
        return LinkRun(output, finished.status, finished.overflowed, self.stats)


class PayloadTooBig(LinkError):
    def __init__(self, size: int, capacity: int):
        super().__init__(f"the payload has {size} bytes; the board takes at most {capacity}")
        self.size, self.capacity = size, capacity
