"""A pytest plugin for tests/test_library_snapshot.py (loaded with -p
tests.edit_library_plugin): once the run has collected its tests, and before
any of them runs, it breaks the library at PTL_TEST_EDIT_LIBRARY (appends an
#error to one source), as a developer's next edit would while the suite runs.
In an xdist run it does so in the controller and in each worker, at the same
point: after the controller took its copy of the library, before any build."""
from __future__ import annotations

import os
from pathlib import Path

EDIT = "\n#error edited while the run was going on\n"


def pytest_collection_finish(session):
    library = os.environ.get("PTL_TEST_EDIT_LIBRARY")
    if not library:
        return
    source = Path(library) / "sources" / "pulp_matmul_fp32.c"
    text = source.read_text()
    if not text.endswith(EDIT):
        source.write_text(text + EDIT)
