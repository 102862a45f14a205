"""Caches verify what they serve (issue 22): every kind of cache entry records
the digest of its bytes and is checked when used. A damaged entry is rebuilt
or recomputed with a one-line warning, never trusted, never a traceback.

The end-to-end test flips one byte in each kind of entry in turn (the
runner, contract.json, a cached object, a golden bundle, a results-database
row) and runs the same slice again: it must repair the entry and pass.
"""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from golden.bundle import BundleCache
from harness.buildcache import BuildCache, ObjectCache, ObjectStore, entry_damage
from harness.results_db import Measurement, ResultsDB, Scope

ROOT = Path(__file__).resolve().parent.parent
SLICE = "maxpool and fp32"   # 60 variants, 20 cases, one host build


def flip(path: Path, offset: int | None = None) -> None:
    data = bytearray(path.read_bytes())
    at = len(data) // 2 if offset is None else offset
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def run_slice(cache: Path, reports: Path) -> tuple[subprocess.CompletedProcess, dict]:
    # its objects in its own cache, where this test damages them (not tests/conftest.py's shared store)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST") and k != "PTL_OBJECTS_DIR"}
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "pool", "-q",
                             "-p", "no:xdist", "-p", "no:randomly", "--target", "host", "-k", SLICE,
                             "--ptl-cache", str(cache), "--reports-dir", str(reports)],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    summary = json.loads((reports / "summary.json").read_text()) if (reports / "summary.json").exists() else {}
    return result, summary


def only_build(cache: Path) -> Path:
    builds = [p for p in (cache / "builds").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(builds) == 1, builds
    return builds[0]


def db_rows(cache: Path) -> list[tuple]:
    with sqlite3.connect(cache / "results.sqlite") as db:
        return db.execute("SELECT case_id, kernel, cores, latency FROM measurements ORDER BY case_id").fetchall()


def test_a_flipped_byte_in_each_kind_of_entry_is_repaired_by_the_next_run(tmp_path):
    cache = tmp_path / "cache"
    first, summary = run_slice(cache, tmp_path / "r0")
    assert first.returncode == 0 and "60 passed" in first.stdout, first.stdout[-2000:]
    assert summary["cache_repairs"] == []

    def runner_elf(c):   # the host target's executable; runner.elf on the embedded targets
        return only_build(c) / "runner"

    def contract(c):
        return only_build(c) / "contract.json"

    def cached_object(c):
        return sorted((c / "objects").glob("*.o"))[0]

    def bundle(c):
        return sorted((c / "golden").rglob("*.bundle"))[0]

    damages = {"the build cache entry": [runner_elf, contract],
               "the object cache entry": [cached_object],
               "the golden cache entry": [bundle]}
    for number, (kind, where) in enumerate([(k, w) for k, ws in damages.items() for w in ws], start=1):
        if where is cached_object:   # objects are read when a build is made: damage the build too
            flip(runner_elf(cache))
        path = where(cache)
        flip(path)
        result, summary = run_slice(cache, tmp_path / f"r{number}")
        assert result.returncode == 0 and "60 passed" in result.stdout, (where.__name__, result.stdout[-3000:])
        assert "Traceback" not in result.stdout + result.stderr
        said = [line for line in summary["cache_repairs"] if line.startswith(kind)]
        assert said, (where.__name__, summary["cache_repairs"])
        assert all("\n" not in line for line in summary["cache_repairs"])
        assert f"ptl warning: {said[0]}" in result.stdout
        # repaired on disk: the next use finds every entry sound
        assert entry_damage(only_build(cache)) is None
        if where is bundle:
            BundleCache.load_entry(path)

    # A results-database row whose value changed under it: the regression
    # stores the variant again, and the row is whole again afterwards.
    before = db_rows(cache)
    with sqlite3.connect(cache / "results.sqlite") as db:
        db.execute("UPDATE measurements SET latency = latency + 1 WHERE rowid = (SELECT min(rowid) FROM "
                   "measurements)")
    warnings: list[str] = []
    database = ResultsDB(cache / "results.sqlite", warn=warnings.append)
    assert not _all_rows_sound(database, cache)
    assert len(warnings) == 1 and "do not match their digest" in warnings[0]
    result, _ = run_slice(cache, tmp_path / "r_db")
    assert result.returncode == 0 and "60 passed" in result.stdout
    warnings.clear()
    assert _all_rows_sound(ResultsDB(cache / "results.sqlite", warn=warnings.append), cache)
    assert not warnings and len(db_rows(cache)) == len(before)


def _all_rows_sound(database: ResultsDB, cache: Path) -> bool:
    """Whether every stored row comes back from lookup (a damaged one does not)."""
    with sqlite3.connect(cache / "results.sqlite") as db:
        scopes = db.execute("SELECT DISTINCT target, library, artefact, case_key FROM measurements").fetchall()
        total = db.execute("SELECT count(*) FROM measurements").fetchone()[0]
    found = sum(len(database.lookup(Scope(t, lib, art), key)) for t, lib, art, key in scopes)
    return found == total


# ---- each cache on its own ---------------------------------------------------------------

def test_a_damaged_build_entry_is_rebuilt_once_with_a_warning_and_checked_once_per_session(tmp_path):
    warnings: list[str] = []
    cache = BuildCache(tmp_path, warn=warnings.append)
    builds = []

    def build(out: Path) -> None:
        builds.append(out)
        (out / "runner.elf").write_bytes(b"\x7fELF" + bytes(range(200)))

    path = cache.get({"k": 1}, build)
    assert json.loads((path / "digests.json").read_text()).keys() == {"runner.elf", "material.json"}
    flip(path / "runner.elf")
    assert cache.get({"k": 1}, build) == path and len(builds) == 1   # this session checked it already
    later = BuildCache(tmp_path, warn=warnings.append)                # a new session checks it
    assert later.get({"k": 1}, build) == path and len(builds) == 2
    assert warnings == [f"the build cache entry {path} is damaged: runner.elf does not match its recorded "
                        f"digest; rebuilding it"]
    assert entry_damage(path) is None and later.repaired == 1


def test_an_entry_without_digests_or_with_a_missing_file_is_rebuilt(tmp_path):
    warnings: list[str] = []

    def build(out: Path) -> None:
        (out / "contract.json").write_text("{}")

    path = BuildCache(tmp_path).get({"k": 2}, build)
    (path / "contract.json").unlink()
    BuildCache(tmp_path, warn=warnings.append).get({"k": 2}, build)
    (path / "digests.json").unlink()
    BuildCache(tmp_path, warn=warnings.append).get({"k": 2}, build)
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "contract.json is missing; rebuilding it",
        "it has no digests.json (made by an older harness, or damaged); rebuilding it"]


