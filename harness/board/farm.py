"""The boards of one machine, shared by every process that runs cases on them.

- A lease is an exclusive lock (fcntl.flock) on a file per port (the
  resolved device, or host:port) in a machine-wide lock directory, so two pytest-xdist workers, or two CI jobs on
  one runner, never use a board at the same time. The kernel drops the lock
  when its holder dies, so a crashed worker never strands a board.
- The session's state lives in a directory that the pytest controller makes
  and hands to its workers (PTL_BOARD_STATE): per board, its consecutive
  failures, whether it is quarantined, which firmware it holds, and a ledger
  of what it did. It is read and written only under the board's lease.
- A board that fails `quarantine_after` times in a row is quarantined for the
  session: nobody leases it again, and the summary names it.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness import failures
from harness.board.inventory import Board
from harness.failures import CaseFailure

EVENT_COUNTS = {"failure": "failures", "reset": "resets", "power": "power_cycles", "flash": "flashes", "hang": "hangs"}
DEFAULT_LOCK_DIR = Path(tempfile.gettempdir()) / "ptl-board-locks"


@dataclass
class Lease:
    board: Board
    farm: "BoardFarm"
    started: float

    # ---- per-board state, under the lease ----------------------------------------

    def _path(self, suffix: str) -> Path:
        return self.farm.state_dir / f"{self.board.name}.{suffix}"

    @property
    def flashed(self) -> str | None:
        path = self._path("flashed")
        return path.read_text() if path.exists() else None

    @flashed.setter
    def flashed(self, identity: str | None) -> None:
        path = self._path("flashed")
        if identity is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(identity)

    def succeeded(self) -> None:
        self._path("failures").write_text("0")

    @property
    def failures_in_a_row(self) -> int:
        path = self._path("failures")
        return int(path.read_text() or 0) if path.exists() else 0

    def failed(self, kind: str, message: str, healthy: Callable[[], bool] | None = None) -> bool:
        """Counts a failure; returns True when it puts the board in
        quarantine. `healthy`, when given, is asked first at the failure
        that would: a board that passes it keeps working (its count starts
        over), so only a board that fails its health check is quarantined."""
        count = self.failures_in_a_row + 1
        self._path("failures").write_text(str(count))
        self.note("failure", kind=kind, message=message, in_a_row=count)
        if count >= self.farm.quarantine_after and healthy is not None and healthy():
            self.note("healthy", after=count)
            self.succeeded()
            return False
        if count >= self.farm.quarantine_after:
            # The whole message: a flash tool's stderr says why, and rarely on its first line.
            self._path("quarantined").write_text(f"{count} failures in a row, the last: [{kind}] {message}")
            return True
        return False

    def note(self, event: str, **details) -> None:
        """One line of the session's ledger (the summary counts them)."""
        self.farm.note(self.board.name, event, **details)


class BoardFarm:
    def __init__(self, boards: list[Board], state_dir: Path, lock_dir: Path | None = None,
                 quarantine_after: int = 3, poll: float = 0.05):
        if not boards:
            raise ValueError("a farm needs at least one board")
        self.boards = boards
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.lock_dir = Path(lock_dir or os.environ.get("PTL_BOARD_LOCKS") or DEFAULT_LOCK_DIR)
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        self.quarantine_after = quarantine_after
        self.poll = poll

    def lock_path(self, board: Board) -> Path:
        """Machine-wide, keyed by the port itself (Board.port): the same port
        is one lock for every session, under whatever name or path an
        inventory gives it."""
        key = hashlib.sha256(board.port.encode()).hexdigest()[:16]
        return self.lock_dir / f"port-{key}.lock"

    def is_quarantined(self, board: Board) -> bool:
        return (self.state_dir / f"{board.name}.quarantined").exists()

    def quarantined(self) -> dict[str, str]:
        """Quarantined boards of this session, with the reason."""
        return {b.name: (self.state_dir / f"{b.name}.quarantined").read_text()
                for b in self.boards if self.is_quarantined(b)}

    @contextlib.contextmanager
    def lease(self, avoid: set[str] = frozenset(), prefer: str | None = None, wait: float | None = None):
        """Holds one free board that is not quarantined, preferring one that
        is not in `avoid` (boards that just failed this case) and, among
        those, one already flashed with `prefer`. Waits while all are busy."""
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            usable = [b for b in self.boards if not self.is_quarantined(b)]
            if not usable:
                raise CaseFailure(failures.LOAD, "every board is quarantined: "
                                  + "; ".join(f"{n}: {why}" for n, why in self.quarantined().items()))
            fresh = [b for b in usable if b.name not in avoid]
            candidates = fresh or usable
            if prefer is not None:
                candidates.sort(key=lambda b: self._flashed(b) != prefer)
            for board in candidates:
                handle = self._try_lock(board)
                if handle is None:
                    continue
                if self.is_quarantined(board):     # quarantined while we waited
                    handle.close()
                    continue
                lease = Lease(board, self, time.monotonic())
                try:
                    yield lease
                finally:
                    self.note(board.name, "lease", pid=os.getpid(), start=lease.started, end=time.monotonic())
                    handle.close()   # releases the lock
                return
            if deadline is not None and time.monotonic() > deadline:
                raise CaseFailure(failures.TIMEOUT, f"no board became free within {wait:g} s")
            time.sleep(self.poll)

    def _try_lock(self, board: Board):
        handle = open(self.lock_path(board), "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return None
        return handle

    def _flashed(self, board: Board) -> str | None:
        path = self.state_dir / f"{board.name}.flashed"
        return path.read_text() if path.exists() else None

    # ---- the ledger ------------------------------------------------------------------

    def note(self, board: str, event: str, **details) -> None:
        line = json.dumps({"board": board, "event": event, **details}) + "\n"
        with open(self.state_dir / "ledger.jsonl", "a") as ledger:   # one write per line: O_APPEND keeps lines whole
            ledger.write(line)

    def ledger(self) -> list[dict]:
        path = self.state_dir / "ledger.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def summary(self) -> dict:
        """Per board: runs, failures (and their classes), resends, resets,
        power cycles, flashes, cases that hung on a healthy board, and
        quarantine."""
        def empty() -> dict:
            return {"runs": 0, "failures": 0, "resends": 0, "resets": 0, "power_cycles": 0, "flashes": 0,
                    "hangs": 0, "failure_classes": {}}
        out = {b.name: empty() for b in self.boards}
        for entry in self.ledger():
            counts = out.setdefault(entry["board"], empty())
            event = entry["event"]
            if event == "run":
                counts["runs"] += 1
                counts["resends"] += entry.get("resends", 0)
            elif event in EVENT_COUNTS:
                counts[EVENT_COUNTS[event]] += 1
            if event == "failure":
                classes = counts["failure_classes"]
                classes[entry["kind"]] = classes.get(entry["kind"], 0) + 1
        for name, why in self.quarantined().items():
            out[name]["quarantined"] = why
        return out
