"""harness/cases.py and harness/catalogue/linalg.py: the cases and variants the suite generates."""
import itertools
from collections import Counter
from pathlib import Path

import pytest

from harness import catalogue
from harness.cases import STEP_CODES, Variant
from harness.kernels import kernel_table, kernel_tables
from harness.catalogue.linalg import ENTRIES, LINEAR, MATMUL, MATMUL_BIAS

ALL_VARIANTS = [v for entry in ENTRIES for v in entry.variants()]
MATMUL_CASES = MATMUL.cases()


def test_variant_ids_are_unique_across_the_catalogue():
    duplicates = [i for i, n in Counter(v.id for v in ALL_VARIANTS).items() if n > 1]
    assert duplicates == []


def test_case_ids_are_unique_across_the_catalogue():
    ids = [c.id for entry in ENTRIES for c in entry.cases()]
    assert len(ids) == len(set(ids))


def test_every_case_of_every_family_declares_its_footprint():
    """What a case's tensors take is what --l1-bytes judges (not_fit) and what
    GVSOC's heap places in L1, then L2 (the l2_bytes column)."""
    families = catalogue.families()
    assert len(families) >= 18, list(families)
    missing = [c.id for entries in families.values() for entry in entries for c in entry.cases() if not c.footprint]
    assert missing == []


def test_matmul_and_linear_give_at_least_3000_variants():
    by_family = Counter(v.case.entry.name for v in ALL_VARIANTS)
    assert set(by_family) == {"matmul", "matmul_alone", "matmul_bad_index", "linear", "linear_layer"}
    assert sum(by_family.values()) >= 3000


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_every_matmul_kernel_meets_every_trans_B_and_core_count(dtype):
    seen = {(v.kernel, v.case.options["trans_B"], v.cores)
            for v in MATMUL.variants() if v.case.dtype == dtype}
    expected = set(itertools.product(range(len(kernel_table(dtype))), (0, 1), (1, 2, 3, 4, 7, 8)))
    assert seen == expected


def test_kernel_tables_have_35_fp32_and_9_fp16_kernels():
    tables = kernel_tables()   # fp32: the API's 24 and lib_c's own 11
    assert (len(tables["fp32"]), len(tables["fp16"])) == (35, 9)
    assert tables["fp32"][12] == "mm_unroll_4x4" and tables["fp16"][3] == "mm_fp16_SIMD_4x8"
    assert kernel_table("bf16") is tables["fp16"]


def test_variant_kernel_name_rejects_an_index_outside_the_table():
    fp32_case = next(c for c in MATMUL_CASES if c.dtype == "fp32")
    fp16_case = next(c for c in MATMUL_CASES if c.dtype == "fp16")
    assert Variant(fp32_case, 23, 1).kernel_name == "mm_M_unroll_4x4"
    with pytest.raises(ValueError, match=r"index 9: valid indices are 0\.\.8"):
        Variant(fp16_case, 9, 1).kernel_name


@pytest.mark.parametrize("dim", ["N", "M", "K"])
def test_matmul_shapes_include_a_size_of_one_in_each_dimension(dim):
    assert any(c.shape[dim] == 1 for c in MATMUL_CASES)


def test_matmul_shapes_include_64x64x64():
    assert any(c.shape == {"N": 64, "M": 64, "K": 64} for c in MATMUL_CASES)


@pytest.mark.parametrize("dim", ["N", "M", "K"])
def test_matmul_shapes_hit_below_at_and_above_every_unroll_factor(dim):
    sizes = {c.shape[dim] for c in MATMUL_CASES}
    for unroll in (2, 4, 8):
        assert {unroll - 1, unroll, unroll + 1} <= sizes, (dim, unroll, sorted(sizes))


def test_linear_input_gradient_has_no_bias_option():
    steps_with_bias = {c.step for c in LINEAR.cases() if c.options["bias"]}
    assert steps_with_bias == {"fw", "wg"}
    assert any(c.step == "ig" for c in LINEAR.cases())


def test_variant_id_and_description_name_every_axis():
    variant = next(v for v in MATMUL.variants()
                   if v.case.dtype == "fp16" and v.case.shape == {"N": 7, "M": 8, "K": 9}
                   and v.case.options["trans_B"] == 1 and v.kernel == 3 and v.cores == 7)
    assert variant.id == "matmul-fp16-fw-N7xM8xK9-trans_B1-bias0-mm_fp16_SIMD_4x8-c7"
    assert variant.describe("qemu") == ("variant: matmul fw fp16 N=7 M=8 K=9 trans_B=1 bias=0 "
                                        "kernel=mm_fp16_SIMD_4x8 (#3) cores=7 target=qemu")


def test_case_description_is_what_the_golden_key_needs():
    case = next(c for c in LINEAR.cases() if c.step == "wg" and c.options["bias"] == 1)
    assert case.description() == {"entry": "linear", "dtype": case.dtype, "step": "wg",
                                  "shape": case.shape, "options": {"bias": 1}}


