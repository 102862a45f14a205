"""harness/catalogue/conv2d.py: the Conv2D cases, their coverage and their L1 footprints."""
import itertools
from collections import Counter

import numpy as np
import pytest

from harness.kernels import kernel_table
from harness.catalogue.conv2d import (CONV2D_BW, CONV2D_DIRECT, CONV2D_KERNEL_SWEEP, CONV2D_SHAPE_SWEEP, ENTRIES, IM2COL,
                                    IM2ROW, KERNEL_SWEEP, REALISTIC_FULL, REALISTIC_TILE_4, REALISTIC_TILE_8, geometry)

L1 = 64 * 1024
CONV_ENTRIES = (CONV2D_KERNEL_SWEEP, CONV2D_SHAPE_SWEEP, CONV2D_DIRECT)
ALL_CASES = [c for e in ENTRIES for c in e.cases()]


def _fits(case) -> bool:
    return sum(case.footprint.values()) <= L1


def test_case_and_variant_ids_are_unique():
    assert [i for i, n in Counter(c.id for c in ALL_CASES).items() if n > 1] == []
    ids = [v.id for e in ENTRIES for v in e.variants()]
    assert len(ids) == len(set(ids))


def test_every_geometry_gives_a_positive_output():
    for case in ALL_CASES:
        if "H" in case.shape:
            g = geometry(case)
            assert g.Ho >= 1 and g.Wo >= 1, case.id


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_every_kernel_index_meets_every_step_and_layout(dtype):
    seen = {(v.kernel, v.case.step, v.case.options["HWC"]) for v in CONV2D_KERNEL_SWEEP.variants()
            if v.case.dtype == dtype}
    assert seen == set(itertools.product(range(len(kernel_table(dtype))), ("fw", "wg", "ig"), (0, 1)))


def test_the_two_im2col_sweeps_share_no_shape():
    kernel_shapes = {c.shape_items for c in CONV2D_KERNEL_SWEEP.cases()}
    assert kernel_shapes.isdisjoint({c.shape_items for c in CONV2D_SHAPE_SWEEP.cases()})


def test_the_geometry_axes_the_mutations_need_are_covered():
    shapes = [geometry(c) for c in CONV2D_SHAPE_SWEEP.cases()]
    assert any(g.L != g.R for g in shapes) and any(g.U != g.D for g in shapes)
    assert any(g.sh != g.sw for g in shapes)
    assert any(g.U > g.Hk - 1 for g in shapes)                            # mod-1 top pad negative
    assert any((g.H + g.U + g.D - g.Hk) % g.sh for g in shapes)           # rows no window reaches
    assert any(g.Ho == g.Wo == 1 for g in shapes)


def test_dma_and_bias_options_apply_where_they_mean_something():
    for case in (c for e in CONV_ENTRIES for c in e.cases()):
        o = case.options
        assert not (case.step == "ig" and o["bias"]), case.id
        assert not (o["dma"] and not o["im2col"]), case.id
    assert {c.step for c in CONV2D_SHAPE_SWEEP.cases() if c.options["dma"]} == {"fw", "wg", "ig"}


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_the_full_realistic_layer_does_not_fit_on_the_im2col_path(dtype):
    cases = [c for c in CONV2D_SHAPE_SWEEP.cases() if c.shape == REALISTIC_FULL[0] and c.dtype == dtype]
    assert {c.step for c in cases} == {"fw", "wg", "ig"}
    assert not any(_fits(c) for c in cases)
    fw = next(c for c in cases if c.step == "fw" and not c.options["HWC"] and not c.options["bias"])
    assert fw.footprint["i2c_buffer"] == 16 * 9 * 16 * 16 * (4 if dtype == "fp32" else 2)


def test_the_full_realistic_layer_runs_only_in_fp16_on_the_direct_path():
    cases = [c for c in CONV2D_DIRECT.cases() if c.shape == REALISTIC_FULL[0]]
    assert all(_fits(c) == (c.dtype == "fp16") for c in cases)


@pytest.mark.parametrize("entry", [CONV2D_KERNEL_SWEEP, CONV2D_DIRECT], ids=["im2col", "direct"])
def test_the_4x4_tile_of_the_realistic_layer_fits_every_step_and_dtype(entry):
    cases = [c for c in entry.cases() if c.shape == REALISTIC_TILE_4[0]]
    assert {(c.dtype, c.step) for c in cases} == set(itertools.product(("fp32", "fp16"), ("fw", "wg", "ig")))
    assert all(_fits(c) for c in cases), [c.id for c in cases if not _fits(c)]


def test_the_8x8_tile_fits_fp16_on_the_im2col_path():
    cases = [c for c in CONV2D_SHAPE_SWEEP.cases() if c.shape == REALISTIC_TILE_8[0]]
    assert all(_fits(c) == (c.dtype == "fp16") for c in cases)