def test_garbage_contract_that_matches_its_digest_is_rebuilt_not_a_traceback(tmp_path):
    """A contract.json written as garbage by the build itself (so its digest
    matches): the session rebuilds the entry once, with a warning."""
    from harness.session import Artefact, Session
    from harness.target import DEFAULT_LIBRARY
    from harness.targets.host import HostTarget

    session = Session(HostTarget(), DEFAULT_LIBRARY, tmp_path)
    material = session.material_for("bf16")

    def garbage(out: Path) -> None:
        (out / "units.json").write_text('{"built": [], "failed": {}, "library_failed": {}}')
        (out / "contract.json").write_text("garbage{")
    path = session.builds.get(material, garbage)
    artefact = session._build("bf16")
    assert isinstance(artefact, Artefact) and artefact.path == path and artefact.contract.ops
    assert [w.split(": ", 1)[1] for w in session.cache_warnings] == [
        "its units.json or contract.json does not parse (JSONDecodeError: Expecting value: line 1 column 1 "
        "(char 0)); rebuilding it"]


def test_a_damaged_object_is_compiled_again_with_a_warning(tmp_path):
    source = tmp_path / "a.c"
    source.write_text("int a(void) { return 1; }\n")
    warnings: list[str] = []
    calls = []

    def run(argv):
        calls.append(argv)
        Path(argv[-1]).write_bytes(b"OBJECT-BYTES" * 10)
        return subprocess.CompletedProcess(argv, 0, "", "")

    store = ObjectStore(tmp_path / "objects", "cc-1", warn=warnings.append)
    cache = ObjectCache(store, [tmp_path], {})
    obj = tmp_path / "a.o"
    cache.compile(["cc", "-c", str(source), "-o", str(obj)], source, obj, run)
    cache.compile(["cc", "-c", str(source), "-o", str(obj)], source, obj, run)
    assert len(calls) == 1
    stored = next((tmp_path / "objects").glob("*.o"))
    flip(stored, len(stored.read_bytes()) - 3)
    obj.unlink()
    cache.compile(["cc", "-c", str(source), "-o", str(obj)], source, obj, run)
    assert len(calls) == 2 and obj.read_bytes() == b"OBJECT-BYTES" * 10
    assert len(warnings) == 1 and "of a.c) is damaged: its bytes do not match their recorded digest" in warnings[0]


