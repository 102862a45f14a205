"""Faults while running: two sessions sharing one cache at the same time, a
session killed with SIGKILL in the middle of a run, a full disk. None may
leave a damaged cache entry or a half-written report.

To repeat them (issue 11 asks for 20 in a row):
    for i in $(seq 20); do .venv/bin/pytest tests/test_faults.py -q -p no:xdist || break; done
"""
import csv
import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from golden.bundle import BundleCache
from tests.test_mutations import ROOT

SLICE = "maxpool and fp32"   # 60 variants, 20 cases, one build


def suite(cache: Path, reports: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    # Some of these suites are killed, which leaves their scratch runs behind:
    # keep those inside the test's own directory.
    env["TMPDIR"] = str(cache.parent)
    return subprocess.Popen([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "pool", "-q",
                             "-p", "no:xdist", "--target", "host", "-k", SLICE, "--ptl-cache", str(cache),
                             "--reports-dir", str(reports)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def cache_is_sound(cache: Path) -> int:
    """Every complete build directory has its runner; every bundle loads.
    Returns the number of bundles."""
    for build in (cache / "builds").iterdir() if (cache / "builds").exists() else ():
        if build.is_dir() and not build.name.startswith("."):
            assert (build / ".complete").exists(), f"incomplete build directory left as an entry: {build}"
    bundles = list((cache / "golden").rglob("*.bundle"))
    for path in bundles:
        BundleCache.load_entry(path)   # raises on a damaged entry
    return len(bundles)


def report_rows(reports: Path) -> int:
    with open(reports / "results.csv") as f:
        return sum(1 for _ in csv.DictReader(f))


def test_two_sessions_sharing_a_cache_at_once_both_pass_and_damage_nothing(tmp_path):
    cache = tmp_path / "cache"
    runs = [suite(cache, tmp_path / f"reports{i}") for i in range(2)]
    outputs = [run.communicate(timeout=600)[0] for run in runs]
    for run, output in zip(runs, outputs):
        assert run.returncode == 0, output[-2000:]
        assert "60 passed" in output
    assert cache_is_sound(cache) == 20
    assert report_rows(tmp_path / "reports0") == report_rows(tmp_path / "reports1") == 60


def test_a_session_killed_mid_run_leaves_no_half_entry_and_no_half_report(tmp_path):
    cache, reports = tmp_path / "cache", tmp_path / "reports"
    first = suite(cache, reports)
    assert first.wait(timeout=600) == 0
    old_report = (reports / "results.csv").read_bytes()

    # Kill a fresh session at three moments: while it builds (a staging
    # directory exists), while it writes references and runs cases (some
    # bundles exist), and while it reports (all bundles exist).
    cache2 = tmp_path / "cache2"
    moments = {
        "building": lambda: any(p.name.startswith(".") for p in (cache2 / "builds").glob(".*") if p.is_dir()),
        "running cases": lambda: len(list((cache2 / "golden").rglob("*.bundle"))) >= 5,
        "reporting": lambda: len(list((cache2 / "golden").rglob("*.bundle"))) >= 20,
    }
    for moment, reached in moments.items():
        victim = suite(cache2, reports)
        deadline = time.monotonic() + 300
        while not reached() and victim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if moment != "reporting":  # the last one may finish first; the others must be caught alive
            assert reached() and victim.poll() is None, f"the session was not caught while {moment}"
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=60)
        cache_is_sound(cache2)
        current = (reports / "results.csv").read_bytes()
        # The old report whole, or (killed after it was replaced) a complete new one.
        assert current == old_report or report_rows(reports) == 60, f"killed while {moment}"

    again = suite(cache2, reports)
    output = again.communicate(timeout=600)[0]
    assert again.returncode == 0 and "60 passed" in output, output[-2000:]
    assert report_rows(reports) == 60 and cache_is_sound(cache2) == 20


class _FullDisk:
    """A file object whose writes fail as on a full disk."""

    def __init__(self, fd, *args, **kwargs):
        os.close(fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_is_one_classified_failure_and_leaves_no_cache_entry(tmp_path, monkeypatch):
    from harness import failures
    from harness import files as files_module
    from harness.session import Session
    from harness.target import DEFAULT_LIBRARY
    from harness.targets.host import HostTarget
    from harness.catalogue.pool import MAXPOOL

    session = Session(HostTarget(), DEFAULT_LIBRARY, tmp_path)
    case = next(c for c in MAXPOOL.cases() if c.dtype == "fp32")
    variants = [v for v in MAXPOOL.variants() if v.case == case]
    session.artefact_for(case.dtype)   # built first: only the golden cache's writes fail below
    monkeypatch.setattr(files_module.os, "fdopen", _FullDisk)
    results = session.results_for(case, variants)
    for result in results.values():
        assert result.failure.kind == failures.ENVIRONMENT
        assert "cannot write the golden cache: No space left on device" in result.failure.message
    assert not [p for p in (tmp_path / "golden").rglob("*") if p.is_file()]   # no entry, no temporary file

    monkeypatch.undo()   # space again: the same session now passes
    session._results.clear()
    assert all(r.passed for r in session.results_for(case, variants).values())


def test_reports_that_cannot_be_written_are_one_line_and_a_failing_status(tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    reports.chmod(0o500)   # no writes: what a full disk or a read-only mount gives
    if os.access(reports, os.W_OK):  # root ignores the mode
        reports.chmod(0o700)
        (tmp_path / "reports").rmdir()
        reports = Path("/proc/ptl-reports")   # a directory that can never be created
    run = suite(tmp_path / "cache", reports)
    output = run.communicate(timeout=600)[0]
    assert run.returncode == 1, output[-2000:]
    assert f"ptl: cannot write the reports in {reports}" in output
    assert "Traceback" not in output and "INTERNALERROR" not in output
