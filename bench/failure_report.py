"""Time pytest spends reporting N failed variants, in one run.

A mutant lib_c whose fp32 matmul tiles scale every product by 1.5 fails
every fp32 matmul variant as numeric. The same failing slice (default 2,016
variants, host target, -n 1) runs three times, and each run measures the
seconds pytest spends in its terminal summary (FAILURES section, short
summary, the ptl lines) and, for context, the seconds from its last test
report to the end of pytest (the report files, worker shutdown too):

  before   pytest's own FAILURES section and short summary, as before this
           change (--ptl-full-failures with harness/failure_summary.py's
           hooks unregistered): a scan of all reports per failure
  full     --ptl-full-failures: pytest's sections, teardown lookup indexed
  default  the new default: one line per failure, or grouped

It prints the three and the ratio before / default. Usage:
    python bench/failure_report.py [--select EXPR] [-n 1]

This file is also the pytest plugin that measures (-p bench.failure_report).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.mutants import SourceEdit, mutant_library  # noqa: E402

EVERY_FP32_MATMUL_WRONG = SourceEdit(
    "sources/pulp_mm_tiles_fp32.c",
    "#define PTL_MAC(v, u, _) PTL_ACC(u, v) += av * bv##v;",
    "#define PTL_MAC(v, u, _) PTL_ACC(u, v) += av * bv##v * 1.5f;")
SELECT = "matmul and fp32 and (N13xM11xK7 or N1xM9xK5 or N9xM4xK8 or N7xM8xK9)"   # 2,016 variants
UNINDEXED_ENV = "PTL_BENCH_UNINDEXED"   # set: pytest's summary as it was before failure_summary.py
MARK = "bench-failure-report: seconds in the terminal summary, after the last test report"
MODES = {"before": (["--ptl-full-failures"], {UNINDEXED_ENV: "1"}),
         "full": (["--ptl-full-failures"], {}),
         "default": ([], {})}

# ---- the measuring plugin (in the pytest runs) -------------------------------

_times = {"last_report": 0.0, "summary": 0.0}


class SummaryTimer:
    """Registered last with tryfirst, so outermost: failure_summary's hooks,
    pytest's sections and the ptl lines all run inside it."""

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self):
        start = time.perf_counter()
        try:
            return (yield)
        finally:
            _times["summary"] += time.perf_counter() - start


@pytest.hookimpl(trylast=True)   # after the ptl plugin has registered failure_summary's hooks
def pytest_configure(config):
    if os.environ.get(UNINDEXED_ENV):
        config.pluginmanager.unregister(name="ptl-failure-summary")
    config.pluginmanager.register(SummaryTimer(), "bench-summary-timer")


def pytest_runtest_logreport(report):
    _times["last_report"] = time.perf_counter()


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput") and _times["last_report"]:
        sys.stderr.write(f"{MARK}: {_times['summary']:.3f} {time.perf_counter() - _times['last_report']:.3f}\n")


# ---- the bench ---------------------------------------------------------------

def run(mode: str, library: Path, work: Path, select: str, workers: str) -> tuple[int, float, float]:
    """(failures, terminal summary seconds, seconds after the last test report) of one run of the slice."""
    extra, env_extra = MODES[mode]
    argv = [sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "linalg", "-q", "-n", workers,
            # hypothesis's summary hook imports hypothesis in the controller: a constant ~1 s, not reporting
            "-p", "no:hypothesispytest", "-p", "bench.failure_report",
            "--target", "host", "--trainlib", str(library), "-k", select,
            "--ptl-cache", str(work / "cache"), "--reports-dir", str(work / f"reports-{mode}"), *extra]
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}, **env_extra}
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env)
    failed = re.search(r"(\d+) failed", result.stdout.splitlines()[-1] if result.stdout else "")
    seconds = re.search(rf"{MARK}: ([\d.]+) ([\d.]+)", result.stderr)
    if not failed or not seconds:
        sys.exit(f"the {mode} run did not fail as expected or was not measured:\n"
                 f"{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    return int(failed.group(1)), float(seconds.group(1)), float(seconds.group(2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--select", default=SELECT, help="pytest -k expression of fp32 matmul variants")
    parser.add_argument("-n", dest="workers", default="1", help="pytest-xdist workers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptl-bench-failures-") as tmp:
        results = measure(Path(tmp), args.select, args.workers)
    before, full, default = (results[mode][1] for mode in MODES)
    print(f"terminal summary, ratio before / default: {before / default:.0f}x; before / full: {before / full:.1f}x "
          f"(-n {args.workers}, host)")


def measure(work: Path, select: str, workers: str) -> dict[str, tuple[int, float, float]]:
    """Builds the mutant with a first run (not measured), then runs each mode once."""
    library = mutant_library(work / "lib", EVERY_FP32_MATMUL_WRONG)
    print(f"mutant library {library}; building it and warming the golden cache...", flush=True)
    run("default", library, work, select, workers)
    results = {}
    for mode in MODES:
        results[mode] = failed, summary, tail = run(mode, library, work, select, workers)
        print(f"  {mode:8} {failed} failures: terminal summary {summary:7.2f} s = {1000 * summary / failed:6.2f} ms "
              f"each; after the last test report {tail:6.2f} s", flush=True)
    return results


if __name__ == "__main__":
    main()
