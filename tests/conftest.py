"""One object store for the whole test session.

Most project tests run a slice of the suite in a subprocess with a cache of
their own, so each would compile lib_c from nothing. They share compiled
objects instead (PTL_OBJECTS_DIR, harness/session.py): an object's key holds
the compiler's command, the tools' versions and the bytes of everything the
compilation reads, so a test still gets exactly the objects its own
library, options and tools make; a mutant recompiles its edited source only.
Builds, golden bundles and results stay in each test's own cache, so what a
test asserts about them is unchanged. test_cache_integrity damages objects
in its own cache, and runs without the shared store.

The controller makes the directory before xdist starts its workers (they
inherit the variable) and removes it at the end. A user's own
PTL_OBJECTS_DIR is left as it is.
"""
from __future__ import annotations

import os
import shutil
import tempfile

_MADE: list[str] = []


def pytest_configure(config):
    if hasattr(config, "workerinput") or os.environ.get("PTL_OBJECTS_DIR"):
        return
    _MADE.append(tempfile.mkdtemp(prefix="ptl-test-objects-"))
    os.environ["PTL_OBJECTS_DIR"] = _MADE[0]


def pytest_unconfigure(config):
    while _MADE:
        os.environ.pop("PTL_OBJECTS_DIR", None)
        shutil.rmtree(_MADE.pop(), ignore_errors=True)
