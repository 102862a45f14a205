"""--expect: known bugs and unsupported paths as data (harness/expectations.py
and the pytest plugin's use of it)."""
import csv
import json
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from harness.expectations import Expectations, ExpectationsError
from harness.failures import CaseFailure
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
classes = ["numeric"]
reason = "CHW only"

[[expect]]
kind = "unsupported"
feature = "dma_im2col"
tests = ["*-fp16-*"]
classes = ["build"]
message = "pulp_im2col_fp16.c"
reason = "no fp16 DMA"
""")
    assert e.match("conv2d-fp32-fw-Ci5-mm-c3", ()).reason == "overrun at 3 cores"
    assert e.match("conv2d-fp32-fw-Ci5-mm-c8", ()) is None
    assert e.match("conv_dw-fp32-fw-C4-HWC1-direct-c8", ("hwc_depthwise",)).kind == "unsupported"
    both = e.match("conv2d-fp16-fw-Ci5-dma1-mm_fp16-c8", ("dma_im2col",))
    assert both.reason == "no fp16 DMA"
    assert both.covers(CaseFailure("build", "pulp_im2col_fp16.c:12: error")) and not both.covers(NUMERIC)
    assert e.match("conv2d-fp16-fw-Ci5-dma1-mm_fp16-c8", ()) is None   # the feature is required too
    assert [x.where.rsplit(", ", 1)[1] for x in e.unmatched({0, 2})] == ["entry 2"]


NUMERIC = CaseFailure("numeric", "y[3] = 1.5, expected 1.25 (2.1x the tolerance)")
STRIDE = CaseFailure("build", "runner unit conv_dw did not build against pulp-trainlib:\n"
                              "ops_conv_dw.c:40: error: 'DepthWise_Conv_args' has no member named 'stride_h'")
BROKEN = CaseFailure("build", "runner unit conv_dw did not build against pulp-trainlib:\n"
                              "library files that do not compile: pulp_conv_dw_fp16.c")


def test_a_build_entry_covers_only_the_build_failures_whose_message_it_names(tmp_path):
    e = load(tmp_path, """
[[expect]]
kind = "unsupported"
tests = ["conv_dw-fp16-*"]
classes = ["build"]
message = "no member named 'stride_h'"
reason = "the FP16 depthwise args have no stride fields"
""")
    entry = e.entries[0]
    assert entry.covers(STRIDE)
    assert not entry.covers(BROKEN)       # the same family and class, another cause: a new failure
    assert not entry.covers(NUMERIC)      # another class
    assert e.match("conv_dw-fp16-fw-C4-c8", (), STRIDE) is entry
    assert e.match("conv_dw-fp16-fw-C4-c8", (), BROKEN) is None
    assert e.match("conv_dw-fp16-fw-C4-c8", ()) is entry   # a pass of this variant is "fixed"


def test_a_message_is_an_fnmatch_pattern_searched_for_anywhere_in_the_message(tmp_path):
    e = load(tmp_path, """
[[expect]]
kind = "bug"
tests = ["conv_dw-*"]
message = "ops_conv_dw.c:*has no member named 'stride_?'"
reason = "r"
""")
    entry = e.entries[0]
    assert entry.covers(STRIDE) and not entry.covers(BROKEN)
    assert not entry.covers(CaseFailure("build", "OPS_CONV_DW.C:40: error: 'x' HAS NO MEMBER NAMED 'stride_h'"))


def test_an_entry_without_classes_or_message_never_covers_a_build_failure(tmp_path):
    entry = load(tmp_path, "[[expect]]\nkind = 'bug'\ntests = ['conv_dw-*']\nreason = 'r'").entries[0]
    assert entry.covers(NUMERIC) and entry.covers(CaseFailure("crash", "trap: cause 5 at pc 0x80001234"))
    assert not entry.covers(STRIDE)


def test_a_feature_entry_covers_only_failures_of_its_classes(tmp_path):
    e = load(tmp_path, """
[[expect]]
kind = "unsupported"
feature = "hwc_depthwise"
classes = ["numeric", "crash"]
reason = "CHW only"
""")
    entry = e.match("conv_dw-fp32-fw-C4-HWC1-direct-c8", ("hwc_depthwise",))
    assert entry.covers(NUMERIC) and entry.covers(CaseFailure("crash", "trap"))
    assert not entry.covers(CaseFailure("timeout", "no answer in 60 s")) and not entry.covers(BROKEN)
    assert e.match("conv_dw-fp16-fw-C4-HWC1-direct-c8", ("hwc_depthwise",), BROKEN) is None


def test_the_first_entry_that_matches_the_variant_and_covers_its_failure_is_taken(tmp_path):
    e = load(tmp_path, """
[[expect]]
kind = "bug"
tests = ["conv_dw-fp16-*"]
classes = ["numeric"]
reason = "first: wrong results"

