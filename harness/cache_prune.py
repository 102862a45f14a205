"""What the cache holds, and the removal of what no run has used lately.

    python -m harness cache [--ptl-cache DIR]
    python -m harness cache prune [--unused-for DAYS] [--dry-run] [--ptl-cache DIR]

(`./ptl cache ...` does the same.) The cache (`--ptl-cache`, else
PTL_CACHE_DIR, else .cache/ptl beside the harness) keeps four stores of
entries named by their content, none of which a run ever removes: builds/
(a runner per library, target and format), library/ (the copies of the
library the runs built from), objects/ (compiled objects) and golden/
(PyTorch references). Each library edit adds a copy and its builds, so on a
developer's machine or a farm node they grow without bound.

Every use stamps an entry (its modification time): a build or a library copy
when a session first uses it, an object or a golden bundle at each hit. So
"unused for DAYS" counts from the last run that needed an entry, not from
when it was made. `cache` lists each store: entries, size, and how much of
it a prune would remove; `cache prune` removes the entries unused for DAYS
(default 30; 0 removes every entry), each renamed aside before it is
deleted, so that an interrupted prune leaves no half entry under its name.

Every process that uses the cache holds its lock shared (hold(): Session,
the library snapshot), and a prune takes it exclusively without waiting: a
prune never removes an entry under a running session; while one runs, it
says so and removes nothing. Holding the lock, it also removes what killed
runs left half-written (no writer can own it then).

The results database (results.sqlite: the measurements the regression
records and the autotuner reuses, about 1 kB each) is pruned by the same
rule, through the builds: a measurement goes when it was recorded DAYS ago
or more and its build (its artefact, a builds/ entry's name) is gone or
goes in this prune. The measurements of a build in use stay, whatever
their age. The file is then compacted (SQLite's VACUUM). Objects kept in
PTL_OBJECTS_DIR, outside the cache, are not this cache's.

Exit status: 0; 1 when a run is using the cache (prune), or when the
results database cannot be read (the rest is pruned); 2 for bad input, in
one line.
"""
from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

from harness import results_db
from harness.cache_layout import BUILDS, DIRECTORY_STORES, FILE_STORES, IN_USE_LOCK, RESULTS_DB, default_root
from harness.option_values import OptionValueError, number
from harness.stdout_lines import print_lines

DAY = 86400.0

_held: dict[Path, IO] = {}


class CacheError(Exception):
    """Input that names no usable cache: one line for the user."""


def hold(cache: Path) -> None:
    """Marks this process as a user of the cache until it exits (a shared
    lock on the cache's lock file, taken once per process): a prune then
    removes nothing. Waits while a prune runs. A cache that cannot be
    written, or locked, is left to the stores' own warnings."""
    root = Path(cache).resolve()
    if root in _held:
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
        handle = open(root / IN_USE_LOCK, "a")
    except OSError:   # an unwritable cache
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_SH)
    except OSError:   # a file system without locks
        handle.close()
        return
    _held[root] = handle


@dataclass(frozen=True)
class Entry:
    store: str
    path: Path
    size: int
    last_used: float    # seconds since the epoch: the entry's modification time
    leftover: bool      # a staging directory or temporary file of a run that was killed


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _entry(store: str, path: Path) -> Entry:
    return Entry(store, path, _size(path), path.stat().st_mtime, path.name.startswith("."))


def entries(cache: Path) -> Iterator[Entry]:
    """Every entry and leftover of the four stores (lock files are not
    entries: a prune sweeps those whose entry is gone)."""
    for store in DIRECTORY_STORES:
        root = cache / store
        for path in sorted(root.iterdir()) if root.is_dir() else []:
            if path.suffix != ".lock":
                yield _entry(store, path)
    for store in FILE_STORES:
        root = cache / store
        found = sorted(root.rglob("*")) if root.is_dir() else []
        for path in found:
            if path.is_file():
                yield _entry(store, path)


def _prunable(entry: Entry, before: float) -> bool:
    return entry.leftover or entry.last_used < before


def _results(cache: Path, found: list[Entry], before: float, dry_run: bool) -> tuple[int, int, int]:
    """(the measurements a prune removes, or with dry_run would: recorded
    before the cut, of a build it does not keep among the entries found; the
    database's size before, after). A build's name is its measurements'
    artefact."""
    kept = {e.path.name for e in found if e.store == BUILDS and not _prunable(e, before)}
    size = _database_size(cache)
    removed = results_db.prune(cache / RESULTS_DB, kept, before, dry_run)
    return removed, size, size if dry_run else _database_size(cache)


