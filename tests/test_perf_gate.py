"""The performance gate: exact counts against a baseline, on qemu. lib_c as
landed matches the committed baseline with no change; a kernel made slower
fails exactly its variants as `perf`, a variant without a baseline is
reported as new and a faster one as improved; the baseline update says what
changed."""
from __future__ import annotations

import csv
import json
import os
import re
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


TOOLCHAIN = {"riscv64-unknown-elf-gcc": "12.2.0", "qemu": "7.2"}


def _write_results(path: Path, rows: list[tuple], **summary) -> None:
    """A run's results.csv, and its summary.json (a whole run unless summary says otherwise)."""
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["test_id", "outcome", "target", "unit", "latency", "work", "failure_class"][:len(rows[0])])
        writer.writerows(rows)
    whole = {"interrupted": False, "selected": len(rows), "run": len(rows), "not_run": 0, "shard": None,
             "partial": [], "toolchain": TOOLCHAIN}
    (path.parent / "summary.json").write_text(json.dumps({**whole, **summary}))


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
    text = perf_gate.format_baseline(counts, "qemu", TOOLCHAIN)
    assert text.splitlines()[1] == "# toolchain: qemu=7.2 riscv64-unknown-elf-gcc=12.2.0"
    assert text.splitlines()[3:] == ["act-fp16-bw-N3 direct-c2=40/75",
                                     "lin-fp32-fw-N7 mm-c1=500 mm-c8=90/610 mm_unroll_2x2-c8=70/530"]
    (tmp_path / "qemu.txt").write_text(text)
    assert perf_gate.read_baseline(tmp_path / "qemu.txt") == counts
    assert perf_gate.read_toolchain(tmp_path / "qemu.txt") == TOOLCHAIN
    (tmp_path / "bad.txt").write_text(text + "lin-fp32-fw-N9 mm-c1=12x\n")
    with pytest.raises(BaselineError, match="bad.txt:6: 'mm-c1=12x' is not"):
        perf_gate.read_baseline(tmp_path / "bad.txt")


def _run(library: Path, tmp_path: Path, reports: str, *extra: str) -> tuple[dict, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["TMPDIR"] = str(tmp_path)
    subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "linalg", "-q", "-p", "no:xdist",
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
    here = perf_gate.read_toolchain(perf_gate.baseline_path("qemu"))
    (tmp_path / "qemu.txt").write_text(perf_gate.format_baseline(baseline, "qemu", here))
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


def test_the_committed_baseline_records_this_machines_toolchain():
    """Debian 12: GCC 12.2, picolibc, clang 14, QEMU 7.2 (the gate test above runs against it)."""
    recorded = perf_gate.read_toolchain(perf_gate.baseline_path("qemu"))
    assert recorded is not None and recorded["riscv64-unknown-elf-gcc"].startswith("12.2")
    assert recorded["qemu"] == "7.2" and recorded["clang"].startswith("14.") and "picolibc" in recorded
    if make_target("qemu").unavailable_reason() is None:
        assert perf_gate.toolchain_differences(recorded, make_target("qemu").toolchain_fingerprint()) is None


@pytest.mark.parametrize("recorded", [{"riscv64-unknown-elf-gcc": "13.2.0", "qemu": "8.2"}, None],
                         ids=["ubuntu-24.04", "none"])
def test_the_gate_refuses_a_baseline_of_another_toolchain_in_one_line(tmp_path, recorded):
    baseline = tmp_path / "qemu.txt"
    baseline.write_text(perf_gate.format_baseline({"a-k-c1": Counts("instructions", 1, 1)}, "qemu", recorded))
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "linalg", "-p", "no:xdist",
                             "-q", "--collect-only", "--target", "qemu", "--perf-gate", "--perf-baseline",
                             str(baseline)], cwd=ROOT, capture_output=True, text=True)
    differs = perf_gate.toolchain_differences(recorded, make_target("qemu").toolchain_fingerprint())
    assert differs and ("riscv64-unknown-elf-gcc 13.2.0 there" in differs if recorded else "records no" in differs)
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr
    assert f"--perf-gate: {baseline} was recorded with another toolchain ({differs})" in result.stderr
    assert "--perf-gate-foreign-toolchain=report" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