[[expect]]
kind = "unsupported"
tests = ["conv_dw-*"]
classes = ["build"]
message = "pulp_conv_dw_fp16.c"
reason = "second: does not compile"

[[expect]]
kind = "bug"
tests = ["conv_dw-*"]
classes = ["build"]
message = "library files that do not compile"
reason = "third: also covers it, but comes later"
""")
    variant = "conv_dw-fp16-fw-C4-c8"
    assert e.match(variant, ()).reason == "first: wrong results"            # any entry, for "fixed"
    assert e.match(variant, (), NUMERIC).reason == "first: wrong results"
    assert e.match(variant, (), BROKEN).reason == "second: does not compile"  # a later entry names it
    assert e.match(variant, (), STRIDE) is None
    assert e.match("conv_dw-fp32-fw-C4-c8", (), NUMERIC) is None             # only the first covers numeric


def test_an_entry_with_sanitize_applies_only_to_runs_built_with_those_sanitizers(tmp_path):
    e = load(tmp_path, """
[[expect]]
kind = "bug"
tests = ["train_ds_cnn-*"]
sanitize = "address,undefined"
classes = ["crash"]
message = "runtime error: division by zero"
reason = "divides by a zero stride"

[[expect]]
kind = "bug"
tests = ["conv_dw-*"]
reason = "every run"
""")
    crash = CaseFailure("crash", "runtime error: division by zero at pulp_conv2d_fp32.c:771:24")
    assert e.for_run("address,undefined", "host").match("train_ds_cnn-fp32-train-c1", (), crash) is e.entries[0]
    for other in (None, "thread"):
        run = e.for_run(other, "host")
        assert run.match("train_ds_cnn-fp32-train-c1", ()) is None   # neither expected nor "fixed" there
        assert run.match("conv_dw-fp32-fw-C4-c8", (), NUMERIC) is e.entries[1]
    assert "--sanitize address,undefined" in e.entries[0].describe()


def test_an_entry_with_targets_applies_only_to_runs_on_those_targets(tmp_path):
    e = load(tmp_path, """
[[expect]]
kind = "bug"
tests = ["q_rsqrt-*"]
targets = ["host"]
classes = ["numeric"]
reason = "a long of 8 bytes on the host"