def _database_size(cache: Path) -> int:
    return sum(p.stat().st_size for p in cache.glob(f"{RESULTS_DB}*") if p.is_file())


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def survey(cache: Path, unused_for_days: float, now: float) -> list[str]:
    """`cache`'s table: per store its entries, their size, and what a prune
    with unused_for_days would remove."""
    before = now - unused_for_days * DAY
    rows = {store: [0, 0, 0, 0] for store in DIRECTORY_STORES + FILE_STORES}   # entries, size, prunable, its size
    found = list(entries(cache))
    for entry in found:
        row = rows[entry.store]
        row[0] += not entry.leftover
        row[1] += entry.size
        if _prunable(entry, before):
            row[2] += 1
            row[3] += entry.size
    lines = [f"ptl cache: {cache}",
             f"{'store':<16}{'entries':>9}{'size':>13}   unused for {unused_for_days:g} days or more (a prune removes)"]
    for store, (count, size, old, old_size) in rows.items():
        lines.append(f"{store + '/':<16}{count:>9,}{_megabytes(size):>13}   {old:,} ({_megabytes(old_size)})")
    if (cache / RESULTS_DB).is_file():
        try:
            old, size, _ = _results(cache, found, before, dry_run=True)
            what = f"{old:,} measurements"
        except results_db.ResultsDBError as exc:
            size, what = _database_size(cache), str(exc)
        lines.append(f"{RESULTS_DB:<16}{'':>9}{_megabytes(size):>13}   {what}")
    return lines


def _remove(entry: Entry) -> None:
    """The entry renamed aside (a leftover's name), then deleted (its lock
    file goes in prune's sweep)."""
    aside = entry.path
    if not entry.leftover:
        aside = entry.path.with_name(f".pruned-{entry.path.name}")
        os.rename(entry.path, aside)
    if aside.is_dir():
        shutil.rmtree(aside)
    else:
        aside.unlink()


def prune(cache: Path, unused_for_days: float, now: float, dry_run: bool = False) -> tuple[list[str], int]:
    """(lines, exit status): the entries unused for unused_for_days removed
    (listed only, with dry_run); status 1, nothing removed, while a run
    holds the cache."""
    lock = cache / IN_USE_LOCK
    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return [f"ptl cache prune: a run is using {cache}; nothing removed (prune when it has ended)"], 1
        before = now - unused_for_days * DAY
        found = list(entries(cache))
        chosen = [e for e in found if _prunable(e, before)]
        verb = "would remove" if dry_run else "removed"
        lines, status = [], 0
        if (cache / RESULTS_DB).is_file():   # first: it reads which builds stay
            try:
                old, size, after = _results(cache, found, before, dry_run)
                lines.append(f"ptl cache prune: {RESULTS_DB} {verb} {old:,} measurements recorded "
                             f"{unused_for_days:g} days ago or more whose build is gone"
                             + ("" if dry_run else f", {_megabytes(size)} -> {_megabytes(after)}"))
            except results_db.ResultsDBError as exc:
                lines.append(f"ptl cache prune: {exc}; left as it is")
                status = 1
        for store in DIRECTORY_STORES + FILE_STORES:
            mine = [e for e in chosen if e.store == store]
            left = sum(e.leftover for e in mine)
            if not dry_run:
                for entry in mine:
                    _remove(entry)
            lines.append(f"ptl cache prune: {store}/ {verb} {len(mine) - left:,} entries unused for "
                         f"{unused_for_days:g} days or more"
                         + (f" and {left:,} leftovers of killed runs" if left else "")
                         + f", {_megabytes(sum(e.size for e in mine))}")
        if not dry_run:
            for store in DIRECTORY_STORES:   # lock files whose entry is gone (removed, or a failed build)
                root = cache / store
                for path in root.glob("*.lock") if root.is_dir() else []:
                    if not path.with_suffix("").exists():
                        path.unlink()
    return lines, status


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m harness cache", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", nargs="?", choices=("show", "prune"), default="show",
                        help="show (default): what each store holds; prune: remove what is unused")
    parser.add_argument("--ptl-cache", type=Path, default=None, help="the cache (default: PTL_CACHE_DIR, else .cache/ptl)")
    parser.add_argument("--unused-for", default="30", metavar="DAYS",
                        help="entries no run has used for this many days (default 30; 0: every entry)")
    parser.add_argument("--dry-run", action="store_true", help="prune: list what would be removed, remove nothing")
    return parser.parse_args(argv)


def run(args: argparse.Namespace, now: float) -> tuple[list[str], int]:
    days = number("--unused-for", args.unused_for, "a number of days, 0 or more", minimum=0)
    cache = (args.ptl_cache or default_root()).resolve()
    if cache.exists() and not cache.is_dir():
        raise CacheError(f"--ptl-cache {cache}: a file, not a cache directory")
    if not cache.is_dir():
        return [f"ptl cache: nothing cached at {cache}"], 0
    if args.action == "prune":
        return prune(cache, days, now, args.dry_run)
    return survey(cache, days, now), 0


def main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        lines, status = run(args, time.time())
    except (OptionValueError, CacheError) as exc:
        print(f"ptl cache: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"ptl cache: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print_lines(lines)
    return status
