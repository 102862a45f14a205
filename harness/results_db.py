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

Each row carries the sha256 of its values (digest): a row whose values do
not match it is not believed (a one-line warning; the variant is measured
again and the row replaced). A database file that SQLite finds damaged is
moved aside and a fresh one started, with a warning.

Only outcomes that a re-run would repeat are stored: passes, numeric
failures, crashes and malformed cases. Timeouts and transport errors may be
the machine's or the cable's fault, so they are measured again.
"""
from __future__ import annotations

import hashlib
import json
import os
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
    recorded REAL NOT NULL, digest TEXT,
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


_COLUMNS = ("target", "library", "artefact", "case_key", "case_id", "kernel", "kernel_name", "cores",
            "status", "unit", "latency", "work", "max_ulp", "message", "recorded")


def row_digest(values) -> str:
    """The digest of a row's values, in _COLUMNS order. Numbers are taken as
    floats: SQLite's column affinity may turn 3 into 3.0 and back."""
    canonical = [float(v) if isinstance(v, (int, float)) else v for v in values]
    return hashlib.sha256(json.dumps(canonical).encode()).hexdigest()


def case_key(description: dict) -> str:
    return json.dumps(description, sort_keys=True)


class ResultsDB:
    def __init__(self, path: Path, warn=None):
        self.path = Path(path)
        self.warn = warn or (lambda message: None)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self._sound():
                self._set_aside()
            with closing(self._connect()) as db, db:
                db.execute(_SCHEMA)
                columns = [row[1] for row in db.execute("PRAGMA table_info(measurements)")]
                if "digest" not in columns:   # a database of an older harness: its rows have no digest
                    db.execute("ALTER TABLE measurements ADD COLUMN digest TEXT")
        except (sqlite3.Error, OSError) as exc:
            raise ResultsDBError(f"cannot open the results database {self.path}: {exc}") from None

    def _sound(self) -> bool:
        """Whether SQLite finds the file whole (a quick check, once per open)."""
        if not self.path.exists():
            return True
        try:
            with closing(sqlite3.connect(self.path, timeout=60)) as db:
                return db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        except sqlite3.DatabaseError as exc:
            if "locked" in str(exc):
                return True
            return False

    def _set_aside(self) -> None:
        aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
        os.replace(self.path, aside)
        for suffix in ("-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.warn(f"the results database {self.path} is damaged (SQLite's quick_check fails); moved it to "
                  f"{aside.name} and started a new one: its measurements will be made again")

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
        now = time.time()
        values = [(scope.target, scope.library, scope.artefact, key, case_id, m.kernel, name, m.cores,
                   m.status, m.unit, m.latency, m.work, m.max_ulp, m.message, now) for name, m in kept]
        try:
            with closing(self._connect()) as db, db:
                db.executemany(f"INSERT OR REPLACE INTO measurements ({', '.join(_COLUMNS)}, digest) "
                               f"VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})",
                               [(*row, row_digest(row)) for row in values])
        except sqlite3.Error as exc:
            raise ResultsDBError(f"cannot write the results database {self.path}: {exc}") from None

    def lookup(self, scope: Scope, key: str) -> dict[tuple[int, int], Measurement]:
        """Every stored variant of a case in this scope, by (kernel, cores); the
        newest wins. A row that does not match its digest is left out (with a
        warning), so its variant is measured again."""
        where = "target = ? AND library = ? AND case_key = ?"
        args = [scope.target, scope.library, key]
        if scope.artefact is not None:
            where += " AND artefact = ?"
            args.append(scope.artefact)
        try:
            with closing(self._connect()) as db:
                found = db.execute(f"SELECT {', '.join(_COLUMNS)}, digest "
                                   f"FROM measurements WHERE {where} ORDER BY recorded", args).fetchall()
        except sqlite3.Error as exc:
            raise ResultsDBError(f"cannot read the results database {self.path}: {exc}") from None
        kept = {}
        for row in found:
            values, digest = row[:-1], row[-1]
            if digest != row_digest(values):
                if digest is not None:   # rows of an older harness have none: measured again, silently
                    self.warn(f"a row of the results database {self.path} is damaged (case {values[4]}, "
                              f"kernel {values[6]}, {values[7]} cores: its values do not match their digest); "
                              f"measuring it again")
                continue
            kept[values[5], values[7]] = Measurement(values[5], values[7], *values[8:14])
        return kept


def prune(path: Path, kept_artefacts: set[str], before: float, dry_run: bool = False) -> int:
    """Deletes the rows recorded before `before` whose build artefact is not
    in kept_artefacts (a build the cache no longer holds), then compacts the
    file; only counts them with dry_run. Returns their number. The caller
    holds the cache exclusively: no run has the database open. A file SQLite
    cannot read is left as it is (ResultsDBError)."""
    where = "recorded < ? AND artefact NOT IN (SELECT value FROM json_each(?))"
    args = (before, json.dumps(sorted(kept_artefacts)))
    try:
        with closing(sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=rw", uri=True, timeout=60)) as db:
            if dry_run:
                return db.execute(f"SELECT COUNT(*) FROM measurements WHERE {where}", args).fetchone()[0]
            with db:
                removed = db.execute(f"DELETE FROM measurements WHERE {where}", args).rowcount
            if removed:
                db.execute("VACUUM")   # SQLite keeps the freed pages otherwise: the file would not shrink
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return removed
    except sqlite3.Error as exc:
        raise ResultsDBError(f"cannot prune the results database {path}: {exc}") from None
