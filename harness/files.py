"""Files written whole or not at all."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def mark_used(path: Path) -> None:
    """Stamps a cache entry as used now (its modification time), which is
    what `ptl cache prune` reads (harness/cache_prune.py); a cache that
    cannot be written keeps its old stamps."""
    try:
        os.utime(path)
    except OSError:
        pass


def write_atomically(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename over it: a reader
    sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes files private; reports and caches are shared
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
