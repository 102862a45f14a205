"""The suite pointed at tests/fake_trainlib, a small library of our own with
the published API's names and the shapes that made the published
PULP-TrainLib (7bfc760) hard to test:

- pulp_train_defines.h declares, before pmsis.h, `typedef float16alt fp16;`
  and `typedef fp16 v2f16 __attribute__((vector_size (4)));`: its fp16 is
  bfloat16, and GCC 12 cannot compile it (no arithmetic float16alt), so the
  harness must pick clang-19 by compile probe, and must declare no v2f16;
- the FP16 sources compute in fp16 (real bfloat16 arithmetic);
- the FP16 lane helpers use GCC's __builtin_shuffle with masks written
  inline, `(v2s){1, 0}`, and call exit() with no declaration of their own;
- the FP16 depthwise struct has no stride_h / stride_w;
- the FP16 average pooling loads v2f16 pairs at odd element offsets, as the
  published FP16 SIMD code does: misaligned, which UBSan stops on host
  (--sanitize address,undefined), and which an --expect entry with
  `sanitize` expects there only;
- the FP16 cast to FP32 splits its elements over the cores in pairs, as
  the published vect_sum_fp16 splits its v2f16 lanes: right on the whole
  team, not the documented block when one core runs alone;
- the FP32 max pooling FW works out its core's channels and then loops over
  every channel, as the published pad_tensor (FP32 and FP16) does: right
  results in any order of the cores, a race that only ThreadSanitizer sees,
  which an --expect entry with `sanitize = "thread"` expects there only;
- pulp_rnn_fp32.c does not compile; the FP16 attention header includes the
  SDK's <bsp/bsp.h>; printf without <stdio.h>; mm_manager_args has
  mm_dw_args in second place;
- the sources include their own families' headers, not pulp_train.h (so a
  copy whose umbrella includes an unguarded header twice, as an older
  published branch does, still compiles them);
- optim_args has no weight_decay_lambda, and pulp_train.h and
  pulp_rnn_fp32.h have no include guard, as in an older published version.

What must hold: the families that can build, run and pass; IEEE fp16 cases
do not apply (not_fit, with the reason); the others fail as `build`, named
and explained; nothing crashes the session (no traceback).
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fake_trainlib"

# Two pooling shapes (one with heavy window overlap): every core count, both
# steps, every dtype. One conv2d variant: the family the library lacks.
POOL = "C3xH9xW11xHk3xWk3xHs2xWs2 or C2xH8xW8xHk4xWk4xHs1xWs1"
CONV2D = "conv2d- and -fw-Ci5xH7xW9 and HWC0-bias0-dma0-im2col1-mm-c1"
# Depthwise, strided, every step and dtype, one core.
CONV_DW = "conv_dw- and C4xH8xW8xHk3xWk3xsh2xsw2xL1xR1xU1xD1-HWC0-direct-c1"
# Matmul: every kernel, trans_B and bias mode on 8 cores (the mm_M kernels
# split 11 columns unevenly); linear: every step, kernel and bias on 3 cores.
LINALG = "(matmul- and N13xM11xK7 and -c8]) or (linear- and inp8xout17 and -c3])"
# Casts both ways on 9 elements: every core count and `alone` value.
CAST = "cast_to_ and -n9-"
SELECT = f"({POOL}) or ({CONV2D}) or ({CONV_DW}) or {LINALG} or ({CAST})"
MODULES = ["suite/test_ops.py", "--family", "pool,conv2d,conv_dw_pw,linalg,cast,losses"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One suite run on the fake library (host): rows by test id, failure
    texts by test id, the console, and units.json of each format."""
    work = tmp_path_factory.mktemp("fake_trainlib")
    console, reports = suite(work, SELECT)
    with open(reports / "results.csv") as f:
        rows = {row["test_id"]: row for row in csv.DictReader(f)}
    texts = {case.get("name"): (case.find("failure").text or "")
             for case in ET.parse(reports / "junit.xml").getroot().iter("testcase")
             if case.find("failure") is not None}
    units = [json.loads(path.read_text()) for path in (work / "cache").glob("builds/*/units.json")]
    return {"rows": rows, "texts": texts, "console": console, "units": units,
            "summary": json.loads((reports / "summary.json").read_text())}


