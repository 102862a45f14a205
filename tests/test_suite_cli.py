"""The suite as a user drives it: reports, caching, --trainlib, --sanitize.

Each test runs a small slice of the regression in a subprocess, the way
`pytest suite ...` is run from a shell, and reads what it wrote.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from harness.kernels import kernel_table
from tests.test_mutations import LIBRARY, ROOT, run_slice

SLICE = "matmul-fp32-fw-N9xM4xK8-trans_B1"
FP32_KERNELS = len(kernel_table("fp32"))   # every kernel x 6 core counts in SLICE


def test_second_run_with_nothing_changed_compiles_nothing_and_generates_no_golden(tmp_path):
    cache = tmp_path / "cache"
    run_slice(LIBRARY, SLICE, tmp_path / "first", cache)
    first = json.loads((tmp_path / "first" / "reports" / "summary.json").read_text())["cache"]
    rows, _ = run_slice(LIBRARY, SLICE, tmp_path / "second", cache)
    second = json.loads((tmp_path / "second" / "reports" / "summary.json").read_text())["cache"]

    # A -k selection builds only the format its cases need (suite/conftest.py).
    assert first["builds_compiled"] == 1 and first["golden_generated"] == 1
    assert second["builds_compiled"] == 0 and second["golden_generated"] == 0
    assert second["builds_reused"] >= 1 and second["golden_reused"] == 1
    assert {r["outcome"] for r in rows} == {"passed"} and len(rows) == FP32_KERNELS * 6


def test_a_trainlib_path_that_does_not_exist_is_one_usage_error_before_anything_builds(tmp_path):
    missing = tmp_path / "pulp-trainlb"   # a typo
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "-q",
                             "-p", "no:xdist", "--target", "host", "--trainlib", str(missing),
                             "--reports-dir", str(tmp_path / "reports")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 4, result.stdout + result.stderr   # pytest's usage error
    assert result.stderr.strip() == f"ERROR: --trainlib {missing}: no such file or directory"
    assert not (tmp_path / "reports").exists()


def test_a_library_that_does_not_build_fails_each_case_as_build_with_the_compiler_message(tmp_path):
    broken = tmp_path / "lib"
    shutil.copytree(LIBRARY, broken)
    source = broken / "sources" / "pulp_linear_fp32.c"
    source.write_text(source.read_text() + "\nthis is not C;\n")

    rows, texts = run_slice(broken, SLICE, tmp_path, tmp_path / "cache")

    assert len(rows) == FP32_KERNELS * 6
    assert {(r["outcome"], r["failure_class"]) for r in rows} == {("failed", "build")}
    message = next(iter(texts.values()))
    assert "pulp_linear_fp32.c" in message and "error" in message


def test_a_path_that_is_not_a_library_is_a_build_failure_that_says_what_is_expected(tmp_path):
    rows, texts = run_slice(tmp_path, SLICE, tmp_path, tmp_path / "cache")
    assert {r["failure_class"] for r in rows} == {"build"}
    assert "expected include/ and sources/" in next(iter(texts.values()))


@pytest.mark.parametrize("sanitizer", ["address,undefined", "thread"])
def test_sanitized_host_builds_pass_the_linear_slice(tmp_path, sanitizer):
    rows, texts = run_slice(LIBRARY, "linear-fp32-fw-inp37xout19-bias1", tmp_path, tmp_path / "cache",
                            extra=["--sanitize", sanitizer])
    assert len(rows) == FP32_KERNELS * 3
    assert {r["outcome"] for r in rows} == {"passed"}, list(texts.values())[:1]


def test_reports_carry_one_junit_case_and_one_csv_row_per_variant(tmp_path):
    rows, _ = run_slice(LIBRARY, SLICE, tmp_path, tmp_path / "cache")
    junit = (tmp_path / "reports" / "junit.xml").read_text()
    assert junit.count("<testcase ") == len(rows) == FP32_KERNELS * 6
    for row in rows:
        assert row["target"] == "host" and row["unit"] == "ns" and row["kernel"] and row["cores"]
        assert row["max_ulp"] != "" and row["latency"] != ""