@pytest.mark.skipif(make_target("qemu").unavailable_reason() is not None, reason="needs the qemu target")
def test_a_foreign_toolchain_is_reported_without_failing_when_asked(tmp_path):
    here = perf_gate.read_toolchain(perf_gate.baseline_path("qemu"))
    committed = perf_gate.read_baseline(perf_gate.baseline_path("qemu"))
    lower = {i: Counts(c.unit, c.latency - 1, c.work - 1) for i, c in committed.items() if i.startswith("matmul-fp32")}
    (tmp_path / "qemu.txt").write_text(perf_gate.format_baseline(lower, "qemu", {**here, "qemu": "8.2"}))
    rows, summary = _run(LIBRARY, tmp_path, "foreign", "--perf-gate", "--perf-baseline", str(tmp_path / "qemu.txt"),
                         "--perf-gate-foreign-toolchain=report")
    assert rows and {r["outcome"] for r in rows.values()} == {"passed"}      # nothing failed ...
    assert {r["perf"] for r in rows.values()} == {"regressed"}               # ... and every change is reported
    assert summary["perf"]["foreign_toolchain"] == f"qemu 8.2 there, {here['qemu']} here"
    assert summary["perf"]["counts"]["regressed"] == len(rows)


def _baseline(path: Path, counts: dict, toolchain=TOOLCHAIN) -> None:
    path.write_text(perf_gate.format_baseline(counts, "qemu", toolchain))


@pytest.mark.parametrize("summary, reason", [
    ({"partial": ["-k relu"]}, "-k relu"),
    ({"shard": {"index": 2, "count": 4}}, "shard 2/4"),
    ({"interrupted": True, "selected": 9, "run": 2, "not_run": 7}, "the run was interrupted (2 of 9 selected"),
    ({"not_run": 3, "selected": 5}, "3 of its 5 selected tests did not run"),
])
def test_the_update_refuses_a_partial_run_and_changes_nothing(tmp_path, summary, reason):
    _baseline(tmp_path / "qemu.txt", {"a-k-c1": Counts("instructions", 10, 40), "b-k-c1": Counts("instructions", 5, 5)})
    before = (tmp_path / "qemu.txt").read_text()
    _write_results(tmp_path / "results.csv", [("a-k-c1", "passed", "qemu", "instructions", 9, 40)], **summary)
    with pytest.raises(BaselineError, match=f"is not a whole run \\({re.escape(reason)}.*add --partial"):
        perf_gate.update(tmp_path / "results.csv", "qemu", tmp_path / "qemu.txt")
    assert (tmp_path / "qemu.txt").read_text() == before and not (tmp_path / "qemu.seconds").exists()
    cli = subprocess.run([sys.executable, "-m", "harness", "baseline", "update", "--from", str(tmp_path / "results.csv"),
                          "--out", str(tmp_path / "qemu.txt")], cwd=ROOT, capture_output=True, text=True)
    assert cli.returncode == 2 and cli.stderr.startswith("baseline: ") and cli.stderr.count("\n") == 1
    assert (tmp_path / "qemu.txt").read_text() == before


@pytest.mark.parametrize("partial", [False, True])
def test_the_update_refuses_a_run_in_a_sequenced_team_order(tmp_path, partial):
    """One core at a time waits otherwise than the target's own schedule:
    its counts are not the gate's, whole or --partial."""
    _baseline(tmp_path / "qemu.txt", {"a-k-c1": Counts("instructions", 10, 40)})
    before = (tmp_path / "qemu.txt").read_text()
    _write_results(tmp_path / "results.csv", [("a-k-c1", "passed", "qemu", "instructions", 12, 40)],
                   team_order="reverse")
    with pytest.raises(BaselineError, match="results.csv: PTL_TEAM_ORDER=reverse runs the team one core at a time"):
        perf_gate.update(tmp_path / "results.csv", "qemu", tmp_path / "qemu.txt", partial)
    assert (tmp_path / "qemu.txt").read_text() == before


