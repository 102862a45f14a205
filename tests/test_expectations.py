"""--expect: known bugs and unsupported paths as data (harness/expectations.py
and the pytest plugin's use of it)."""
import json
import shutil
import subprocess
import sys

import pytest

from harness.expectations import Expectations, ExpectationsError
from harness.target import DEFAULT_LIBRARY
from tests.test_mutations import ROOT


def load(tmp_path, text):
    path = tmp_path / "expect.toml"
    path.write_text(text)
    return Expectations.load(path)


def test_entries_match_by_pattern_by_feature_or_by_both(tmp_path):
    e = load(tmp_path, """
[[expect]]
kind = "bug"
tests = ["conv2d-fp32-*-c3"]
reason = "overrun at 3 cores"

[[expect]]
kind = "unsupported"
feature = "hwc_depthwise"
reason = "CHW only"

[[expect]]
kind = "unsupported"
feature = "dma_im2col"
tests = ["*-fp16-*"]
classes = ["build"]
reason = "no fp16 DMA"
""")
    assert e.match("conv2d-fp32-fw-Ci5-mm-c3", ()).reason == "overrun at 3 cores"
    assert e.match("conv2d-fp32-fw-Ci5-mm-c8", ()) is None
    assert e.match("conv_dw-fp32-fw-C4-HWC1-direct-c8", ("hwc_depthwise",)).kind == "unsupported"
    both = e.match("conv2d-fp16-fw-Ci5-dma1-mm_fp16-c8", ("dma_im2col",))
    assert both.reason == "no fp16 DMA" and both.covers("build") and not both.covers("numeric")
    assert e.match("conv2d-fp16-fw-Ci5-dma1-mm_fp16-c8", ()) is None   # the feature is required too
    assert [x.where.rsplit(", ", 1)[1] for x in e.unmatched({0, 2})] == ["entry 2"]


@pytest.mark.parametrize("text, says", [
    ("kind = 'bug'", "unknown top-level key(s) kind"),
    ("[[expect]]\nkind = 'flaky'\ntests = ['x']\nreason = 'r'", "kind must be one of bug, unsupported"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']", "entry 1: reason must be a non-empty string"),
    ("[[expect]]\nkind = 'bug'\nreason = 'r'", "give `tests` (test-id patterns), `feature`, or both"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\nclasses = ['slow']", "classes must be a list"),
    ("[[expect]]\nkind = 'bug'\ntest = ['x']\nreason = 'r'", "unknown field(s) test"),
    ("[[expect]\nkind = 'bug'", "not valid TOML"),
])
def test_a_malformed_file_is_one_clear_error_naming_the_entry_and_field(tmp_path, text, says):
    with pytest.raises(ExpectationsError, match="expect") as info:
        load(tmp_path, text)
    assert says in str(info.value)


def test_a_malformed_file_is_a_usage_error_of_the_suite_without_a_traceback(tmp_path):
    (tmp_path / "bad.toml").write_text("[[expect]]\nkind = 'bug'\ntests = ['x']\n")
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_pool.py"), "-q",
                             "-p", "no:xdist", "--target", "host", "--expect", str(tmp_path / "bad.toml"),
                             "--reports-dir", str(tmp_path / "reports")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "entry 1: reason must be a non-empty string" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_the_summary_separates_new_failures_known_bugs_unsupported_paths_and_fixed_ones(tmp_path):
    """lib_c with its FP16 pooling source broken: maxpool fp16 cases are
    declared unsupported (build), one passing avgpool fp32 case is declared a
    bug (so it is "fixed"), and the avgpool fp16 build failures are new."""
    library = tmp_path / "lib_c"
    shutil.copytree(DEFAULT_LIBRARY, library)
    source = library / "sources" / "pulp_pooling_fp16.c"
    source.write_text(source.read_text() + "\nint this_is_not_c = ;\n")
    (tmp_path / "expect.toml").write_text("""
[[expect]]
kind = "unsupported"
tests = ["maxpool-fp16-*"]
classes = ["build"]
reason = "no fp16 pooling in this library"

[[expect]]
kind = "bug"
tests = ["avgpool-fp32-fw-C1xH1xW1*"]
reason = "pretend this one is broken"

[[expect]]
kind = "bug"
tests = ["no-such-test-*"]
reason = "stale"
""")
    reports = tmp_path / "reports"
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_pool.py"), "-q",
                             "-p", "no:xdist", "--target", "host", "--trainlib", str(library),
                             "--expect", str(tmp_path / "expect.toml"), "--reports-dir", str(reports),
                             "--ptl-cache", str(tmp_path / "cache"),
                             "-k", "(fp16 and fw and C1xH1xW1) or (avgpool and fp32 and fw and C1xH1xW1)"],
                            capture_output=True, text=True, cwd=ROOT, timeout=600)
    out = result.stdout + result.stderr
    assert "Traceback" not in out
    summary = json.loads((reports / "summary.json").read_text())
    e = summary["expectations"]
    cores = 3  # pool runs every case at 1, 3 and 8 cores
    assert (e["new_failures"], e["unsupported"], e["known_bug"], e["fixed"]) == (cores, cores, 0, cores), e
    assert e["unmatched_entries"] == [f"{tmp_path / 'expect.toml'}, entry 3 (tests no-such-test-*)"]
    assert summary["outcomes"] == {"failed": cores, "xfailed": cores, "passed": cores}
    assert f"new failures {cores}, known bugs 0, unsupported {cores}, fixed {cores}" in out
    assert "entry 3 (tests no-such-test-*) matched no test in this run" in out
    assert result.returncode == 1  # the new failures fail the run
