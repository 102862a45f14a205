"""The library under test as it was when the run started.

A run builds its runner from a copy of the library's files, read once at the
start, not from the checkout: an edit made while the suite runs (the next
change, a `git stash pop`) would otherwise reach the builds made later in the
run, by a worker at its first case of a format or a family's first -k case,
and the report would mix two libraries without saying so. The copy is named
by the digest of what it holds, under the cache: the same library gives the
same directory, run after run, so the build and object caches (keyed by
content, with the library's directory as a placeholder) hit as before.

    snapshot = take(LibrarySource.at(path), cache / "library")
    root = snapshot_root(path, cache / "library", warn)    # or None: build the path itself
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from harness.build_inputs import LibrarySource
from harness.buildcache import file_lock
from harness.failures import CaseFailure

COMPLETE = ".complete"   # written last: a directory without it is not used


def _files(library: LibrarySource) -> list[tuple[str, bytes]]:
    """Every file under the library's include and source directories, by its
    path relative to the library's root, each read once."""
    found: dict[str, bytes] = {}
    for directory in library.digest_roots:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                found.setdefault(path.relative_to(library.root).as_posix(), path.read_bytes())
    return sorted(found.items())


def take(library: LibrarySource, store: Path) -> LibrarySource:
    """The library at store/<digest of its files>, written there unless a
    complete copy is there already; raises OSError when it cannot be."""
    files = _files(library)
    digest = hashlib.sha256()
    for name, body in files:
        digest.update(f"{name}:{len(body)}:".encode())
        digest.update(body)
    final = Path(store) / digest.hexdigest()[:24]
    with file_lock(final.with_name(final.name + ".lock")):   # parallel runs of one library
        if not (final / COMPLETE).is_file():
            shutil.rmtree(final, ignore_errors=True)   # an incomplete copy left by a killed run
            partial = Path(tempfile.mkdtemp(dir=final.parent, prefix=".partial-"))
            try:
                for name, body in files:
                    (partial / name).parent.mkdir(parents=True, exist_ok=True)
                    (partial / name).write_bytes(body)
                (partial / COMPLETE).write_text(f"{library.root}\n")
                os.rename(partial, final)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
    return LibrarySource.at(final)


def snapshot_root(library: Path, store: Path, warn: Callable[[str], None]) -> Path | None:
    """Where the snapshot of the library at `library` is; None where it is
    not a checkout (its build then fails and says why) or the copy cannot be
    written (said through warn: the run builds the checkout itself)."""
    try:
        source = LibrarySource.at(library)
    except CaseFailure:
        return None
    try:
        return take(source, store).root
    except OSError as exc:
        warn(f"the library could not be copied for the run ({exc}); it is built where it is, so an edit "
             f"during the run reaches the builds made after it")
        return None
