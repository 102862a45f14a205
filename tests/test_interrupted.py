"""A run stopped by Ctrl-C (SIGINT) or SIGTERM says so: summary.json and the
JUnit testsuite carry interrupted: true with the selected, run and not-run
counts, the terminal's last line says it, and nothing downstream (merge,
baseline update) takes the reports for a whole run."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.pause_plugin import PAUSE_LINE

ROOT = Path(__file__).resolve().parent.parent
SLICE = "pool and fp32"          # 120 variants on host, one build


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def _interrupted_run(tmp_path: Path, cache: Path, signum: int, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    """A host run of SLICE, sent signum once 3 tests have passed: the run
    pauses there until the signal comes (tests/pause_plugin.py), so the
    signal never arrives after the last test, however fast the machine."""
    reports = tmp_path / "reports"
    # Unbuffered: the pause line arrives as it is printed, not 8 KiB at a time.
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}, "PYTHONUNBUFFERED": "1",
           "PTL_TEST_PAUSE_AFTER": "3"}
    run = subprocess.Popen([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "pool", "-p", "no:xdist",
                            "-v", "-p", "no:randomly", "-p", "tests.pause_plugin", "--target", "host", "-k", SLICE,
                            "--ptl-cache", str(cache), "--reports-dir", str(reports), *extra],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    lines = []
    deadline = time.monotonic() + 600
    for line in run.stdout:
        lines.append(line)
        if line.strip() == PAUSE_LINE or time.monotonic() > deadline:
            break
    os.killpg(run.pid, signum)   # the whole group, as a terminal's Ctrl-C does
    rest, _ = run.communicate(timeout=120)
    return subprocess.CompletedProcess(run.args, run.returncode, "".join(lines) + rest, ""), reports


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_says_so_in_every_report_and_on_its_last_line(tmp_path, cache, signum):
    result, reports = _interrupted_run(tmp_path, cache, signum)
    assert result.returncode == 2, result.stdout[-3000:]             # pytest's "interrupted"
    summary = json.loads((reports / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["selected"] == 120 and 3 <= summary["run"] < 120
    assert summary["not_run"] == 120 - summary["run"] and sum(summary["outcomes"].values()) == summary["run"]
    suite = ET.parse(reports / "junit.xml").getroot()
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties == {"interrupted": "true", "selected": "120", "run": str(summary["run"]),
                          "not_run": str(summary["not_run"])}
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith(f"ptl: INTERRUPTED: {summary['run']} of 120 selected tests ran"), result.stdout[-2000:]
    # In one process the counters are real; they are never zeros standing for "unknown".
    cache_lines = [line for line in result.stdout.splitlines() if line.startswith("ptl cache:")]
    assert cache_lines and "runner invocations 0" not in cache_lines[0]
    assert "Traceback" not in result.stdout and "INTERNALERROR" not in result.stdout

    # Downstream, the reports are refused as a whole run, in one line.
    baseline = tmp_path / "host.txt"
    update = subprocess.run([sys.executable, "-m", "harness", "baseline", "update", "--target", "host",
                             "--from", str(reports / "results.csv"), "--out", str(baseline)],
                            cwd=ROOT, capture_output=True, text=True)
    assert update.returncode != 0 and not baseline.exists()
    assert update.stderr.strip().count("\n") == 0 and "interrupted" in update.stderr, update.stderr
    assert "Traceback" not in update.stderr


def test_a_whole_run_says_it_is_whole(tmp_path, cache):
    reports = tmp_path / "reports"
    run = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "pool", "-p", "no:xdist", "-q",
                          "--target", "host", "-k", "maxpool and fp32 and C2", "--ptl-cache", str(cache),
                          "--reports-dir", str(reports)], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:]
    summary = json.loads((reports / "summary.json").read_text())
    with open(reports / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert summary["interrupted"] is False and summary["not_run"] == 0
    assert summary["selected"] == summary["run"] == len(rows) > 0
    assert "INTERRUPTED" not in run.stdout
