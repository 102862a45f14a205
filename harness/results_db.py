"""The results database: every measured variant, in SQLite, shared by the
regression and the autotuner.

A measurement is keyed by what produced it:
  scope    the target, the digest of the library under test, and the build
           artefact (the build cache key, which covers the target's tools
           and flags, the library and runtime sources and the 16-bit format);
  case     the case's description (entry, step, dtype, tile shape, options),
           the golden seed and the catalogue code that shapes it;
  variant  the kernel index and the core count.
The regression records what it runs, so the autotuner reuses it; the
autotuner looks up before it runs, so a re-run with nothing changed makes no
target run, and an interrupted one resumes where it stopped (each case's
variants are committed together, as soon as they are judged).

Only outcomes that a re-run would repeat are stored: passes, numeric
failures, crashes and malformed cases. Timeouts and transport errors may be
the machine's or the cable's fault, so they are measured again.
"""
from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from harness import failures

STORED = ("passed", failures.NUMERIC, failures.CRASH, failures.BAD_CASE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS measurements (
    target TEXT NOT NULL, library TEXT NOT NULL, artefact TEXT NOT NULL,
    case_key TEXT NOT NULL, case_id TEXT NOT NULL,
    kernel INTEGER NOT NULL, kernel_name TEXT NOT NULL, cores INTEGER NOT NULL,
    status TEXT NOT NULL, unit TEXT, latency INTEGER, work INTEGER, max_ulp REAL, message TEXT,
    recorded REAL NOT NULL,
    PRIMARY KEY (target, library, artefact, case_key, kernel, cores))
"""


@dataclass(frozen=True)
class Scope:
    """What every measurement of one build shares. artefact None matches any
    build of that library on that target (replay, where no tool is asked)."""

    target: str
    library: str
    artefact: str | None


@dataclass(frozen=True)
class Measurement:
    kernel: int
    cores: int
    status: str                  # "passed" or a failure class
    unit: str | None = None
    latency: int | None = None
    work: int | None = None
    max_ulp: float | None = None
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


class ResultsDBError(Exception):
    """The database cannot be opened, read or written (the message says which file and why)."""


def case_key(description: dict) -> str:
    return json.dumps(description, sort_keys=True)


class ResultsDB:
    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as db, db:
                db.execute(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise ResultsDBError(f"cannot open the results database {self.path}: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        # Several xdist workers and tuners may write at once: SQLite's own
        # locking serialises them; a writer waits up to a minute for a lock.
        db = sqlite3.connect(self.path, timeout=60)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def store(self, scope: Scope, key: str, case_id: str, rows: list[tuple[str, Measurement]]) -> None:
        """Record one case's judged variants in one transaction: (kernel name, measurement)."""
        kept = [(name, m) for name, m in rows if m.status in STORED]
        if not kept:
            return
        try:
            with closing(self._connect()) as db, db:
                db.executemany(
                    "INSERT OR REPLACE INTO measurements VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [(scope.target, scope.library, scope.artefact, key, case_id, m.kernel, name, m.cores,
                      m.status, m.unit, m.latency, m.work, m.max_ulp, m.message, time.time())
                     for name, m in kept])
        except sqlite3.Error as exc:
            raise ResultsDBError(f"cannot write the results database {self.path}: {exc}") from None

    def lookup(self, scope: Scope, key: str) -> dict[tuple[int, int], Measurement]:
        """Every stored variant of a case in this scope, by (kernel, cores); the newest wins."""
        where = "target = ? AND library = ? AND case_key = ?"
        args = [scope.target, scope.library, key]
        if scope.artefact is not None:
            where += " AND artefact = ?"
            args.append(scope.artefact)
        try:
            with closing(self._connect()) as db:
                found = db.execute(f"SELECT kernel, cores, status, unit, latency, work, max_ulp, message "
                                   f"FROM measurements WHERE {where} ORDER BY recorded", args).fetchall()
        except sqlite3.Error as exc:
            raise ResultsDBError(f"cannot read the results database {self.path}: {exc}") from None
        return {(row[0], row[1]): Measurement(*row) for row in found}
