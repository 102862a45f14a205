"""A fault-injecting serial proxy: a TCP relay between the harness and a
board's serial port that corrupts, drops and delays bytes and disconnects,
at rates you set, or at exact byte offsets (the tests' scripts).

    FaultSpec.parse("corrupt=1e-3,drop=1e-3,delay=0.01,delay-seconds=0.3,disconnect=1e-4")

Rates are per byte (corrupt, drop) or per chunk the relay forwards (delay,
disconnect), in both directions unless `direction` says "to-board" or
"from-board". A script is a list of (direction, byte offset, action),
counted over the proxy's lifetime per direction, for faults that must
happen exactly once. `vanish()` takes the port away (connections refused),
as when a USB serial adapter is unplugged. Every injected fault is counted.
"""
from __future__ import annotations

import math
import random
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass

DIRECTIONS = ("to-board", "from-board")
ACTIONS = ("corrupt", "drop", "delay", "disconnect")


class FaultSpecError(ValueError):
    pass


@dataclass(frozen=True)
class FaultSpec:
    corrupt: float = 0.0
    drop: float = 0.0
    delay: float = 0.0
    delay_seconds: float = 0.2
    disconnect: float = 0.0
    direction: str = "both"
    script: tuple[tuple[str, int, str], ...] = ()

    def __post_init__(self):
        for name in ("corrupt", "drop", "delay", "disconnect"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise FaultSpecError(f"fault rate {name}={getattr(self, name)} is not between 0 and 1")
        if self.direction not in ("both", *DIRECTIONS):
            raise FaultSpecError(f"direction {self.direction!r}: use both, to-board or from-board")
        for direction, offset, action in self.script:
            if direction not in DIRECTIONS or action not in ACTIONS or offset < 0:
                raise FaultSpecError(f"script entry {(direction, offset, action)}: expected (to-board|from-board, "
                                     f"offset >= 0, {'|'.join(ACTIONS)})")

    @classmethod
    def parse(cls, text: str) -> "FaultSpec":
        """'corrupt=1e-3,drop=1e-3,delay=0.01,delay-seconds=0.3,disconnect=1e-4,direction=both'"""
        values: dict = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            key, _, value = item.partition("=")
            key = key.strip().replace("-", "_")
            if key not in cls.__dataclass_fields__ or key == "script" or not value:
                raise FaultSpecError(f"fault {item!r}: expected NAME=VALUE with NAME one of corrupt, drop, delay, "
                                     f"delay-seconds, disconnect, direction")
            try:
                values[key] = value.strip() if key == "direction" else float(value)
            except ValueError:
                raise FaultSpecError(f"fault {item!r}: {value!r} is not a number") from None
        return cls(**values)

    def applies(self, direction: str) -> bool:
        return self.direction in ("both", direction)


class _Stream:
    """Faults of one direction: gaps to the next corrupted and dropped byte
    are drawn from the geometric distribution, so long streams cost little."""

    def __init__(self, spec: FaultSpec, direction: str, rng: random.Random, counts: Counter):
        self.spec, self.direction, self.rng, self.counts = spec, direction, rng, counts
        self.offset = 0
        self.active = spec.applies(direction)
        self.next_corrupt = self._gap(spec.corrupt)
        self.next_drop = self._gap(spec.drop)
        self.scripted = sorted((o, a) for d, o, a in spec.script if d == direction)

    def _gap(self, rate: float) -> float:
        if not self.active or rate <= 0:
            return math.inf
        if rate >= 1:
            return 0
        return int(math.log(1.0 - self.rng.random()) / math.log(1.0 - rate))

    def apply(self, data: bytes) -> tuple[bytes, bool, bool]:
        """The bytes to forward, whether to delay them, whether to disconnect."""
        out = bytearray()
        delay = disconnect = False
        for byte in data:
            position = self.offset
            self.offset += 1
            action = None
            while self.scripted and self.scripted[0][0] <= position:
                offset, scripted = self.scripted.pop(0)
                if offset == position:
                    action = scripted
            if action is None and self.next_drop <= 0:
                action, self.next_drop = "drop", self._gap(self.spec.drop)
            elif action is None and self.next_corrupt <= 0:
                action, self.next_corrupt = "corrupt", self._gap(self.spec.corrupt)
            self.next_drop -= 1
            self.next_corrupt -= 1
            if action == "drop":
                self.counts[f"{self.direction} drop"] += 1
                continue
            if action == "corrupt":
                self.counts[f"{self.direction} corrupt"] += 1
                byte ^= self.rng.randrange(1, 256)
            elif action == "delay":
                delay = True
            elif action == "disconnect":
                disconnect = True
                break
            out.append(byte)
        if self.active and self.spec.delay and self.rng.random() < self.spec.delay:
            delay = True
        if self.active and self.spec.disconnect and self.rng.random() < self.spec.disconnect:
            disconnect = True
        if delay:
            self.counts[f"{self.direction} delay"] += 1
        if disconnect:
            self.counts[f"{self.direction} disconnect"] += 1
        return bytes(out), delay, disconnect


class FaultProxy:
    def __init__(self, upstream: tuple[str, int], spec: FaultSpec, seed: int = 0, port: int = 0):
        self.upstream = upstream
        self.spec = spec
        self.rng = random.Random(seed)
        self.counts: Counter = Counter()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.streams = {d: _Stream(spec, d, self.rng, self.counts) for d in DIRECTIONS}
        self.lock = threading.Lock()
        self.connections: list[socket.socket] = []
        self.stopped = False

    def start(self) -> "FaultProxy":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self) -> None:
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.stopped:
                client.close()
                return
            try:
                board = socket.create_connection(self.upstream, timeout=5)
                board.settimeout(None)
            except OSError:
                client.close()
                continue
            for sock in (client, board):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.connections += [client, board]
            pair = (client, board)
            threading.Thread(target=self._pump, args=(client, board, "to-board", pair), daemon=True).start()
            threading.Thread(target=self._pump, args=(board, client, "from-board", pair), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, direction: str, pair) -> None:
        stream = self.streams[direction]
        try:
            while True:
                data = source.recv(4096)
                if not data:
                    break
                with self.lock:
                    out, delay, disconnect = stream.apply(data)
                if delay:
                    time.sleep(self.spec.delay_seconds)
                if out:
                    sink.sendall(out)
                if disconnect:
                    break
        except OSError:
            pass
        for sock in pair:   # one side gone: the whole connection is
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def vanish(self) -> None:
        """The port goes away: open connections drop, new ones are refused."""
        self.stop()

    def stop(self) -> None:
        self.stopped = True
        try:   # shutdown wakes the accept() blocked in _accept; close alone would not, on Linux
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            for sock in self.connections:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self.connections.clear()
