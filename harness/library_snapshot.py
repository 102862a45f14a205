"""The library under test as it was when the run started.

A run builds its runner from a copy of the library's files, read once at the
start, not from the checkout: an edit made while the suite runs (the next
change, a `git stash pop`) would otherwise reach the builds made later in the
run, by a worker at its first case of a format or a family's first -k case,
and the report would mix two libraries without saying so. The copy is an
entry of the build cache's kind under <cache>/library, keyed by the digest
of what it holds (written under a lock through a staging directory, its
files' digests checked on first use, a damaged copy written again): the
same library gives the same directory, run after run, so the build and
object caches (keyed by content, with the library's directory as a
placeholder) hit as before.

    root = snapshot_root(path, cache, warn)    # or None: build the path itself
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

from harness import cache_layout, cache_prune
from harness.build_inputs import LibrarySource
from harness.buildcache import BuildCache
from harness.failures import CaseFailure


def _files(library: LibrarySource) -> list[tuple[str, bytes]]:
    """Every file under the library's include and source directories, by its
    path relative to the library's root, each read once: the copy holds
    exactly the bytes its key was made of."""
    found: dict[str, bytes] = {}
    for directory in library.digest_roots:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                found.setdefault(path.relative_to(library.root).as_posix(), path.read_bytes())
    return sorted(found.items())


def take(library: LibrarySource, cache: Path, warn: Callable[[str], None]) -> LibrarySource:
    """The copy of the library under cache/library, written unless a sound
    one is there already (a damaged one is said through warn and written
    again); raises OSError when it cannot be."""
    cache_prune.hold(cache)   # the controller takes its copy before any Session
    files = _files(library)
    digest = hashlib.sha256()
    for name, body in files:
        digest.update(f"{name}:{len(body)}:".encode())
        digest.update(body)

    def write(out: Path) -> None:
        for name, body in files:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(body)

    copies = BuildCache(cache, warn, entries=cache_layout.LIBRARY)
    return LibrarySource.at(copies.get({"library": digest.hexdigest()}, write))


def snapshot_root(library: Path, cache: Path, warn: Callable[[str], None]) -> Path | None:
    """Where the snapshot of the library at `library` is, under the cache;
    None where it is not a checkout (its build then fails and says why) or
    the copy cannot be written (said through warn: the run builds the
    checkout itself)."""
    try:
        source = LibrarySource.at(library)
    except CaseFailure:
        return None
    try:
        return take(source, cache, warn).root
    except OSError as exc:
        warn(f"the library could not be copied for the run ({exc}); it is built where it is, so an edit "
             f"during the run reaches the builds made after it")
        return None