def test_the_gate_refuses_a_sequenced_team_order_in_one_line():
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "linalg",
                             "-p", "no:xdist", "-q", "--collect-only", "--target", "qemu", "--perf-gate"], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, "PTL_TEAM_ORDER": "random:3"})
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr
    assert result.stderr.startswith("ERROR: --perf-gate: PTL_TEAM_ORDER=random:3 runs the team one core at a time")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_an_update_without_the_runs_summary_is_refused(tmp_path):
    _write_results(tmp_path / "results.csv", [("a-k-c1", "passed", "qemu", "instructions", 9, 40)])
    (tmp_path / "summary.json").unlink()
    with pytest.raises(BaselineError, match="no readable summary.json beside it"):
        perf_gate.update(tmp_path / "results.csv", "qemu", tmp_path / "qemu.txt")
    (tmp_path / "summary.json").write_text("[1")
    with pytest.raises(BaselineError, match="summary.json: not a run's summary"):
        perf_gate.update(tmp_path / "results.csv", "qemu", tmp_path / "qemu.txt")


def test_partial_merges_only_the_variants_present_and_updates_those_the_gate_failed(tmp_path):
    old = {"a-k-c1": Counts("instructions", 10, 40), "b-k-c1": Counts("instructions", 5, 5),
           "z-k-c1": Counts("instructions", 7, 7)}
    _baseline(tmp_path / "qemu.txt", old)
    (tmp_path / "qemu.seconds").write_text("# ptl case seconds: target qemu\nz 3.0\n")
    _write_results(tmp_path / "results.csv", [("a-k-c1", "passed", "qemu", "instructions", 9, 40, ""),
                                              ("b-k-c1", "failed", "qemu", "instructions", 6, 6, "perf"),
                                              ("c-k-c1", "passed", "qemu", "instructions", 3, 3, ""),
                                              ("d-k-c1", "failed", "qemu", "instructions", 8, 8, "numeric")],
                   partial=["-k a or b or c or d"])
    lines = perf_gate.update(tmp_path / "results.csv", "qemu", tmp_path / "qemu.txt", partial=True)
    assert lines[0].endswith("4 variants; 1 new, 0 gone, 2 changed (1 slower, 1 faster); --partial: 3 variants of "
                             f"{tmp_path / 'results.csv'} merged, 1 others kept as they were")
    assert "  b-k-c1: latency 5 -> 6, work 5 -> 6" in lines     # failed only the gate: updated, not dropped
    assert perf_gate.read_baseline(tmp_path / "qemu.txt") == {
        "a-k-c1": Counts("instructions", 9, 40), "b-k-c1": Counts("instructions", 6, 6),
        "c-k-c1": Counts("instructions", 3, 3), "z-k-c1": old["z-k-c1"]}          # z untouched, d (numeric) not added
    assert set((tmp_path / "qemu.seconds").read_text().split()) >= {"z", "a", "b", "c"}

    # --partial never mixes toolchains.
    _baseline(tmp_path / "other.txt", old, {"riscv64-unknown-elf-gcc": "13.2.0", "qemu": "8.2"})
    with pytest.raises(BaselineError, match="--partial: .*other.txt was made with another toolchain"):
        perf_gate.update(tmp_path / "results.csv", "qemu", tmp_path / "other.txt", partial=True)


def test_an_update_read_by_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    _baseline(tmp_path / "qemu.txt", {"a-k-c1": Counts("instructions", 10, 10)})
    _write_results(tmp_path / "results.csv", [("a-k-c1", "passed", "qemu", "instructions", 11, 11, "")])
    # `true` reads nothing and is gone long before the update prints (`| head -1` after a first line)
    piped = subprocess.run(f"{sys.executable} -m harness baseline update --from {tmp_path / 'results.csv'} "
                           f"--out {tmp_path / 'qemu.txt'} | true", shell=True, cwd=ROOT, capture_output=True,
                           text=True)
    assert piped.stderr == ""
    assert perf_gate.read_baseline(tmp_path / "qemu.txt")["a-k-c1"] == Counts("instructions", 11, 11)