def test_realistic_layers_are_not_run_in_bf16():
    """Their reductions are beyond the bf16 error bound; the unrollings are
    copies and have no such limit."""
    realistic = REALISTIC_FULL + REALISTIC_TILE_8 + REALISTIC_TILE_4
    assert not [c.id for e in CONV_ENTRIES for c in e.cases() if c.dtype == "bf16" and c.shape in realistic]


def test_hwc_weight_gradient_on_the_im2col_path_counts_the_bt_buffer():
    """The API: for WG in HWC, bt_buffer holds output->diff transposed."""
    case = next(c for c in CONV2D_KERNEL_SWEEP.cases() if c.step == "wg" and c.options["HWC"] and c.dtype == "fp32")
    g = geometry(case)
    assert case.footprint["bt_buffer"] == 4 * g.Co * g.Ho * g.Wo
    ig = next(c for c in CONV2D_KERNEL_SWEEP.cases() if c.step == "ig" and c.dtype == "fp32")
    assert ig.footprint["bt_buffer"] == 4 * g.Co * g.Ci * g.Hk * g.Wk
    assert ig.footprint["i2c_buffer"] == 4 * g.Co * g.Hk * g.Wk * g.H * g.W
    chw = next(c for c in CONV2D_KERNEL_SWEEP.cases() if c.step == "wg" and not c.options["HWC"])
    assert "bt_buffer" not in chw.footprint


def test_step_bw_calls_bw_cl_on_both_paths_with_buffers_for_both_steps():
    """bw (pulp_conv2d_*_bw_cl: WG, then IG, in the same buffers) reads x, W
    and dy, writes dW (db) and dx, and needs the larger unrolling and
    transpose of the two steps."""
    assert {e.runner_op("fp32") for e in ENTRIES if "bw" in e.steps} == {"conv2d_fp32", "conv2d_direct_fp32"}
    case = next(c for c in CONV2D_BW.cases() if c.options["HWC"] and c.options["bias"] and c.dtype == "fp32")
    g = geometry(case)
    assert CONV2D_BW.params(case)["step"] == 3
    assert set(CONV2D_BW.reference(case, {k: np.ones(v) for k, v in CONV2D_BW.inputs(case).items()})) == \
        {"dW", "db", "dx"}
    assert case.footprint["i2c_buffer"] == 4 * max(g.Ci * g.Hk * g.Wk * g.Ho * g.Wo, g.Co * g.Hk * g.Wk * g.H * g.W)
    assert case.footprint["bt_buffer"] == 4 * max(g.Co * g.Ho * g.Wo, g.Co * g.Ci * g.Hk * g.Wk)
    assert {"input", "weights", "output_grad", "weight_grad", "bias_grad", "input_grad"} <= set(case.footprint)


def test_runner_params_follow_the_case():
    case = next(c for c in CONV2D_SHAPE_SWEEP.cases()
                if c.shape["sh"] == 2 and c.shape["sw"] == 1 and c.step == "wg" and c.options["HWC"]
                and c.options["bias"] and c.dtype == "fp32")
    assert CONV2D_SHAPE_SWEEP.params(case) == {
        "Ci": 2, "H": 7, "W": 6, "Co": 5, "Hk": 3, "Wk": 3, "stride_h": 2, "stride_w": 1,
        "Lpad": 1, "Rpad": 1, "Upad": 1, "Dpad": 1, "HWC": 1, "USE_BIASES": 1, "USE_DMA_IM2COL": 0, "step": 1}
    assert CONV2D_SHAPE_SWEEP.inputs(case) == {"x": (7, 6, 2), "W": (5, 3, 3, 2), "b": (5,), "dy": (4, 6, 5)}
    assert CONV2D_SHAPE_SWEEP.runner_op("bf16") == "conv2d_fp16"


def test_the_direct_path_runs_its_own_op_without_im2col_params():
    case = next(c for c in CONV2D_DIRECT.cases() if c.step == "fw" and c.dtype == "fp32")
    assert CONV2D_DIRECT.runner_op("fp32") == "conv2d_direct_fp32"
    assert not {"USE_IM2COL", "USE_DMA_IM2COL"} & set(CONV2D_DIRECT.params(case))


def test_unrolling_ops_get_both_described_inputs_and_read_the_one_mod_names():
    case = next(c for c in IM2COL.cases() if c.step == "ig")
    assert set(IM2COL.inputs(case)) == {"x", "dy"}
    assert IM2COL.params(case)["mod"] == 1
    assert {c.step: IM2ROW.params(c)["mod"] for c in IM2ROW.cases()} == {"fw": 0, "ig": 1}


# ---- features: lib_c beyond the published API (TRAINLIB_API.md, "Contract details") ----

FEATURES = {"dma_im2col", "any_stride", "hwc_padding", "hwc_direct"}
STRIDE3 = dict(Ci=2, H=8, W=8, Co=3, Hk=3, Wk=3, sh=3, sw=3, L=0, R=1, U=1, D=1)   # (8 + 2 - 3) % 3 != 0


