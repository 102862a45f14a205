"""`python -m harness verdicts OLD NEW`: the variants whose verdict changed
between two runs, by family, dtype and step; an expected failure is still a
failure, so a regression that an expect file's wide pattern counts as a
known bug shows here; input that does not compare is refused in one line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import verdict_compare
from harness.reports import write_csv_records
from tests.mutants import SourceEdit, mutant_library

ROOT = Path(__file__).resolve().parent.parent


def _row(test_id: str, outcome: str, failure_class: str = "", message: str = "", target: str = "qemu") -> dict:
    family, dtype, step = test_id.split("-")[:3]
    expectation = "known_bug" if "[known_bug]" in message else ""
    return {"test_id": test_id, "outcome": outcome, "failure_class": failure_class, "target": target,
            "family": family, "step": step, "dtype": dtype, "message": message, "expectation": expectation}


OLD = [_row("conv2d-fp32-wg-A-mm-c1", "passed"),
       _row("conv2d-fp32-wg-B-mm-c1", "passed"),
       _row("conv2d-fp32-fw-A-mm-c1", "xfailed", "numeric", "[numeric] tensor y [3] fp32: 3 of 3 elements | [known_bug] pads"),
       _row("conv2d-fp32-bw-A-mm-c1", "xfailed", "crash", "[crash] trap cause 5 | [known_bug] pads"),
       _row("conv2d-fp32-ig-A-mm-c1", "skipped", "not_fit", "[not_fit] 70000 bytes of L1"),
       _row("relu-fp32-fw-n4-direct-c1", "passed"),
       _row("relu-fp32-fw-n5-direct-c1", "passed"),
       _row("gone-fp32-fw-n5-direct-c1", "passed")]
NEW = [_row("conv2d-fp32-wg-A-mm-c1", "xfailed", "numeric",                     # a regression counted as known
            "[numeric] tensor dW [1x1x1x1] fp32: 1 of 1 elements | [known_bug] pads"),
       _row("conv2d-fp32-wg-B-mm-c1", "failed", "numeric", "[numeric] tensor dW [2] fp32"),   # a new failure
       _row("conv2d-fp32-fw-A-mm-c1", "passed", "", ""),                         # fixed
       _row("conv2d-fp32-bw-A-mm-c1", "xfailed", "numeric", "[numeric] tensor dx | [known_bug] pads"),
       _row("conv2d-fp32-ig-A-mm-c1", "passed"),                                 # runs now
       _row("relu-fp32-fw-n4-direct-c1", "passed"),
       _row("relu-fp32-fw-n5-direct-c1", "skipped", "absent", "[absent] no relu"),
       _row("new-fp32-fw-n5-direct-c1", "passed")]


def _run(tmp_path: Path, name: str, rows: list[dict]) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    write_csv_records(rows, directory / "results.csv")
    return directory


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "verdicts", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_each_change_of_verdict_is_counted_by_group_and_an_expected_failure_is_a_failure(tmp_path):
    old, new = _run(tmp_path, "old", OLD), _run(tmp_path, "new", NEW)
    changes, both, only_old, only_new = verdict_compare.compare(verdict_compare.read_run(old),
                                                                verdict_compare.read_run(new / "results.csv"))
    ids = {key: {group: [b.test_id for _, b in pairs] for group, pairs in groups.items()}
           for key, groups in changes.items()}
    assert ids == {"now_failing": {"conv2d fp32 wg": ["conv2d-fp32-wg-A-mm-c1", "conv2d-fp32-wg-B-mm-c1"]},
                   "now_passing": {"conv2d fp32 fw": ["conv2d-fp32-fw-A-mm-c1"]},
                   "fails_otherwise": {"conv2d fp32 bw": ["conv2d-fp32-bw-A-mm-c1"]},
                   "run_old_only": {"relu fp32 fw": ["relu-fp32-fw-n5-direct-c1"]},
                   "run_new_only": {"conv2d fp32 ig": ["conv2d-fp32-ig-A-mm-c1"]}}
    assert (both, only_old, only_new) == (7, 1, 1)
    text = "\n".join(verdict_compare.report(changes, both, only_old, only_new))
    assert "now failing (passed in OLD): 2" in text and "now passing (failed in OLD): 1" in text
    # The failure's own message, not the expectation's label; a fix shows what OLD said.
    assert ("conv2d-fp32-wg-A-mm-c1: pass -> fail numeric; NEW: [numeric] tensor dW [1x1x1x1] fp32: 1 of 1 "
            "elements\n") in text
    assert "conv2d-fp32-fw-A-mm-c1: fail numeric -> pass; OLD: [numeric] tensor y [3] fp32" in text
    assert "conv2d-fp32-bw-A-mm-c1: fail crash -> fail numeric" in text

    selected = verdict_compare.compare(verdict_compare.read_run(old), verdict_compare.read_run(new), {"relu"})
    assert sum(map(len, selected[0]["now_failing"].values())) == 0 and selected[1:] == (2, 0, 0)

    result = _cli(old, new, "--fail-on-new-failures")
    assert result.returncode == 1 and result.stdout.startswith(f"verdicts: {old} -> {new} (qemu)")
    assert _cli(old, new).returncode == 0
    assert _cli(new, new, "--fail-on-new-failures").returncode == 0


@pytest.mark.parametrize("case, says", [
    ("missing", "No such file or directory; give a run's reports directory or its results.csv"),
    ("columns", "not a run's results.csv (no column outcome, failure_class"),
    ("twice", "twice; give one run's results (shards: `python -m harness merge` first)"),
    ("targets", "OLD ran on qemu, NEW on host: verdicts of different targets do not compare"),
    ("family", "--family nosuch: no variant of that family on either side"),
    ("examples", "--examples -1: how many variants to list per group, 0 or more"),
])
def test_what_does_not_compare_is_refused_in_one_line(tmp_path, case, says):
    old = _run(tmp_path, "old", OLD)
    if case == "missing":
        new = tmp_path / "nothing"
    elif case == "columns":
        new = tmp_path / "other.csv"
        new.write_text("test_id,verdict\nx,passed\n")
    else:
        new = _run(tmp_path, "new", {"twice": NEW + NEW[:1],
                                     "targets": [dict(r, target="host") for r in NEW]}.get(case, NEW))
    extra = {"family": ["--family", "nosuch"], "examples": ["--examples", "-1"]}.get(case, [])
    result = _cli(old, new, *extra)
    assert result.returncode == 2 and result.stdout == ""
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_a_regression_that_a_wide_expect_entry_hides_is_a_new_failure_here(tmp_path):
    """Real runs on host: lib_c, then lib_c with the CORDIC folded at -pi/3,
    both with an entry that expects CORDIC's FP32 failures (a pattern as
    wide as a family's). The mutant's run counts its failure a known bug;
    the comparison says which variant passed before and fails now."""
    expect = tmp_path / "expect.toml"
    expect.write_text('[[expect]]\nkind = "bug"\ntests = ["cordic-fp32-*"]\nclasses = ["numeric"]\n'
                      'reason = "a pattern wider than the bug"\n')
    mutant = mutant_library(tmp_path / "mutant", SourceEdit("sources/pulp_cordic.c",
                                                            "    } else if (z < -CORDIC_PI / 2) {",
                                                            "    } else if (z < -CORDIC_PI / 3) {"))
    runs = {}
    for name, library in (("old", ROOT / "lib_c"), ("new", mutant)):
        runs[name] = tmp_path / name
        result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family",
                                 "cordic", "-q", "-p", "no:xdist", "--target", "host", "--trainlib", str(library),
                                 "--expect", str(expect), "--reports-dir", str(runs[name]),
                                 "--ptl-cache", str(tmp_path / "cache"), "-k", "fp32"],
                                capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    summary = json.loads((runs["new"] / "summary.json").read_text())["expectations"]
    assert (summary["new_failures"], summary["known_bug"]) == (0, 1), summary
    result = _cli(runs["old"], runs["new"], "--fail-on-new-failures")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "now failing (passed in OLD): 1\n  cordic fp32 fw" in result.stdout
    assert "cordic-fp32-fw-n64-direct-c1: pass -> fail numeric; NEW: [numeric] tensor cos [64] fp32" in result.stdout
