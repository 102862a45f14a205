"""harness/build_units.py and the session: one broken library file fails only
the cases that need it, named and explained; the golden key holds the seed
and the catalogue code."""
import shutil

import pytest

from harness import failures, session as session_module
from harness.build_units import UnitReport, field_queries, first_error, headline
from harness.session import Session
from harness.target import DEFAULT_LIBRARY
from harness.targets.host import HostTarget
from harness.catalogue.pool import MAXPOOL


def case_of(entry, dtype):
    return next(c for c in entry.cases() if c.dtype == dtype and c.step == "fw")


@pytest.fixture(scope="module")
def broken_library(tmp_path_factory):
    """lib_c with its FP16 pooling source broken."""
    root = tmp_path_factory.mktemp("lib") / "lib_c"
    shutil.copytree(DEFAULT_LIBRARY, root)
    source = root / "sources" / "pulp_pooling_fp16.c"
    source.write_text(source.read_text() + "\nint this_is_not_c = ;\n")
    return root


@pytest.fixture(scope="module")
def broken_session(broken_library, tmp_path_factory):
    return Session(HostTarget(), broken_library, tmp_path_factory.mktemp("cache"))


def test_a_library_file_that_does_not_compile_fails_only_its_unit(broken_session):
    artefact = broken_session.artefact_for("bf16")
    units = UnitReport.load(artefact.path)
    assert "pool/fp16" in units.failed and "pool/fp32" in units.built
    assert {"linalg/fp32", "linalg/fp16"} <= set(units.built)
    assert "pulp_pooling_fp16.c" in units.library_failed
    # The unit's reason names the symbols it misses and the file that did not compile, with its error.
    reason = units.failed["pool/fp16"]
    assert "undefined reference to pulp_" in reason and "pulp_pooling_fp16.c" in reason and "error" in reason


def test_cases_of_the_failed_unit_are_build_failures_and_the_others_pass(broken_session):
    fp16_case, fp32_case = case_of(MAXPOOL, "bf16"), case_of(MAXPOOL, "fp32")
    results = broken_session.results_for(fp16_case, [v for v in MAXPOOL.variants() if v.case == fp16_case])
    assert results
    for result in results.values():
        assert result.failure.kind == failures.BUILD
        assert "runner unit pool/fp16 did not build" in result.failure.message
    results = broken_session.results_for(fp32_case, [v for v in MAXPOOL.variants() if v.case == fp32_case])
    assert results and all(r.passed for r in results.values())


def test_the_build_summary_names_what_was_built_and_what_not(broken_session):
    broken_session.artefact_for("bf16")
    compiler, line = broken_session.build_summary()
    assert compiler.startswith("bf16 compiler: ")  # which compiler, and what it computes in
    built, not_built = line.split("; NOT built: ")
    assert built.startswith("bf16: built ") and "pool/fp32" in built
    assert "pool/fp16" in not_built
    assert "library files that do not compile: pulp_pooling_fp16.c" in line


def test_first_error_keeps_the_error_line_and_explains_storage_only_types():
    output = ("a.c: In function 'f':\n"
              "a.c:3:9: error: invalid operands to binary * (have 'float16alt_storage_only' ...)\n"
              "    3 |   x = a * b;\n      |         ^\nmore\n")
    text = first_error(output)
    assert text.startswith("a.c:3:9: error: invalid operands") and "x = a * b" in text
    assert "no arithmetic type" in text


def test_first_error_in_a_header_shows_the_include_chain_that_reached_it():
    # clang's form: one line per level, the innermost last (an older
    # PULP-TrainLib's pulp_train.h includes an unguarded header a second time)
    clang = ("In file included from probe.c:1:\n"
             "In file included from lib/include/pulp_train.h:51:\n"
             "lib/include/pulp_dropout_fp32.h:32:8: error: redefinition of 'dropout_args_fp32'\n"
             "   32 | struct dropout_args_fp32{\n      |        ^\n"
             "lib/include/pulp_dropout_fp32.h:32:8: note: previous definition is here\n")
    text = first_error(clang)
    assert text.splitlines()[:3] == ["In file included from probe.c:1:",
                                     "In file included from lib/include/pulp_train.h:51:",
                                     "lib/include/pulp_dropout_fp32.h:32:8: error: redefinition of 'dropout_args_fp32'"]
    assert headline(clang) == "lib/include/pulp_dropout_fp32.h:32:8: error: redefinition of 'dropout_args_fp32'"
    # GCC's form: the innermost first, then "from" lines; a note before it is not part of the chain
    gcc = ("a.c: In function 'f':\n"
           "In file included from lib/include/pulp_train.h:27,\n"
           "                 from a.c:1:\n"
           "lib/include/pulp_train_defines.h:33:1: error: invalid vector type for attribute 'vector_size'\n")
    assert first_error(gcc).splitlines()[0] == "In file included from lib/include/pulp_train.h:27,"


