"""What the terminal says about failed variants (harness/failure_summary.py).

By default: one line per failed variant, or, above --ptl-failure-lines,
counts by family, dtype and failure class plus the first few in full;
pytest's own FAILURES section and short summary leave the variants out, and
its final "N failed, M passed" line still counts them. --ptl-full-failures
gives pytest's sections back. pytest's teardown output of other failures is
still shown (its lookup is indexed, not removed).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from harness.failure_summary import groups, one_line, summary_lines
from harness.reports import ReportRow
from tests.mutants import FAST_AND_WRONG, mutant_library
from tests.test_mutations import ROOT

REPORTS = Path("reports")


def row(test_id, family="matmul", dtype="fp32", kind="numeric", outcome="failed", message=None):
    props = {"family": family, "dtype": dtype, "failure_class": kind}
    text = f"[{kind}] {test_id} is wrong\nindex reference actual\n(0, 0) 1.0 2.0" if message is None else message
    return ReportRow(test_id, outcome, 0.1, props, text if outcome != "passed" else "")


# ---- the format, on synthetic rows -----------------------------------------

def test_one_line_is_outcome_id_class_and_the_first_line_without_its_class_prefix():
    assert one_line(row("matmul-fp32-a-c1")) == "FAILED matmul-fp32-a-c1 [numeric] matmul-fp32-a-c1 is wrong"
    assert one_line(row("x", kind="crash", message="[crash] trap at pc 0x80\nmore")) == \
        "FAILED x [crash] trap at pc 0x80"


def test_a_failure_without_a_class_is_named_by_its_outcome():
    strict_xpass = ReportRow("v", "failed", 0.0, {"family": "pool"}, "[XPASS(strict)] known bug")
    assert one_line(strict_xpass) == "FAILED v [failed] [XPASS(strict)] known bug"
    assert one_line(row("e", outcome="error", kind="", message="")) == "ERROR e [error]"


def test_groups_count_family_dtype_and_class_largest_first_and_name_the_first_variant():
    rows = ([row(f"matmul-{i}") for i in range(3)] + [row(f"linear-{i}", family="linear") for i in range(2)]
            + [row("matmul-bf16-0", dtype="bf16", kind="crash"), row("passing", outcome="passed")])
    assert groups(rows) == [("matmul", "fp32", "numeric", 3, "matmul-0"),
                            ("linear", "fp32", "numeric", 2, "linear-0"),
                            ("matmul", "bf16", "crash", 1, "matmul-bf16-0")]


def test_up_to_the_limit_each_failure_is_one_line_and_passes_are_not_mentioned():
    rows = [row(f"v{i}") for i in range(4)] + [row("ok", outcome="passed")]
    lines = summary_lines(rows, limit=4, reports_dir=REPORTS)
    assert lines[0] == "4 failed variants:"
    assert lines[1:5] == [one_line(r) for r in rows[:4]]
    assert len(lines) == 6 and "reports/junit.xml" in lines[5] and "--ptl-full-failures" in lines[5]


def test_above_the_limit_failures_are_grouped_and_only_the_first_five_are_in_full():
    rows = [row(f"matmul-{i:02}") for i in range(30)] + [row(f"conv-{i}", family="conv2d", kind="crash")
                                                         for i in range(2)]
    lines = summary_lines(rows, limit=10, reports_dir=REPORTS)
    assert lines[0] == "32 failed variants, by family, dtype and failure class:"
    assert re.split(r"\s{2,}", lines[1].strip()) == ["count", "family", "dtype", "class", "first variant"]
    assert re.split(r"\s{2,}", lines[2].strip()) == ["30", "matmul", "fp32", "numeric", "matmul-00"]
    assert re.split(r"\s{2,}", lines[3].strip()) == ["2", "conv2d", "fp32", "crash", "conv-0"]
    shown = [line.removeprefix("--- ") for line in lines if line.startswith("--- ")]
    assert shown == ["conv-0", "conv-1", "matmul-00", "matmul-01", "matmul-02"]
    assert lines.count("(0, 0) 1.0 2.0") == 5                   # in full: every line of the message
    assert not any(line.startswith("FAILED ") for line in lines)  # no line per failure


def test_a_run_without_failures_says_nothing():
    assert summary_lines([row("a", outcome="passed")], limit=50, reports_dir=REPORTS) == []


# ---- pytest's own sections, on a synthetic test file (no build) ------------

SYNTHETIC = '''
import pytest

@pytest.fixture
def noisy():
    yield
    print("teardown output of the plain test")

@pytest.mark.parametrize("i", range(3))
def test_variant(request, i):
    request.node.user_properties += [("test_id", f"fake-fp32-{i}"), ("family", "fake"), ("dtype", "fp32"),
                                     ("failure_class", "numeric")]
    pytest.fail(f"[numeric] fake failure {i}\\ndetail {i}", pytrace=False)

def test_plain(noisy):
    assert 1 == 2
'''


def run_pytest(args: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                             *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out[-3000:]   # tests failed; not a usage or internal error
    assert "Traceback" not in out and "INTERNALERROR" not in out, out[-3000:]
    return out


def test_variants_leave_pytests_sections_and_are_grouped_while_other_failures_keep_theirs(tmp_path):
    (tmp_path / "test_synthetic.py").write_text(SYNTHETIC)
    out = run_pytest(["--target", "host", "--reports-dir", str(tmp_path / "reports"), "--ptl-failure-lines", "2",
                      "test_synthetic.py"], tmp_path)
    failures_section, ours = out.split("= FAILURES =")[1].split("= ptl failures =")
    assert "test_plain" in failures_section and "test_variant" not in failures_section
    assert "teardown output of the plain test" in failures_section   # pytest's teardown lookup still works
    lines = ours.splitlines()
    assert "3 failed variants, by family, dtype and failure class:" in lines
    assert [re.split(r"\s{2,}", line.strip()) for line in lines if line.strip().startswith("3  fake")] == \
        [["3", "fake", "fp32", "numeric", "fake-fp32-0"]]
    assert [line for line in lines if line.startswith("--- ")] == [f"--- fake-fp32-{i}" for i in range(3)]
    assert [line for line in out.splitlines() if line.startswith("FAILED ")] == \
        ["FAILED test_synthetic.py::test_plain - assert 1 == 2"]   # pytest's short summary: not the variants
    assert out.rstrip().splitlines()[-1].startswith("4 failed in ")


def test_full_failures_gives_pytests_sections_back(tmp_path):
    (tmp_path / "test_synthetic.py").write_text(SYNTHETIC)
    out = run_pytest(["--target", "host", "--reports-dir", str(tmp_path / "reports"), "--ptl-full-failures",
                      "test_synthetic.py"], tmp_path)
    assert "= ptl failures =" not in out
    failures_section = out.split("= FAILURES =")[1]
    for i in range(3):
        assert f"detail {i}" in failures_section
        assert f"FAILED test_synthetic.py::test_variant[{i}] - Failed: [numeric] fake failure {i}" in out
    assert "teardown output of the plain test" in failures_section
    assert out.rstrip().splitlines()[-1].startswith("4 failed in ")


# ---- a real failing slice: a mutant lib_c on the host target (one build) ----

# FAST_AND_WRONG computes half the rows in mm_unroll_4x4: its 6 matmul and 9
# linear variants fail as numeric; the 3 maxpool variants pass.
SLICE = ("(matmul and fp32 and N7xM8xK9 and trans_B0-bias0-mm_unroll_4x4-) or "
         "(linear and fp32 and inp8xout17-bias0-mm_unroll_4x4-) or (maxpool and fp32 and fw and C1xH1xW1)")
FINAL_LINE = re.compile(r"^15 failed, 3 passed in [\d.]+s")   # -k: the rest are never made (harness/keyword_prefilter.py)


def test_a_real_failing_slice_says_one_line_per_failure_then_pytests_final_line(tmp_path):
    library = mutant_library(tmp_path / "lib", FAST_AND_WRONG)
    out = run_pytest(["suite/test_ops.py", "--family", "linalg,pool", "--target", "host", "--trainlib", str(library),
                      "-k", SLICE, "--reports-dir", str(tmp_path / "reports"), "--ptl-cache", str(tmp_path / "cache")],
                     ROOT)
    failed = [line for line in out.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 15, out[-3000:]
    assert all(re.match(r"FAILED (matmul|linear)-fp32-\S+-mm_unroll_4x4-c\d \[numeric\] tensor ", line)
               for line in failed), failed
    assert "= FAILURES =" not in out and "short test summary info" not in out
    assert FINAL_LINE.match(out.rstrip().splitlines()[-1]), out[-1000:]