def test_a_damaged_bundle_is_recomputed_with_a_warning(tmp_path):
    from tests.test_bundle import DESCRIPTION, Computations

    warnings: list[str] = []
    cache, compute = BundleCache(tmp_path, warn=warnings.append), Computations()
    cache.get(DESCRIPTION, compute)
    path = cache.path_of(DESCRIPTION)
    flip(path, len(path.read_bytes()) - 40)   # inside the npz data, where zip's own CRC may not look
    cache.get(DESCRIPTION, compute)
    assert compute.calls == 2 and cache.repaired == 1
    assert warnings == [f"the golden cache entry {path} is damaged: its bytes do not match their recorded "
                        f"digest; computing it again"]
    BundleCache.load_entry(path)


def _store_two(database: ResultsDB) -> Scope:
    scope = Scope("host", "lib", "art")
    database.store(scope, "case-a", "case-a-id", [("naive", Measurement(0, 1, "passed", "ns", 1234, 1234, 0.0)),
                                                  ("fast", Measurement(1, 2, "passed", "ns", 777, 1500, 1.0))])
    return scope


def test_a_results_row_with_a_flipped_byte_is_not_believed_and_is_replaced_by_the_next_store(tmp_path):
    path = tmp_path / "results.sqlite"
    scope = _store_two(ResultsDB(path))
    data = path.read_bytes()
    at = data.index(b"naive")   # the kernel name of one row, in the file itself
    flip(path, at)
    warnings: list[str] = []
    found = ResultsDB(path, warn=warnings.append).lookup(scope, "case-a")
    assert list(found) == [(1, 2)]
    assert len(warnings) == 1 and "case case-a-id" in warnings[0] and "measuring it again" in warnings[0]
    _store_two(ResultsDB(path))
    warnings.clear()
    assert set(ResultsDB(path, warn=warnings.append).lookup(scope, "case-a")) == {(0, 1), (1, 2)}
    assert not warnings


def test_a_results_database_file_sqlite_cannot_read_is_moved_aside_with_a_warning(tmp_path):
    path = tmp_path / "results.sqlite"
    _store_two(ResultsDB(path))
    data = bytearray(path.read_bytes())
    data[:16] = b"not a database!!"
    path.write_bytes(bytes(data))
    warnings: list[str] = []
    database = ResultsDB(path, warn=warnings.append)
    assert database.lookup(Scope("host", "lib", "art"), "case-a") == {}
    assert len(warnings) == 1 and "moved it to results.sqlite.damaged-" in warnings[0]
    assert len(list(tmp_path.glob("results.sqlite.damaged-*"))) == 1


@pytest.mark.parametrize("damage", ["page", "header"])
def test_a_results_database_damage_never_escapes_as_a_traceback(tmp_path, damage):
    path = tmp_path / "results.sqlite"
    scope = _store_two(ResultsDB(path))
    data = bytearray(path.read_bytes())
    if damage == "page":
        data[len(data) - 100:] = b"\xff" * 100
    else:
        data[100:108] = b"\xff" * 8
    path.write_bytes(bytes(data))
    database = ResultsDB(path, warn=lambda m: None)   # moved aside, or rows left out: never raises
    assert set(database.lookup(scope, "case-a")) <= {(0, 1), (1, 2)}