def suite(workdir: Path, select: str, *extra: str, library: Path = FAKE) -> tuple[str, Path]:
    """The suite on the fake library (host), cache and reports under workdir:
    its console and the reports directory."""
    reports = workdir / "reports"
    argv = [sys.executable, "-m", "pytest", *MODULES, "-p", "no:xdist", "-q", "--target", "host",
            "--trainlib", str(library), "-k", select, "--reports-dir", str(reports),
            "--ptl-cache", str(workdir / "cache"), *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    console = result.stdout + result.stderr
    assert (reports / "results.csv").exists(), f"the suite wrote no report:\n{console[-3000:]}"
    return console, reports


def suite_rows(workdir: Path, select: str, *extra: str) -> tuple[dict[str, dict], dict]:
    """Another suite run on the fake library: rows by test id, and summary.json."""
    _, reports = suite(workdir, select, *extra)
    with open(reports / "results.csv") as f:
        return {row["test_id"]: row for row in csv.DictReader(f)}, json.loads((reports / "summary.json").read_text())


def rows_of(run, family: str, dtype: str) -> dict[str, dict]:
    return {tid: r for tid, r in run["rows"].items() if r["family"] == family and r["dtype"] == dtype}


def test_the_session_survives_the_library_without_a_traceback(run):
    assert "Traceback" not in run["console"]
    assert run["rows"], "no variant ran"


@pytest.mark.parametrize("family", ["avgpool", "maxpool"])
def test_fp32_pooling_builds_runs_and_passes(run, family):
    rows = rows_of(run, family, "fp32")
    assert len(rows) == 2 * 2 * 3  # shapes x steps x core counts
    assert {r["outcome"] for r in rows.values()} == {"passed"}, \
        {tid: r["message"][:300] for tid, r in rows.items() if r["outcome"] != "passed"}


@pytest.mark.parametrize("family", ["avgpool", "maxpool"])
def test_bf16_pooling_computes_in_real_bfloat16_with_clang_19_and_passes(run, family):
    """GCC 12 cannot compile the defines header; the probes pick clang-19,
    whose __bf16 is arithmetic, and every row says so."""
    rows = rows_of(run, family, "bf16")
    assert rows and {r["outcome"] for r in rows.values()} == {"passed"}, \
        {tid: r["message"][:300] for tid, r in rows.items() if r["outcome"] != "passed"}
    for row in rows.values():
        assert row["compiler"].startswith("clang-19"), row["compiler"]
        assert "float16alt arithmetic (__bf16)" in row["fp16_arithmetic"]
        assert row["library_fp16"] == "bf16"


@pytest.mark.parametrize("family", ["avgpool", "maxpool"])
def test_ieee_fp16_cases_do_not_apply_to_a_bfloat16_library(run, family):
    rows = rows_of(run, family, "fp16")
    assert rows
    for tid, row in rows.items():
        assert (row["outcome"], row["failure_class"]) == ("skipped", "not_fit"), tid
        assert "fp16 is bfloat16" in row["message"], row["message"]


def test_a_body_split_in_pairs_fails_only_where_one_core_runs_alone(run):
    """As the published vect_sum_fp16 (README, "One core alone"): n = 9 in
    pairs gives 3 cores the blocks [0, 4), [4, 8), [8, 9) for the documented
    [0, 3), [3, 6), [6, 9); on 8 cores both give every core at most 2 of the
    same elements, and one core is the whole team.
    The split is chosen by `#if NUM_CORES > 1`: had the file been built as
    for one core, every core would cast everything and both directions
    would fail every alone case on 3 and 8 cores."""
    rows = rows_of(run, "cast_to_fp32", "bf16")
    assert len(rows) == 3 + 2 * 2   # the team at 1, 3, 8 cores; each core alone at 3 and 8
    failed = {tid for tid, r in rows.items() if r["outcome"] != "passed"}
    assert failed == {"cast_to_fp32-bf16-fw-n9-alone1-direct-c3", "cast_to_fp32-bf16-fw-n9-alone2-direct-c3"}
    for tid in failed:
        assert rows[tid]["failure_class"] == "numeric"
        assert "alone: core" in run["texts"][tid] and "units [" in run["texts"][tid]
    fp16 = rows_of(run, "cast_to_fp16", "bf16")   # the documented split
    assert len(fp16) == 7 and {r["outcome"] for r in fp16.values()} == {"passed"}


def test_a_file_that_chooses_its_split_in_the_preprocessor_is_compiled_for_the_cluster(run):
    """NUM_CORES is the variant's count at run time; in an #if it would be 0
    (README, "NUM_CORES"): the run header names the file built for the
    cluster, and only it (the fake's other files have no such #if)."""
    lines = [l for l in run["console"].splitlines() if "compiled as for the 8-core cluster" in l]
    assert lines and all(l.endswith("(README, NUM_CORES): pulp_cast_fp16.c") for l in lines), lines
    assert run["units"] and all(u["cluster_files"] == ["pulp_cast_fp16.c"] for u in run["units"])


def test_the_header_shaped_like_the_published_one_is_named_in_the_run_header(run):
    assert "bf16 compiler: clang-19" in run["console"]
    assert "not riscv64-unknown-elf-gcc" in run["console"] or "not gcc: pulp_train.h does not compile" in \
        run["console"]
    assert "the library's fp16 is bfloat16" in run["console"]


def test_the_rnn_source_that_does_not_compile_is_named_and_fails_nothing_else(run):
    assert len(run["units"]) == 1  # the bf16 build; an IEEE build of a bfloat16 library is not made
    for units in run["units"]:
        assert "rnn_fp32_undeclared_step" in units["library_failed"]["pulp_rnn_fp32.c"]
        assert "pool/fp32" in units["built"]
    assert "library files that do not compile:" in run["console"]
    assert "pulp_rnn_fp32.c" in run["console"]


def test_the_fp16_simd_helpers_with_inline_masks_and_an_sdk_exit_compile(run):
    """pulp_matmul_fp16.c: __builtin_shuffle with `(v2s){1, 0}` written inline
    (the shim's overloads keep the compound literal's comma) and exit() that
    only the SDK's pmsis.h declares."""
    (units,) = run["units"]
    assert "pulp_matmul_fp16.c" not in units["library_failed"], units["library_failed"].get("pulp_matmul_fp16.c")


def test_a_family_the_library_lacks_is_a_build_failure_naming_the_struct(run):
    rows = {tid: r for tid, r in run["rows"].items() if r["family"] == "conv2d"}
    assert rows
    for tid, row in rows.items():
        assert (row["outcome"], row["failure_class"]) == ("failed", "build"), tid
        assert "conv2d/fp32" in run["texts"][tid] and "Conv2D_args" in run["texts"][tid]


def test_fp16_depthwise_without_stride_fields_compiles_and_the_probe_names_them(run):
    """The FP16 depthwise struct has no stride_h/stride_w: a compile probe
    finds that, the unit leaves them out and compiles (its strided cases
    report `unsupported`, naming the struct). The fake has no depthwise
    source, so the unit then fails to link, naming the functions."""
    (units,) = run["units"]
    assert units["missing_fields"]["conv_dw/fp16"] == ["DepthWise_Conv_args_fp16.stride_h",
                                                       "DepthWise_Conv_args_fp16.stride_w"]
    assert "conv_dw/fp32" not in units["missing_fields"]
    reason = units["failed"]["conv_dw/fp16"]
    assert "does not link" in reason and "pulp_conv_dw_fp16_fw_cl" in reason, reason


def test_fp32_depthwise_that_the_library_only_declares_fails_to_link_naming_the_functions(run):
    rows = rows_of(run, "conv_dw", "fp32")
    assert sorted(row["step"] for row in rows.values()) == ["bw", "fw", "ig", "wg"]
    for tid, row in rows.items():
        assert (row["outcome"], row["failure_class"]) == ("failed", "build"), tid
        text = run["texts"][tid]
        assert "conv_dw/fp32" in text and "pulp_conv_dw_fp32_fw_cl" in text
        assert "no library source defines it" in text


def test_fp32_matmul_through_mm_manager_passes_on_every_kernel(run):
    """Fact 6: the fake mm_manager_args has mm_dw_args in second place, as the
    published one does; a runner filling it by position would run the wrong
    kernel or none."""
    rows = {tid: r for tid, r in rows_of(run, "matmul", "fp32").items() if int(r["kernel_index"]) < 24}
    assert {r["kernel"] for r in rows.values()} >= {"mm", "mm_M", "mm_unroll_4x4", "mm_M_unroll_4x4"}
    assert len({r["kernel"] for r in rows.values()}) == 24
    assert {r["outcome"] for r in rows.values()} == {"passed"}, \
        {tid: r["message"][:300] for tid, r in rows.items() if r["outcome"] != "passed"}


def test_lib_c_own_kernels_that_the_library_lacks_are_absent_not_wrong(run):
    """Indices 24-34 are lib_c's own (ptl_kernels.def, origin lib_c); the fake,
    like the published library, declares none of them. The build finds that
    by compile probe, and their variants are skipped as `absent`, naming the
    function, never run and never failed."""
    (units,) = run["units"]
    assert units["missing_kernels"] == {"fp32": {"24": "mm_unroll_5x5", "25": "mm_unroll_4x6",
                                                 "26": "mm_unroll_6x4", "27": "mm_M_unroll_5x5",
                                                 "28": "mm_M_unroll_4x6", "29": "mm_M_unroll_6x4",
                                                 "30": "mm_unroll_4x6_k4", "31": "mm_M_unroll_4x6_k4",
                                                 "32": "mm_unroll_5x5_k16", "33": "mm_M_unroll_5x5_k16",
                                                 "34": "mm_unroll_4x6_spread"}}
    for family in ("matmul", "linear"):
        rows = {tid: r for tid, r in rows_of(run, family, "fp32").items() if int(r["kernel_index"]) >= 24}
        assert len({r["kernel"] for r in rows.values()}) == 11, family
        for tid, row in rows.items():
            assert (row["outcome"], row["failure_class"]) == ("skipped", "absent"), tid
            assert f"has no {row['kernel']}" in row["message"] and "lib_c's own" in row["message"], row["message"]
            assert row["latency"] == "", tid   # not run


def test_fp32_linear_passes_every_step_with_the_bias_gradient_starting_as_poison(run):
    """The fake WG overwrites bias->diff, as the published one does; the
    runner hands it a NaN-filled buffer, so a WG that read it would fail."""
    rows = {tid: r for tid, r in rows_of(run, "linear", "fp32").items() if int(r["kernel_index"]) < 24}
    assert {r["step"] for r in rows.values()} == {"fw", "wg", "ig"}
    assert any(r["step"] == "wg" and "bias1" in tid for tid, r in rows.items())
    assert {r["outcome"] for r in rows.values()} == {"passed"}, \
        {tid: r["message"][:300] for tid, r in rows.items() if r["outcome"] != "passed"}


@pytest.mark.parametrize("family", ["matmul", "linear"])
@pytest.mark.parametrize("dtype", ["bf16"])
def test_fp16_linalg_that_the_library_lacks_fails_to_link_naming_the_functions(run, family, dtype):
    rows = rows_of(run, family, dtype)
    assert rows
    for tid, row in rows.items():
        assert (row["outcome"], row["failure_class"]) == ("failed", "build"), tid
        text = run["texts"][tid]
        assert "linalg/fp16" in text and "undefined reference" in text


def test_a_sanitize_entry_expects_the_misaligned_fp16_load_under_ubsan_only(tmp_path):
    """The published library's v2f16 loads at odd elements, in the fake's FP16
    average pooling: under --sanitize address,undefined the first window row
    that starts at an odd element stops the run, which the entry makes a known
    bug; unchecked, the same variants pass, and the entry neither covers them
    nor calls them fixed."""
    expect = tmp_path / "expect.toml"
    expect.write_text('[[expect]]\nkind = "bug"\ntests = ["avgpool-bf16-fw-*"]\nsanitize = "address,undefined"\n'
                      'classes = ["crash"]\nmessage = "misaligned address * for type \'v2f16\'"\n'
                      'reason = "v2f16 pairs at odd elements"\n')
    select = "avgpool- and bf16-fw-C3xH9xW11xHk3xWk3xHs2xWs2"
    checked, summary = suite_rows(tmp_path / "asan", select, "--sanitize", "address,undefined",
                                  "--expect", str(expect))
    assert len(checked) == 3 and {r["expectation"] for r in checked.values()} == {"known_bug"}, checked
    assert all("misaligned address" in r["message"] and "pulp_pooling_fp16.c:" in r["message"]
               for r in checked.values()), [r["message"][:300] for r in checked.values()]
    assert summary["expectations"]["new_failures"] == 0
    plain, summary = suite_rows(tmp_path / "plain", select, "--expect", str(expect))
    assert len(plain) == 3 and {(r["outcome"], r["expectation"]) for r in plain.values()} == {("passed", "")}
    assert summary["expectations"]["fixed"] == 0


def test_a_sanitize_entry_expects_the_race_of_a_body_that_writes_every_channel_under_tsan_only(tmp_path):
    """The published pad_tensor's shape, in the fake's FP32 max pooling FW:
    under --sanitize thread, on the concurrency slice, every variant where two
    cores run the body is a `race` naming the write in pulp_pooling_fp32.c,
    a new failure without the entry and a known bug with it; the ordinary
    runs of the module fixture pass (test_fp32_pooling_builds_runs_and_passes)."""
    select = "maxpool- and fp32-fw-"
    bare, summary = suite_rows(tmp_path / "bare", select, "--sanitize", "thread", "--concurrency-slice", "1")
    assert len(bare) == 4 and {(r["outcome"], r["failure_class"]) for r in bare.values()} == {("failed", "race")}
    assert all("data race between write of size 4 by " in r["message"] and " in pulp_maxpool_fp32_fw_cl at "
               "pulp_pooling_fp32.c:" in r["message"] for r in bare.values()), [r["message"][:300] for r in bare.values()]
    assert summary["expectations"]["new_failures"] == 4   # the smallest case and one of two channels, 3 and 8 cores
    expect = tmp_path / "expect.toml"
    expect.write_text('[[expect]]\nkind = "bug"\ntests = ["maxpool-fp32-fw-*"]\nsanitize = "thread"\n'
                      'classes = ["race"]\nmessage = "*data race between write of size 4 by * in pulp_maxpool_fp32*"\n'
                      'reason = "every core writes every channel"\n')
    checked, summary = suite_rows(tmp_path / "tsan", select, "--sanitize", "thread", "--concurrency-slice", "1",
                                  "--expect", str(expect))
    assert set(checked) == set(bare) and {r["expectation"] for r in checked.values()} == {"known_bug"}, checked
    assert summary["expectations"]["new_failures"] == 0


def test_sgd_without_the_decay_field_runs_without_decay_and_reports_decay_as_unsupported(tmp_path):
    """The field probe finds no weight_decay_lambda in optim_args: the cases
    without decay build, run and pass on every core count; those with decay
    are unsupported, naming the field; none fails to build."""
    rows, _ = suite_rows(tmp_path, "sgd- and -fp32- and nw17xnb5")
    assert len(rows) == 36, sorted(rows)  # 12 cases (biases, 2 rates, 3 decays) x 3 core counts
    for tid, row in rows.items():
        if "-lambda_micro0-" in tid:
            assert row["outcome"] == "passed", (tid, row["message"][:300])
        else:
            assert (row["outcome"], row["failure_class"]) == ("failed", "unsupported"), (tid, row["outcome"])
            assert "optim_args has no field weight_decay_lambda" in row["message"], row["message"][:300]
    assert sum("-lambda_micro0-" in tid for tid in rows) == 12


def test_an_umbrella_header_that_no_compiler_compiles_is_built_by_the_compiler_that_gets_furthest(tmp_path):
    """An older PULP-TrainLib (its branch pr/SparseUpdate, 2025-05) includes
    pulp_dropout_fp32.h, which has no include guard, twice in pulp_train.h:
    no compiler compiles the umbrella, and GCC also fails on the defines
    header first. The build must still pick clang-19, which compiles every
    header alone, so that each unit's failure names the redefinition and the
    umbrella's line that includes the header again, not GCC's vector_size
    error, and the library's own sources compile."""
    library = tmp_path / "library"
    shutil.copytree(FAKE, library)
    cast = library / "include" / "pulp_cast_fp16.h"
    cast.write_text(cast.read_text().replace("#ifndef PULP_CAST_FP16_H\n#define PULP_CAST_FP16_H\n", "")
                    .replace("#endif /* PULP_CAST_FP16_H */", ""))
    umbrella = library / "include" / "pulp_train.h"
    text = umbrella.read_text() + '#include "pulp_cast_fp16.h"\n'
    umbrella.write_text(text)
    second = text.splitlines().index('#include "pulp_cast_fp16.h"', text.splitlines().index(
        '#include "pulp_cast_fp16.h"') + 1) + 1
    console, reports = suite(tmp_path / "run", "avgpool- and C3xH9xW11xHk3xWk3xHs2xWs2 and -fw- and -c1]",
                             library=library)
    assert "Traceback" not in console
    assert "bf16 compiler: clang-19" in console, console[-3000:]
    assert "not clang-19: pulp_train.h does not compile" in console and "redefinition of" in console
    with open(reports / "results.csv") as f:
        rows = list(csv.DictReader(f))
    # the format probe reads fp16 from the headers that compile: bfloat16, as in the published library
    assert {(r["dtype"], r["outcome"], r["failure_class"]) for r in rows} == \
        {("fp32", "failed", "build"), ("bf16", "failed", "build"), ("fp16", "skipped", "not_fit")}, rows
    for row in (r for r in rows if r["outcome"] == "failed"):
        assert "error: redefinition of 'cast_16t32_args'" in row["message"], row["message"][:600]
        assert f"In file included from {umbrella}:{second}:" in row["message"], row["message"][:600]
    assert "library files that do not compile: pulp_rnn_fp32.c;" in console  # the fake's one broken source

