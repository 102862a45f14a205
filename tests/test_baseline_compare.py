"""`python -m harness baseline compare OLD NEW`: which variants got slower
between two baselines, by the gate's own rule, selected by core count and
family, and refused in one line where the two do not compare."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import baseline_compare, perf_gate
from harness.perf_gate import BaselineError, Counts

ROOT = Path(__file__).resolve().parent.parent
TOOLCHAIN = {"riscv64-unknown-elf-gcc": "12.2.0", "qemu": "7.2"}

OLD = {"matmul-fp32-fw-N9-mm_M-c1": Counts("instructions", 1000, 1000),
       "matmul-fp32-fw-N9-mm_M-c8": Counts("instructions", 300, 1500),
       "matmul-fp32-fw-N9-mm_unroll_4x4-c8": Counts("instructions", 200, 1400),
       "im2row-fp32-fw-C1-direct-c8": Counts("instructions", 330, 1194),
       "im2row-fp32-fw-C1-direct-c3": Counts("instructions", 290, 540),
       "relu-fp32-fw-N5-direct-c1": Counts("instructions", 50, 50),
       "gone-fp32-fw-N5-direct-c1": Counts("instructions", 50, 50)}
NEW = {"matmul-fp32-fw-N9-mm_M-c1": Counts("instructions", 900, 900),           # faster
       "matmul-fp32-fw-N9-mm_M-c8": Counts("instructions", 300, 1510),          # work grew: slower
       "matmul-fp32-fw-N9-mm_unroll_4x4-c8": Counts("instructions", 210, 1400),  # latency grew: slower
       "im2row-fp32-fw-C1-direct-c8": Counts("instructions", 367, 1686),        # slower, the most
       "im2row-fp32-fw-C1-direct-c3": Counts("instructions", 300, 560),         # slower, but 3 cores
       "relu-fp32-fw-N5-direct-c1": Counts("instructions", 50, 50),             # same
       "new-fp32-fw-N5-direct-c1": Counts("instructions", 50, 50)}


def _write(tmp_path: Path, name: str, counts: dict, toolchain=TOOLCHAIN) -> Path:
    path = tmp_path / name
    path.write_text(perf_gate.format_baseline(counts, "qemu", toolchain))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "baseline", "compare", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True)


def test_each_variant_is_judged_by_the_gates_rule_latency_or_work():
    result = baseline_compare.compare(OLD, NEW)
    verdicts = {v.test_id: v.verdict for v in result.variants}
    assert verdicts == {"matmul-fp32-fw-N9-mm_M-c1": "faster", "matmul-fp32-fw-N9-mm_M-c8": "slower",
                        "matmul-fp32-fw-N9-mm_unroll_4x4-c8": "slower", "im2row-fp32-fw-C1-direct-c8": "slower",
                        "im2row-fp32-fw-C1-direct-c3": "slower", "relu-fp32-fw-N5-direct-c1": "same"}
    assert (result.only_old, result.only_new) == (1, 1)
    # A threshold makes small growth the same, as the gate's --perf-threshold does.
    loose = baseline_compare.compare(OLD, NEW, threshold=0.06)
    assert {v.test_id for v in loose.variants if v.verdict == "slower"} == {"im2row-fp32-fw-C1-direct-c8"}


def test_the_selection_takes_core_counts_and_families():
    result = baseline_compare.compare(OLD, NEW, cores={1, 8}, families={"im2row", "relu"})
    assert [(v.family, v.kernel, v.cores) for v in result.variants] == [("im2row", "direct", 8), ("relu", "direct", 1)]
    assert (result.only_old, result.only_new) == (0, 0)    # gone and new are neither family


def test_the_report_counts_by_family_or_kernel_and_lists_the_largest_growth_first(tmp_path):
    old, new = _write(tmp_path, "old.txt", OLD), _write(tmp_path, "new.txt", NEW)
    cli = _cli(old, new, "--cores", "1,8", "--worst", "2")
    assert cli.returncode == 0, cli.stderr
    lines = cli.stdout.splitlines()
    assert lines[1] == "5 variants on both sides: 3 slower, 1 same, 1 faster; latency summed 1,880 -> 1,827 (-2.82%)"
    assert lines[2] == "only in the old baseline: 1; only in the new: 1 (not compared)"
    assert lines[3].split()[:4] == ["family", "slower", "same", "faster"] and "1 more family names: all the same" \
        in lines[3]
    assert lines[4].split() == ["matmul", "2", "0", "1", "-6.00%"]
    assert lines[5].split() == ["im2row", "1", "0", "0", "+11.21%"]
    assert lines[6] == "slower, the largest growth first (2 of 3):"
    assert lines[7].endswith("latency 330 -> 367, work 1194 -> 1686  im2row-fp32-fw-C1-direct-c8")
    assert lines[7].startswith("  +41.21%")
    assert lines[8].endswith("matmul-fp32-fw-N9-mm_unroll_4x4-c8") and len(lines) == 9
    by_kernel = _cli(old, new, "--family", "matmul", "--by", "kernel").stdout.splitlines()
    assert [line.split()[:4] for line in by_kernel[4:6]] == [["mm_M", "1", "0", "1"], ["mm_unroll_4x4", "1", "0", "0"]]


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    old, new = _write(tmp_path, "old.txt", OLD), _write(tmp_path, "new.txt", NEW)
    # 4,000 slower variants listed: a report longer than a pipe's buffer
    before = _write(tmp_path, "before.txt", {f"f-fp32-fw-N{i}-direct-c1": Counts("instructions", 10, 10)
                                             for i in range(4000)})
    after = _write(tmp_path, "after.txt", {f"f-fp32-fw-N{i}-direct-c1": Counts("instructions", 11, 11)
                                           for i in range(4000)})
    piped = subprocess.run(f"{sys.executable} -m harness baseline compare {old} {new} | head -1; "
                           f"{sys.executable} -m harness baseline compare {before} {after} --worst 4000 | head -1",
                           shell=True, cwd=ROOT, capture_output=True, text=True)
    assert piped.stderr == "" and piped.stdout.count("baseline compare:") == 2


def test_fail_on_slower_sets_the_exit_status_for_scripts(tmp_path):
    old, new = _write(tmp_path, "old.txt", OLD), _write(tmp_path, "new.txt", NEW)
    assert _cli(old, new, "--fail-on-slower").returncode == 1
    assert _cli(old, new, "--fail-on-slower", "--family", "relu").returncode == 0
    assert _cli(old, old, "--fail-on-slower").returncode == 0


@pytest.mark.parametrize("make, args, message", [
    (lambda t: (_write(t, "a.txt", OLD), t / "missing.txt"), (), "missing.txt: No such file or directory"),
    (lambda t: (_write(t, "a.txt", OLD), _write(t, "b.txt", NEW, {**TOOLCHAIN, "qemu": "8.2"})), (),
     "were made with different toolchains (qemu 7.2 there, 8.2 here)"),
    (lambda t: (_write(t, "a.txt", OLD), _write(t, "b.txt", {"x-k-c1": Counts("cycles", 5, 5)})),
     ("--foreign-toolchain", "report"), "count in different units (cycles, instructions)"),
    (lambda t: (_write(t, "a.txt", OLD), _write(t, "b.txt", NEW)), ("--cores", "1,eight"), "--cores 1,eight: a comma"),
    (lambda t: (_write(t, "a.txt", OLD), _write(t, "b.txt", NEW)), ("--family", "matmull"),
     "--family matmull: no variant of that family in either baseline"),
    (lambda t: (_write(t, "a.txt", OLD), _write(t, "b.txt", NEW)), ("--worst", "-1"), "--worst -1: how many"),
])
def test_what_does_not_compare_or_select_is_refused_in_one_line(tmp_path, make, args, message):
    old, new = make(tmp_path)
    cli = _cli(old, new, *args)
    assert cli.returncode == 2 and cli.stdout == ""
    assert cli.stderr.startswith("baseline: ") and cli.stderr.count("\n") == 1 and message in cli.stderr, cli.stderr


def test_other_toolchains_compare_when_asked_and_the_header_says_so(tmp_path):
    old = _write(tmp_path, "a.txt", OLD)
    new = _write(tmp_path, "b.txt", NEW, None)
    cli = _cli(old, new, "--foreign-toolchain", "report")
    assert cli.returncode == 0 and f"(toolchains differ: {new} records no toolchain)" in cli.stdout.splitlines()[0]
    with pytest.raises(BaselineError):   # the same refusal through the function the CLI calls
        baseline_compare.run(type("Args", (), {"old": old, "new": new, "foreign_toolchain": "refuse"})())