def _find(entry, **want):
    """The case of `entry` whose dtype, step, shape and options are as given."""
    shape = want.pop("shape", None)
    matches = [c for c in entry.cases()
               if (shape is None or c.shape == shape)
               and all(getattr(c, k) == v for k, v in want.items() if k in ("dtype", "step"))
               and all(c.options[k] == v for k, v in want.items() if k not in ("dtype", "step"))]
    assert matches, want
    return matches[0]


def test_features_are_the_documented_ones_and_each_is_exercised():
    used = {f for c in ALL_CASES for f in c.features}
    assert used == FEATURES


def test_every_entry_step_and_dtype_also_tests_the_published_contract():
    for entry in ENTRIES:
        combos = {(c.dtype, c.step) for c in entry.cases()}
        plain = {(c.dtype, c.step) for c in entry.cases() if not c.features}
        assert plain == combos, (entry.name, entry.runner_op("fp32"), combos - plain)


def test_the_kernel_sweep_tests_every_kernel_on_the_published_contract():
    for dtype in ("fp32", "fp16"):
        seen = {(v.kernel, v.case.step, v.case.options["HWC"]) for v in CONV2D_KERNEL_SWEEP.variants()
                if v.case.dtype == dtype and not v.case.features}
        assert seen == set(itertools.product(range(len(kernel_table(dtype))), ("fw", "wg", "ig"), (0, 1)))


def test_the_stride_precondition_marks_mod0_only():
    assert "any_stride" in _find(CONV2D_SHAPE_SWEEP, shape=STRIDE3, step="fw", HWC=0, dma=0).features
    assert "any_stride" in _find(CONV2D_SHAPE_SWEEP, shape=STRIDE3, step="wg", HWC=0, dma=0).features
    assert _find(CONV2D_SHAPE_SWEEP, shape=STRIDE3, step="ig", HWC=0, dma=0).features == ()
    assert "any_stride" in _find(IM2ROW, shape=STRIDE3, step="fw", HWC=0, dma=0).features
    assert _find(IM2ROW, shape=STRIDE3, step="ig", HWC=1, dma=0).features == ()      # mod 1 ignores strides
    assert _find(CONV2D_DIRECT, shape=STRIDE3, step="fw", HWC=0).features == ()


def test_hwc_padding_marks_hwc_mod0_unrollings_with_padding():
    padded = CONV2D_KERNEL_SWEEP.shapes[1]          # the realistic 4x4 tile, padding 1
    assert "hwc_padding" in _find(CONV2D_KERNEL_SWEEP, shape=padded, dtype="fp32", step="fw", HWC=1).features
    assert "hwc_padding" in _find(CONV2D_KERNEL_SWEEP, shape=padded, dtype="fp32", step="wg", HWC=1).features
    assert _find(CONV2D_KERNEL_SWEEP, shape=padded, dtype="fp32", step="fw", HWC=0).features == ()
    assert _find(CONV2D_KERNEL_SWEEP, shape=padded, dtype="fp32", step="ig", HWC=1).features == ()
    for entry in (IM2COL, IM2ROW):
        assert _find(entry, shape=padded, dtype="fp32", step="fw", HWC=1, dma=0).features == ("hwc_padding",)
        assert _find(entry, shape=padded, dtype="fp32", step="ig", HWC=1, dma=0).features == ()


def test_dma_is_published_only_in_fp32_im2row_and_the_layers_hwc_forward():
    unpadded = KERNEL_SWEEP[0]
    assert _find(IM2ROW, shape=unpadded, dtype="fp32", step="fw", HWC=1, dma=1).features == ()
    assert _find(IM2ROW, shape=unpadded, dtype="fp32", step="ig", HWC=0, dma=1).features == ()
    assert _find(IM2ROW, shape=unpadded, dtype="fp32", step="ig", HWC=1, dma=1).features == ("dma_im2col",)
    assert _find(IM2ROW, shape=unpadded, dtype="bf16", step="fw", HWC=0, dma=1).features == ("dma_im2col",)
    assert _find(IM2COL, shape=unpadded, dtype="fp32", step="fw", HWC=0, dma=1).features == ("dma_im2col",)
    layer = CONV2D_SHAPE_SWEEP.shapes[0]             # all ones: no other feature
    assert _find(CONV2D_SHAPE_SWEEP, shape=layer, dtype="fp32", step="fw", HWC=1, dma=1).features == ()
    for dtype, step, hwc in (("fp32", "fw", 0), ("fp32", "wg", 1), ("fp32", "ig", 1), ("fp16", "fw", 1)):
        case = _find(CONV2D_SHAPE_SWEEP, shape=layer, dtype=dtype, step=step, HWC=hwc, dma=1)
        assert case.features == ("dma_im2col",), case.id


def test_the_direct_kernels_are_published_in_chw_only():
    assert {c.features for c in CONV2D_DIRECT.cases() if c.options["HWC"]} == {("hwc_direct",)}
    assert {c.features for c in CONV2D_DIRECT.cases() if not c.options["HWC"]} == {()}
