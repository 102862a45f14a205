"""A run builds the library as it was when the run started
(harness/library_snapshot.py): an edit made while the suite runs reaches no
build of that run, in one process or with xdist's workers."""
from __future__ import annotations

import shutil

import pytest

from harness import cache_layout, library_snapshot
from harness.build_inputs import LibrarySource
from tests.edit_library_plugin import EDIT
from tests.test_mutations import LIBRARY, run_slice

SLICE = "matmul-fp32-fw-N9xM4xK8-trans_B1"


def test_a_snapshot_holds_the_files_as_they_were_and_is_named_by_them(tmp_path):
    library = tmp_path / "lib"
    shutil.copytree(LIBRARY, library)
    said = []
    first = library_snapshot.take(LibrarySource.at(library), tmp_path / "cache", said.append)
    source = library / "sources" / "pulp_matmul_fp32.c"
    original = source.read_text()
    source.write_text(original + EDIT)

    assert (first.root / "sources" / "pulp_matmul_fp32.c").read_text() == original
    assert [s.name for s in first.sources] == [s.name for s in LibrarySource.at(library).sources]
    assert library_snapshot.take(LibrarySource.at(library), tmp_path / "cache", said.append).root != first.root
    source.write_text(original)
    assert library_snapshot.take(LibrarySource.at(library), tmp_path / "cache", said.append).root == first.root
    assert said == []


def test_a_copy_a_killed_run_left_incomplete_is_written_again(tmp_path):
    said = []
    taken = library_snapshot.take(LibrarySource.at(LIBRARY), tmp_path, said.append)
    (taken.root / ".complete").unlink()
    (taken.root / "sources" / "pulp_matmul_fp32.c").write_text("half a file")

    again = library_snapshot.take(LibrarySource.at(LIBRARY), tmp_path, said.append)

    assert again.root == taken.root and (again.root / ".complete").is_file()
    assert ((again.root / "sources" / "pulp_matmul_fp32.c").read_bytes()
            == (LIBRARY / "sources" / "pulp_matmul_fp32.c").read_bytes())
    store = tmp_path / cache_layout.LIBRARY
    assert sorted(p.name for p in store.iterdir()) == [again.root.name, f"{again.root.name}.lock"]
    assert said == []   # a copy never finished is written again without a warning


def test_a_damaged_copy_is_said_and_written_again(tmp_path):
    said = []
    taken = library_snapshot.take(LibrarySource.at(LIBRARY), tmp_path, said.append)
    (taken.root / "sources" / "pulp_matmul_fp32.c").write_text("a flipped byte, say")

    again = library_snapshot.take(LibrarySource.at(LIBRARY), tmp_path, said.append)

    assert again.root == taken.root
    assert ((again.root / "sources" / "pulp_matmul_fp32.c").read_bytes()
            == (LIBRARY / "sources" / "pulp_matmul_fp32.c").read_bytes())
    assert len(said) == 1 and "sources/pulp_matmul_fp32.c does not match its recorded digest" in said[0]


def test_a_store_that_cannot_be_written_is_said_once_and_the_checkout_is_built(tmp_path):
    in_the_way = tmp_path / "cache"
    in_the_way.write_text("a file where the cache's directory would be")
    said = []

    assert library_snapshot.snapshot_root(LIBRARY, in_the_way, said.append) is None
    assert len(said) == 1 and said[0].startswith("the library could not be copied for the run (")
    assert library_snapshot.snapshot_root(tmp_path / "not-a-library", tmp_path / "store", said.append) is None
    assert len(said) == 1 and not (tmp_path / "store").exists()   # a path that is no checkout: its build says so


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "1"]], ids=["one process", "xdist"])
def test_an_edit_during_the_run_reaches_no_build_of_it(tmp_path, monkeypatch, workers):
    library = tmp_path / "lib"
    shutil.copytree(LIBRARY, library)
    monkeypatch.setenv("PTL_TEST_EDIT_LIBRARY", str(library))

    rows, texts = run_slice(library, SLICE, tmp_path / "run", tmp_path / "cache",
                            extra=["-p", "tests.edit_library_plugin", *workers])

    assert (library / "sources" / "pulp_matmul_fp32.c").read_text().endswith(EDIT)   # the edit was made
    assert rows and {r["outcome"] for r in rows} == {"passed"}, list(texts.values())[:1]
    # and the next run builds the library as it is now
    monkeypatch.delenv("PTL_TEST_EDIT_LIBRARY")
    rows, texts = run_slice(library, SLICE, tmp_path / "next", tmp_path / "cache", extra=workers)
    assert {r["failure_class"] for r in rows} == {"build"}
    message = next(iter(texts.values()))
    assert f"{library}/sources/pulp_matmul_fp32.c" in message and "edited while the run" in message
    assert str(tmp_path / "cache") not in message   # the library's own path, not its copy's