def test_golden_bundles_are_regenerated_when_the_seed_or_the_catalogue_code_changes(tmp_path, monkeypatch):
    session = Session(HostTarget(), DEFAULT_LIBRARY, tmp_path)
    case = case_of(MAXPOOL, "fp32")
    session.bundle_for(case)
    session.bundle_for(case)
    assert session.golden.generated == 1
    monkeypatch.setattr(session_module, "GOLDEN_SEED", session_module.GOLDEN_SEED + 1)
    session.bundle_for(case)
    assert session.golden.generated == 2
    monkeypatch.setattr(session_module, "entry_source_digest", lambda entry: "other catalogue code")
    session.bundle_for(case)
    assert session.golden.generated == 3


def test_the_catalogue_digest_follows_the_entry_source_file(tmp_path, monkeypatch):
    import importlib
    import sys

    from harness import cases
    module = tmp_path / "my_catalogue.py"
    body = ("from harness.cases import OpEntry\n"
            "E = OpEntry(name='e', unit='pool', runner_op=str, steps=('fw',), dtypes=('fp32',), shapes=({{}},),\n"
            "            inputs=lambda c: {{'x': ({n},)}}, params=lambda c: {{}}, reference=lambda c, i: {{}})\n")
    module.write_text(body.format(n=1))
    monkeypatch.syspath_prepend(str(tmp_path))
    first = cases.entry_source_digest(importlib.import_module("my_catalogue").E)
    module.write_text(body.format(n=2))
    cases._files_digest.cache_clear()
    del sys.modules["my_catalogue"]
    second = cases.entry_source_digest(importlib.import_module("my_catalogue").E)
    assert first != second


def test_the_catalogue_digest_follows_the_golden_package(tmp_path, monkeypatch):
    """An edit to golden/ (the references every entry computes with) must
    regenerate the bundles, not only an edit to the catalogue module."""
    from harness import cases
    from harness.catalogue.training import RNN_SEQUENCE
    golden = tmp_path / "golden"
    golden.mkdir()
    (golden / "rnn.py").write_text("BOUND = 1\n")
    monkeypatch.setattr(cases, "GOLDEN_DIR", golden)
    cases._files_digest.cache_clear()
    first = cases.entry_source_digest(RNN_SEQUENCE)
    (golden / "rnn.py").write_text("BOUND = 2\n")
    cases._files_digest.cache_clear()
    assert cases.entry_source_digest(RNN_SEQUENCE) != first
    cases._files_digest.cache_clear()


def test_a_link_failure_shows_what_the_linker_could_not_find_not_only_that_it_failed():
    output = ("/usr/bin/ld: cannot find /usr/lib/llvm-19/lib/clang/19/lib/x86_64-pc-linux-gnu/libclang_rt.asan.a: "
              "No such file or directory\n"
              "clang-19: error: linker command failed with exit code 1 (use -v to see invocation)\n")
    assert first_error(output).startswith("/usr/bin/ld: cannot find /usr/lib/llvm-19/")
    assert headline(output).startswith("/usr/bin/ld: cannot find")


@pytest.fixture(scope="module")
def strideless_depthwise_session(tmp_path_factory):
    """lib_c whose FP32 depthwise struct has no stride_h/stride_w, as the
    published FP16 one has none (lib_c's own depthwise source then does not
    compile)."""
    root = tmp_path_factory.mktemp("lib") / "lib_c"
    shutil.copytree(DEFAULT_LIBRARY, root)
    header = root / "include" / "pulp_conv_dw_fp32.h"
    text = header.read_text()
    assert text.count("    int stride_h;\n    int stride_w;\n") == 1
    header.write_text(text.replace("    int stride_h;\n    int stride_w;\n", ""))
    return Session(HostTarget(), root, tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize("unit", ["train_dsblock/fp32", "train_ds_cnn/fp32", "conv_dw/fp32"])
def test_every_unit_that_sets_the_depthwise_strides_asks_the_probe_first(strideless_depthwise_session, unit):
    """The training units set stride 1 only where the struct has the fields:
    each compiles (the probe names the fields it lacks) and fails only at the
    link, for the depthwise functions the broken source did not provide."""
    units = UnitReport.load(strideless_depthwise_session.artefact_for("bf16").path)
    assert units.missing_fields[unit] == ["DepthWise_Conv_args.stride_h", "DepthWise_Conv_args.stride_w"]
    reason = units.failed[unit]
    source = f"ops_{unit.split('/')[0]}.c"
    assert reason.startswith(f"{source} does not link: undefined reference to pulp_conv_dw_fp32_"), reason
    assert f"{source}:" not in reason  # no error of its own


def test_a_query_in_a_header_that_the_unit_includes_from_its_directory_is_the_units(tmp_path):
    """A macro that several units share (dw_fields.h) asks in a header: the
    probe must answer it for each unit that includes it, once, and headers
    that are not in the unit's directory (ptl_op_dtype.h, which defines
    PTL_HAS_FIELD itself) are not read."""
    (tmp_path / "shared.h").write_text('#include "ptl_op_dtype.h"\n#include "shared.h"\n'
                                       "#define SHARED_HAS_BAR PTL_HAS_FIELD(Foo_args, bar)\n")
    unit = tmp_path / "ops_x.c"
    unit.write_text('#include "shared.h"\n#include "shared.h"\nint y = PTL_HAS_FUNC(baz);\n')
    assert field_queries(unit, "fp16") == [("Foo_args_fp16", "bar"), ("", "baz_fp16")]
    assert field_queries(unit, "fp32") == [("Foo_args", "bar"), ("", "baz")]