[[expect]]
kind = "bug"
tests = ["conv_dw-*"]
reason = "every target"
""")
    assert e.for_run(None, "host").match("q_rsqrt-fp32-fw-n7-direct-c1", (), NUMERIC) is e.entries[0]
    for other in ("qemu", "gvsoc", "board"):
        run = e.for_run(None, other)
        assert run.match("q_rsqrt-fp32-fw-n7-direct-c1", ()) is None   # a pass there is a plain pass
        assert run.match("conv_dw-fp32-fw-C4-c8", (), NUMERIC) is e.entries[1]
    assert "targets host" in e.entries[0].describe()


@pytest.mark.parametrize("text, says", [
    ("kind = 'bug'", "unknown top-level key(s) kind"),
    ("[[expect]]\nkind = 'flaky'\ntests = ['x']\nreason = 'r'", "kind must be one of bug, unsupported"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']", "entry 1: reason must be a non-empty string"),
    ("[[expect]]\nkind = 'bug'\nreason = 'r'", "give `tests` (test-id patterns), `feature`, or both"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\nclasses = ['slow']", "classes must be a list"),
    ("[[expect]]\nkind = 'bug'\ntest = ['x']\nreason = 'r'", "unknown field(s) test"),
    ("[[expect]\nkind = 'bug'", "not valid TOML"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\nmessage = ''", "entry 1: message must be a non-empty"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\nmessage = ['a']", "entry 1: message must be a non-empty"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\nsanitize = 'memory'",
     "entry 1: sanitize must be one of 'address,undefined', 'thread' (--sanitize), not 'memory'"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\ntargets = ['fpga']",
     "entry 1: targets must be a non-empty list of targets from board, gvsoc, host, qemu, not ['fpga']"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\ntargets = []", "entry 1: targets must be a non-empty"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\ntargets = 'host'", "entry 1: targets must be a non-empty"),
    # A build entry names what it expects to fail, or it would expect every build failure of its tests.
    ("[[expect]]\nkind = 'unsupported'\ntests = ['conv_dw-fp16-*']\nclasses = ['build']\nreason = 'r'",
     "entry 1: an entry for build failures (classes include \"build\") must name what fails to build: "
     "add `message = \"...\"`"),
    ("[[expect]]\nkind = 'unsupported'\nfeature = 'dma_im2col'\nclasses = ['numeric', 'build']\nreason = 'r'",
     "entry 1: an entry for build failures"),
    # A feature entry says how the feature's cases fail.
    ("[[expect]]\nkind = 'unsupported'\nfeature = 'hwc_depthwise'\nreason = 'r'",
     "entry 1: the feature entry 'hwc_depthwise' must say how the feature's cases fail: add `classes`"),
    ("[[expect]]\nkind = 'bug'\ntests = ['x']\nreason = 'r'\n\n"
     "[[expect]]\nkind = 'unsupported'\nfeature = 'any_stride'\ntests = ['conv2d-*']\nreason = 'r'",
     "entry 2: the feature entry 'any_stride' must say how"),
])
def test_a_malformed_file_is_one_clear_error_naming_the_entry_and_field(tmp_path, text, says):
    with pytest.raises(ExpectationsError) as info:
        load(tmp_path, text)
    assert str(tmp_path / "expect.toml") in str(info.value)   # every message names the file ...
    if text.startswith("[[expect]]\n"):
        assert re.search(r"expect\.toml, entry \d+: ", str(info.value))   # ... and the entry
    assert says in str(info.value)


def test_a_malformed_file_is_a_usage_error_of_the_suite_without_a_traceback(tmp_path):
    (tmp_path / "bad.toml").write_text("[[expect]]\nkind = 'bug'\ntests = ['x']\n")
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "pool", "-q",
                             "-p", "no:xdist", "--target", "host", "--expect", str(tmp_path / "bad.toml"),
                             "--reports-dir", str(tmp_path / "reports")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "entry 1: reason must be a non-empty string" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_the_summary_separates_new_failures_known_bugs_unsupported_paths_and_fixed_ones(tmp_path):
    """lib_c with its FP16 pooling source broken: maxpool fp16 cases are
    declared unsupported (build, naming the file), one passing avgpool fp32
    case is declared a bug (so it is "fixed"), and the avgpool fp16 build
    failures are new: the entry for them names another file. The maxpool
    entry also names a passing fp32 case: those passes sit beside the
    entry's failures, and are not "fixed"."""
    library = tmp_path / "lib_c"
    shutil.copytree(DEFAULT_LIBRARY, library)
    source = library / "sources" / "pulp_pooling_fp16.c"
    source.write_text(source.read_text() + "\nint this_is_not_c = ;\n")
    (tmp_path / "expect.toml").write_text("""
[[expect]]
kind = "unsupported"
tests = ["maxpool-fp16-*", "maxpool-fp32-fw-C1xH1xW1*"]
classes = ["build"]
message = "pulp_pooling_fp16.c"
reason = "no fp16 pooling in this library"

[[expect]]
kind = "unsupported"
tests = ["avgpool-fp16-*"]
classes = ["build"]
message = "pulp_conv2d_fp16.c"
reason = "another build failure than this run's"

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
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "pool", "-q",
                             "-p", "no:xdist", "--target", "host", "--trainlib", str(library),
                             "--expect", str(tmp_path / "expect.toml"), "--reports-dir", str(reports),
                             "--ptl-cache", str(tmp_path / "cache"),
                             "-k", "(fp16 and fw and C1xH1xW1) or (fp32 and fw and C1xH1xW1)"],
                            capture_output=True, text=True, cwd=ROOT, timeout=600)
    out = result.stdout + result.stderr
    assert "Traceback" not in out
    summary = json.loads((reports / "summary.json").read_text())
    e = summary["expectations"]
    cores = 3  # pool runs every case at 1, 3 and 8 cores
    assert (e["new_failures"], e["unsupported"], e["known_bug"], e["fixed"], e["passed_beside"]) == \
        (cores, cores, 0, cores, cores), e
    assert all(i.startswith("avgpool-fp32-") for i in e["fixed_ids"]) and len(e["fixed_ids"]) == cores
    assert e["unmatched_entries"] == [f"{tmp_path / 'expect.toml'}, entry 2 (tests avgpool-fp16-* and message "
                                      f"'pulp_conv2d_fp16.c')",
                                      f"{tmp_path / 'expect.toml'}, entry 4 (tests no-such-test-*)"]
    assert summary["outcomes"] == {"failed": cores, "xfailed": cores, "passed": 2 * cores}
    with open(reports / "results.csv", newline="") as handle:
        xfailed = [row for row in csv.DictReader(handle) if row["outcome"] == "xfailed"]
    assert len(xfailed) == cores
    with open(reports / "results.csv", newline="") as handle:
        passes = Counter((row["family"], row["expectation"]) for row in csv.DictReader(handle)
                         if row["outcome"] == "passed")
    assert passes == {("avgpool", "fixed"): cores, ("maxpool", "passed_beside"): cores}
    for row in xfailed:   # the failure itself, then the expectation; not pytest's traceback of the xfail call
        assert row["message"].startswith("[build] runner unit pool/fp16 did not build"), row["message"][:300]
        assert " | [unsupported] no fp16 pooling in this library (" in row["message"]
        assert "Variant(" not in row["message"]
    assert (f"new failures {cores}, known bugs 0, unsupported {cores}, fixed {cores}, "
            f"passed beside known failures {cores}") in out
    assert "entry 4 (tests no-such-test-*) matched no test in this run" in out
    assert result.returncode == 1  # the new failures fail the run
