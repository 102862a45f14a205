"""The performance gate: exact counts against a baseline, on qemu. lib_c as
landed matches the committed baseline with no change; a kernel made slower
fails exactly its variants as `perf`, a variant without a baseline is
reported as new and a faster one as improved; the baseline update says what
changed."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import perf_gate
from harness.perf_gate import BaselineError, Counts
from harness.targets import make_target
from tests.mutants import LIBRARY, SourceEdit, mutant_library

ROOT = Path(__file__).resolve().parent.parent
SLICE = "matmul-fp32-fw-N7xM8xK9 and trans_B0 and bias0"
SLOWER_2X2 = SourceEdit(
    "sources/pulp_matmul_fp32.c",
    "void mm_unroll_2x2(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x2, 0); }",
    "void mm_unroll_2x2(void *matMul_args)\n{\n    for (volatile int waste = 0; waste < 50; waste++)\n        ;\n"
    "    ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x2, 0);\n}")


def test_verdicts_new_same_improved_and_regressed_beyond_the_threshold():
    base = Counts("instructions", 100, 400)
    assert perf_gate.judge(Counts("instructions", 100, 400), None, 0.0)[0] == "new"
    assert perf_gate.judge(Counts("ns", 100, 400), base, 0.0)[0] == "new"       # other unit: not comparable
    assert perf_gate.judge(Counts("instructions", 100, 400), base, 0.0) == ("same", "")
    assert perf_gate.judge(Counts("instructions", 99, 400), base, 0.0)[0] == "improved"
    verdict, text = perf_gate.judge(Counts("instructions", 101, 400), base, 0.0)
    assert verdict == "regressed" and "latency 101 instructions > baseline 100 (+1.00%)" in text
    assert perf_gate.judge(Counts("instructions", 101, 400), base, 0.02)[0] == "same"


def _write_results(path: Path, rows: list[tuple]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["test_id", "outcome", "target", "unit", "latency", "work"])
        writer.writerows(rows)


def test_the_update_refuses_results_of_another_target_and_reports_changes(tmp_path):
    results = tmp_path / "results.csv"
    rows = [("a-k-c1", "passed", "qemu", "instructions", 10, 40), ("b-k-c1", "failed", "qemu", "instructions", 11, 44)]
    _write_results(results, rows)
    lines = perf_gate.update(results, "qemu", tmp_path / "qemu.txt")
    assert lines[0].endswith("1 variants; 1 new, 0 gone, 0 changed (0 slower, 0 faster)")  # the failed row is left out
    assert "1 variants of" in lines[-2] and "did not pass" in lines[-2]
    assert lines[-1].startswith(f"case seconds {tmp_path / 'qemu.seconds'}: 2 cases")
    assert perf_gate.read_baseline(tmp_path / "qemu.txt") == {"a-k-c1": Counts("instructions", 10, 40)}
    with pytest.raises(BaselineError, match="not only host"):
        perf_gate.update(results, "host", tmp_path / "host.txt")
    rows[0] = ("a-k-c1", "passed", "qemu", "instructions", 9, 40)
    _write_results(results, rows)
    lines = perf_gate.update(results, "qemu", tmp_path / "qemu.txt")
    assert lines[0].endswith("1 changed (0 slower, 1 faster)")
    assert lines[1] == "  a-k-c1: latency 10 -> 9, work 40 -> 40"


def test_the_baseline_is_one_line_per_case_and_reads_back_exactly(tmp_path):
    counts = {"lin-fp32-fw-N7-mm-c1": Counts("instructions", 500, 500),
              "lin-fp32-fw-N7-mm-c8": Counts("instructions", 90, 610),
              "lin-fp32-fw-N7-mm_unroll_2x2-c8": Counts("instructions", 70, 530),
              "act-fp16-bw-N3-direct-c2": Counts("instructions", 40, 75)}
    text = perf_gate.format_baseline(counts, "qemu")
    assert text.splitlines()[2:] == ["act-fp16-bw-N3 direct-c2=40/75",
                                     "lin-fp32-fw-N7 mm-c1=500 mm-c8=90/610 mm_unroll_2x2-c8=70/530"]
    (tmp_path / "qemu.txt").write_text(text)
    assert perf_gate.read_baseline(tmp_path / "qemu.txt") == counts
    (tmp_path / "bad.txt").write_text(text + "lin-fp32-fw-N9 mm-c1=12x\n")
    with pytest.raises(BaselineError, match="bad.txt:5: 'mm-c1=12x' is not"):
        perf_gate.read_baseline(tmp_path / "bad.txt")


def _run(library: Path, tmp_path: Path, reports: str, *extra: str) -> tuple[dict, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["TMPDIR"] = str(tmp_path)
    subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_linalg.py"), "-q", "-p", "no:xdist",
                    "--target", "qemu", "-k", SLICE, "--trainlib", str(library), "--ptl-cache", str(tmp_path / "cache"),
                    "--reports-dir", str(tmp_path / reports), *extra], cwd=ROOT, env=env, capture_output=True)
    with open(tmp_path / reports / "results.csv", newline="") as handle:
        rows = {row["test_id"]: row for row in csv.DictReader(handle)}
    return rows, json.loads((tmp_path / reports / "summary.json").read_text())


@pytest.mark.skipif(make_target("qemu").unavailable_reason() is not None, reason="needs the qemu target")
def test_the_gate_passes_lib_c_as_landed_and_fails_exactly_the_slowed_kernel(tmp_path):
    # lib_c against the committed baseline: exact counts, 0 changes.
    rows, summary = _run(LIBRARY, tmp_path, "landed", "--perf-gate")
    assert rows and {r["outcome"] for r in rows.values()} == {"passed"}
    assert summary["perf"]["baseline"] == str(perf_gate.baseline_path("qemu"))
    assert summary["perf"]["counts"] == {"same": len(rows), "improved": 0, "regressed": 0, "new": 0}

    # One variant without a baseline (new: reported, not failed), one whose
    # baseline was higher (improved), and a mutant whose mm_unroll_2x2 is slower.
    baseline = {i: c for i, c in perf_gate.read_baseline(perf_gate.baseline_path("qemu")).items() if i in rows}
    others = sorted(i for i in baseline if "-mm_unroll_2x2-" not in i)
    del baseline[others[0]]
    was = baseline[others[1]]
    baseline[others[1]] = Counts(was.unit, was.latency + 1, was.work + 1)
    (tmp_path / "qemu.txt").write_text(perf_gate.format_baseline(baseline, "qemu"))
    slower = mutant_library(tmp_path / "lib", SLOWER_2X2)
    rows, summary = _run(slower, tmp_path, "slower", "--perf-gate", "--perf-baseline", str(tmp_path / "qemu.txt"))
    failed = {i for i, r in rows.items() if r["outcome"] == "failed"}
    assert failed and failed == {i for i in rows if "-mm_unroll_2x2-" in i}
    assert {rows[i]["failure_class"] for i in failed} == {"perf"}
    assert "> baseline" in rows[sorted(failed)[0]]["message"]
    assert rows[others[0]]["outcome"] == "passed" and rows[others[0]]["perf"] == "new"
    assert rows[others[1]]["outcome"] == "passed" and rows[others[1]]["perf"] == "improved"
    assert summary["perf"]["counts"] == {"regressed": len(failed), "improved": 1, "new": 1,
                                         "same": len(rows) - len(failed) - 2}
    assert summary["perf"]["improved"] == [others[1]] and summary["perf"]["new"] == [others[0]]