def test_runner_params_and_input_shapes_follow_the_case():
    case = next(c for c in MATMUL_CASES if c.shape == {"N": 9, "M": 4, "K": 8} and c.options["trans_B"] == 1)
    assert MATMUL.params(case) == {"N": 9, "M": 4, "K": 8, "trans_B": 1, "bias": 0}
    assert MATMUL.inputs(case) == {"A": (9, 8), "B": (4, 8), "bias": (4,)}
    per_row = next(c for c in MATMUL_CASES if c.shape == {"N": 9, "M": 4, "K": 8} and c.options["bias"] == 2)
    assert MATMUL.params(per_row)["bias"] == 2 and MATMUL.inputs(per_row)["bias"] == (9,)


def test_the_matmul_bias_is_checked_both_ways_on_shapes_where_the_axes_differ():
    biased = [c for c in MATMUL_CASES if c.options["bias"]]
    # per column, per row, and a bias given with USE_BIASES 0 (`unused`), on the same shapes
    assert {c.options["bias"] for c in biased} == {MATMUL_BIAS["per_column"], MATMUL_BIAS["per_row"],
                                                   MATMUL_BIAS["unused"]}
    assert all(c.options["trans_B"] == 0 and c.shape["N"] != c.shape["M"] for c in biased)
    assert {c.dtype for c in biased} == {"fp32", "fp16", "bf16"}
    assert MATMUL.runner_op("bf16") == "matmul_fp16" and MATMUL.runner_op("fp32") == "matmul_fp32"


def test_the_ds_cnn_step_reads_its_sizes_from_the_network_and_refuses_one_it_does_not_build(tmp_path, monkeypatch):
    from harness.catalogue import training
    assert training.DS_CNN_SHAPE["C"] == 64 and training.DS_CNN_SHAPE["K"] == 12
    # one row of config per pass of ds_cnn_passes.def, the one list the C op compiles
    config = training.DS_CNN_CONFIGS[1].tensor()
    assert config.shape == (len(training.ds_cnn_passes()), 3) and (config[:, 0] > 0).all()
    changed = training.DS_CNN_NETWORK.read_text().replace("Co = 64\nH = 25", "Co = 32\nH = 25", 1)
    assert changed != training.DS_CNN_NETWORK.read_text()
    (tmp_path / "ds_cnn.toml").write_text(changed)
    monkeypatch.setattr(training, "DS_CNN_NETWORK", tmp_path / "ds_cnn.toml")
    with pytest.raises(ValueError, match=r"pw1 has \{'Co': 32\}"):
        training._ds_cnn_shape()


def test_a_ds_cnn_config_that_does_not_fit_is_not_fit_and_a_wrong_one_is_bad_case():
    """Fixed tiles whose two sets do not fit the near arena: the runner's
    NO_MEMORY, reported not_fit with the op's reason; a kernel index the
    table has not: bad_case, naming what a config row must hold."""
    from harness import failures
    from harness.session import Session
    from harness.target import DEFAULT_LIBRARY
    from harness.targets.host import HostTarget
    from harness.catalogue import training
    from tests.board_support import CACHE
    whole_pw1 = training.ds_cnn_config("pw1 FW whole", lambda p: (0, {"Co": 64, "H": 25} if (p.layer, p.step)
                                                                   == ("pw1", "fw") else {}))
    no_such_kernel = training.ds_cnn_config("kernel 99", lambda p: (99, {}))
    entry = training.ds_cnn_step_entry((whole_pw1, no_such_kernel), shapes=(training.DS_CNN_SHAPE,))
    session = Session(HostTarget(), DEFAULT_LIBRARY, CACHE)
    outcome = {}
    for case in entry.cases():
        variant = Variant(case, 0, 1)
        outcome[case.options["config"]] = session.results_for(case, [variant])[variant].failure
    assert outcome[whole_pw1.id].kind == failures.NOT_FIT
    assert "do not fit near_bytes" in str(outcome[whole_pw1.id])
    assert outcome[no_such_kernel.id].kind == failures.BAD_CASE
    assert "a config row is a kernel index of the fp32 table" in str(outcome[no_such_kernel.id])


def test_every_step_param_is_the_runners_code_for_the_cases_step():
    """The runner ops read `step` as enum ptl_step (ptl_runner.h); the
    catalogue sends the code of the case's step name, read from that header.
    A step name the header has not (a typo, a new step) fails here."""
    header = (Path(__file__).resolve().parent.parent / "harness" / "runtime" / "include" / "ptl_runner.h").read_text()
    assert "PTL_STEP_FW = 0" in header and "PTL_STEP_SUMNODE_BW" in header
    sent = Counter()
    for entries in catalogue.families().values():
        for case in (c for entry in entries for c in entry.cases()):
            params = case.entry.params(case)
            if "step" in params:
                assert params["step"] == STEP_CODES[case.step], case.id
                sent[case.step] += 1
    assert set(sent) == {"fw", "wg", "ig", "bw", "sumnode_bw"}, sent
