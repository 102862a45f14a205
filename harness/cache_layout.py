"""The cache's layout, stated once: where it is and the stores under it.

Everything runs keep between them lives under one directory (--ptl-cache,
else PTL_CACHE_DIR, else .cache/ptl in the checkout). Each store is named
here, read by the code that owns it and by `ptl cache`, which lists and
prunes them (harness/cache_prune.py).
"""
from __future__ import annotations

import os
from pathlib import Path

BUILDS = "builds"               # BuildCache: a runner per library, target and format
LIBRARY = "library"             # library_snapshot: the copies of the library runs built from
OBJECTS = "objects"             # ObjectCache: compiled objects, by content
GOLDEN = "golden"               # BundleCache: the PyTorch references, by content
RESULTS_DB = "results.sqlite"   # ResultsDB: the measurements runs and the tuner reuse, by build
IN_USE_LOCK = ".in-use.lock"    # held shared by every process that uses the cache (cache_prune.hold)

DIRECTORY_STORES = (BUILDS, LIBRARY)   # an entry is a directory, beside its <name>.lock
FILE_STORES = (OBJECTS, GOLDEN)        # an entry is a file (golden: two levels down)

CHECKOUT = Path(__file__).resolve().parent.parent


def default_root() -> Path:
    """The cache when no --ptl-cache is given: PTL_CACHE_DIR, else .cache/ptl in the checkout."""
    return Path(os.environ.get("PTL_CACHE_DIR") or CHECKOUT / ".cache" / "ptl")
