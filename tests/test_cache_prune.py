"""`ptl cache` and `ptl cache prune` (harness/cache_prune.py): every use
stamps an entry, a prune removes what no run used for the days given (with
its lock file, and what killed runs left half-written), never while a run
holds the cache; in the results database, the old measurements of builds
that are gone."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest

from golden.bundle import BundleCache, ReferenceBundle
from harness import cache_layout, cache_prune
from harness.buildcache import BuildCache, ObjectCache, ObjectStore
from harness.results_db import Measurement, ResultsDB, Scope
from tests.test_mutations import LIBRARY, run_slice

ROOT = Path(__file__).resolve().parent.parent
DAY = 86400
SLICE = "matmul-fp32-fw-N9xM4xK8-trans_B1"


def _build(material: str, cache: Path) -> Path:
    return BuildCache(cache).get({"m": material}, lambda out: (out / "runner").write_bytes(b"elf"))


def _age(path: Path, days: float) -> None:
    stamp = time.time() - days * DAY
    os.utime(path, (stamp, stamp))


def _cache(tmp_path: Path) -> dict[str, Path]:
    """A cache with an entry of each store used 40 days ago and one used
    today, a leftover of a killed build, and a results database."""
    cache = tmp_path / "cache"
    made = {"old build": _build("old", cache), "new build": _build("new", cache)}
    made["old object"] = cache / "objects" / "0a.o"
    made["new object"] = cache / "objects" / "0b.o"
    made["old bundle"] = cache / "golden" / "ab" / "ab01.bundle"
    made["new bundle"] = cache / "golden" / "cd" / "cd01.bundle"
    for name in ("old object", "new object", "old bundle", "new bundle"):
        made[name].parent.mkdir(parents=True, exist_ok=True)
        made[name].write_bytes(b"x" * 1000)
    made["leftover"] = cache / "builds" / ".0123abcd.staging"
    made["leftover"].mkdir()
    made["database"] = cache / "results.sqlite"
    builds = {"old build": made["old build"].name, "new build": made["new build"].name}
    for case, (artefact, days) in MEASUREMENTS.items():
        with mock.patch("harness.results_db.time.time", return_value=time.time() - days * DAY):
            ResultsDB(made["database"]).store(Scope("host", "lib", builds.get(artefact, artefact)), case, case,
                                              [("k", Measurement(0, 2, "passed", "cycles", 10, 10))])
    for name in ("old build", "old object", "old bundle", "database"):
        _age(made[name], 40)
    return made


# case -> (its build, days since it was recorded); a build that is not one of
# the cache's is an artefact whose build is gone.
MEASUREMENTS = {"old build's, 40 days": ("old build", 40), "new build's, 40 days": ("new build", 40),
                "gone build's, 40 days": ("e" * 24, 40), "gone build's, today": ("f" * 24, 0)}


def _measured(database: Path) -> set[str]:
    with sqlite3.connect(database) as db:
        return {row[0] for row in db.execute("SELECT case_id FROM measurements")}


def _main(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "cache", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_prune_removes_what_no_run_used_for_the_days_given_and_keeps_the_rest(tmp_path):
    made = _cache(tmp_path)
    cache = tmp_path / "cache"

    shown = _main("--ptl-cache", str(cache), "--unused-for", "30")
    assert shown.returncode == 0, shown.stderr
    assert "builds/" in shown.stdout and "results.sqlite" in shown.stdout
    dry = _main("prune", "--dry-run", "--ptl-cache", str(cache), "--unused-for", "30")
    assert dry.returncode == 0 and "builds/ would remove 1 entries" in dry.stdout
    assert all(path.exists() for path in made.values())

    pruned = _main("prune", "--ptl-cache", str(cache), "--unused-for", "30")

    assert pruned.returncode == 0, pruned.stderr
    assert "builds/ removed 1 entries unused for 30 days or more and 1 leftovers of killed runs" in pruned.stdout
    gone = {name for name, path in made.items() if not path.exists()}
    assert gone == {"old build", "old object", "old bundle", "leftover"}
    assert not made["old build"].with_name(f"{made['old build'].name}.lock").exists()
    assert made["new build"].with_name(f"{made['new build'].name}.lock").exists()
    assert not any(p.name.startswith(".pruned-") for p in cache.rglob("*"))
    # The measurements of a build in use stay, whatever their age; of a build gone, the recent ones.
    assert _measured(made["database"]) == {"new build's, 40 days", "gone build's, today"}
    assert "results.sqlite removed 2 measurements recorded 30 days ago or more whose build is gone" in pruned.stdout
    assert "results.sqlite would remove 2 measurements" in dry.stdout and "2 measurements" in shown.stdout


def test_a_results_database_sqlite_cannot_read_is_one_line_and_left_as_it_is(tmp_path):
    made = _cache(tmp_path)
    made["database"].write_bytes(b"not a database")
    shown = _main("--ptl-cache", str(tmp_path / "cache"))
    assert shown.returncode == 0 and "cannot prune the results database" in shown.stdout, shown
    pruned = _main("prune", "--ptl-cache", str(tmp_path / "cache"), "--unused-for", "30")
    assert pruned.returncode == 1 and "Traceback" not in pruned.stderr, pruned
    assert f"ptl cache prune: cannot prune the results database {made['database']}: file is not a database; " \
           "left as it is" in pruned.stdout
    assert made["database"].read_bytes() == b"not a database" and not made["old build"].exists()


def test_every_use_of_an_entry_stamps_it(tmp_path):
    made = _cache(tmp_path)
    cache = tmp_path / "cache"
    before = time.time() - 60

    _build("old", cache)   # a new session's first use of the build
    store = ObjectStore(cache / "objects", "salt")
    source = tmp_path / "a.c"
    source.write_text("int a;\n")
    objects = ObjectCache(store, [], {})
    compiled = objects.compile(["cc", str(source)], source, tmp_path / "a.o",
                               lambda argv: ((tmp_path / "a.o").write_bytes(b"obj"),
                                             subprocess.CompletedProcess(argv, 0, "", ""))[1])
    assert compiled.returncode == 0
    [cached] = set((cache / "objects").glob("*.o")) - {made["old object"], made["new object"]}
    _age(cached, 40)
    objects.compile(["cc", str(source)], source, tmp_path / "b.o", lambda argv: None)   # a hit: not run
    golden = BundleCache(cache / "golden")
    bundle_path = golden.path_of({"case": 1})
    golden.get({"case": 1}, ReferenceBundle)
    _age(bundle_path, 40)
    golden.get({"case": 1}, lambda: None)   # a hit: not computed

    for path in (made["old build"], cached, bundle_path):
        assert path.stat().st_mtime > before, path


HOLDERS = {
    "hold": "from harness import cache_prune; cache_prune.hold(CACHE)",
    # what every run, tuner and bench makes
    "a session": "from harness.session import Session; from harness.targets import make_target; "
                 f"s = Session(make_target('host'), {str(LIBRARY)!r}, CACHE)",
}


@pytest.mark.parametrize("holder", HOLDERS)
def test_a_prune_while_a_run_holds_the_cache_removes_nothing(tmp_path, holder):
    made = _cache(tmp_path)
    cache = tmp_path / "cache"
    code = HOLDERS[holder].replace("CACHE", f"__import__('pathlib').Path({str(cache)!r})")
    holder = subprocess.Popen([sys.executable, "-c", f"import sys; {code}; print('held', flush=True); sys.stdin.read()"],
                              cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        refused = _main("prune", "--ptl-cache", str(cache), "--unused-for", "0")
        assert refused.returncode == 1
        assert refused.stdout.strip() == f"ptl cache prune: a run is using {cache.resolve()}; nothing removed " \
                                         "(prune when it has ended)"
        assert all(path.exists() for path in made.values())
    finally:
        holder.communicate("", timeout=60)

    assert _main("prune", "--ptl-cache", str(cache), "--unused-for", "0").returncode == 0
    assert not made["new build"].exists() and not made["new bundle"].exists() and not _measured(made["database"])


def test_bad_input_is_one_line_and_no_traceback(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a cache")
    for argv, said in ((["prune", "--unused-for", "nan"], "--unused-for nan: must be a number of days, 0 or more"),
                       (["--unused-for", "-1"], "--unused-for -1: must be a number of days, 0 or more"),
                       (["--ptl-cache", str(a_file)], "a file, not a cache directory")):
        result = _main(*argv)
        assert result.returncode == 2 and said in result.stderr and len(result.stderr.splitlines()) == 1, result
        assert "Traceback" not in result.stderr
    nothing = _main("--ptl-cache", str(tmp_path / "none"))
    assert nothing.returncode == 0 and "nothing cached at" in nothing.stdout
    assert not (tmp_path / "none").exists()


def test_a_run_after_a_whole_prune_builds_again_and_passes(tmp_path):
    cache = tmp_path / "cache"
    rows, texts = run_slice(LIBRARY, SLICE, tmp_path / "first", cache)
    assert rows and {r["outcome"] for r in rows} == {"passed"}, list(texts.values())[:1]
    assert any((cache / cache_layout.BUILDS).iterdir()) and any((cache / cache_layout.LIBRARY).iterdir())

    pruned = _main("prune", "--ptl-cache", str(cache), "--unused-for", "0")

    assert pruned.returncode == 0, pruned.stderr
    assert not [e for e in cache_prune.entries(cache)]
    rows, texts = run_slice(LIBRARY, SLICE, tmp_path / "again", cache)
    assert rows and {r["outcome"] for r in rows} == {"passed"}, list(texts.values())[:1]
