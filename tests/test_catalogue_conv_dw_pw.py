"""harness/catalogue/conv_dw_pw.py: what the pointwise, depthwise and
transposed-convolution cases cover."""
import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from golden.formats import format_named
from harness.kernels import kernel_table
from harness.target import Capabilities
from harness.catalogue import conv_dw_pw
from harness.catalogue.conv_dw_pw import (CONV_DW, CONV_PW_KERNEL_SWEEP, CONV_PW_LAYER, CONV_PW_SHAPE_SWEEP, ENTRIES,
                                        TRANSP_CONV2D_DIRECT, TRANSP_CONV2D_KERNEL_SWEEP,
                                        TRANSP_CONV2D_SHAPE_SWEEP)

ROOT = Path(__file__).resolve().parent.parent
L1_BYTES = Capabilities.__dataclass_fields__["l1_bytes"].default


def test_variant_ids_are_unique_with_the_linear_algebra_family():
    from harness.catalogue import linalg  # here: that catalogue's state must not stop the tests of this one

    ids = Counter(v.id for entry in ENTRIES + linalg.ENTRIES for v in entry.variants())
    assert [i for i, n in ids.items() if n > 1] == []


KERNEL_SWEEPS = [CONV_PW_KERNEL_SWEEP, TRANSP_CONV2D_KERNEL_SWEEP]
SHAPE_SWEEPS = [CONV_PW_SHAPE_SWEEP, TRANSP_CONV2D_SHAPE_SWEEP]


@pytest.mark.parametrize("entry", KERNEL_SWEEPS, ids=lambda e: e.name)
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_kernel_sweeps_meet_every_kernel_with_every_core_count_in_every_step_and_layout(entry, dtype):
    seen = {(v.case.step, v.case.options["HWC"], v.kernel, v.cores) for v in entry.variants() if v.case.dtype == dtype}
    kernels = range(len(kernel_table(dtype)))
    assert seen == set(itertools.product(("fw", "wg", "ig"), (0, 1), kernels, entry.cores))
    assert {1, 8} <= set(entry.cores) and any(8 % c for c in entry.cores)  # a core count that leaves leftovers


@pytest.mark.parametrize("entry", SHAPE_SWEEPS, ids=lambda e: e.name)
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_shape_sweeps_run_a_row_split_and_a_column_split_kernel(entry, dtype):
    names = {v.kernel_name for v in entry.variants() if v.case.dtype == dtype}
    assert len(names) == 2 and sum(n.startswith("mm_M") for n in names) == 1, names


def test_pointwise_sweeps_put_1_on_every_matmul_axis_and_7_to_10_in_the_kernel_sweep():
    assert dict(Ci=1, Co=1, H=1, W=1) in CONV_PW_SHAPE_SWEEP.shapes
    kernel_sizes = {v for s in CONV_PW_KERNEL_SWEEP.shapes for v in (s["Ci"], s["Co"], s["H"] * s["W"])}
    assert {7, 8, 9, 10} <= kernel_sizes


def test_the_transposed_kernel_sweep_puts_every_matmul_dimension_off_the_unroll_factors():
    s = TRANSP_CONV2D_KERNEL_SWEEP.shapes[0]
    taps = s["Hk"] * s["Wk"]
    Ho, Wo = conv_dw_pw.tc_output_size(s)
    dims = {s["Ci"], s["Co"], s["H"] * s["W"], Ho * Wo, s["Ci"] * taps, s["Co"] * taps}
    assert all(d % 2 for d in dims), dims


@pytest.mark.parametrize("entry", [CONV_DW, TRANSP_CONV2D_DIRECT], ids=lambda e: e.name)
def test_direct_kernels_run_one_variant_per_core_count(entry):
    assert {v.kernel_name for v in entry.variants()} == {"direct"}
    assert set(entry.cores) == {1, 2, 3, 4, 7, 8}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_every_shape_runs_in_both_layouts_and_every_step(entry):
    """Both layouts, except the whole tiled pointwise layer, which is CHW only."""
    assert entry.steps in (("fw", "wg", "ig"), ("bw",))
    layouts = (0,) if entry is CONV_PW_LAYER else (0, 1)
    for shape in entry.shapes:
        cases = {(c.step, c.options["HWC"]) for c in entry.cases() if c.shape == shape}
        assert cases == set(itertools.product(entry.steps, layouts)), shape


def test_every_bw_cl_entry_point_is_called_on_each_path():
    """pulp_conv_pw/conv_dw/transp_conv2d_*_bw_cl, the calls a training step
    makes, each have cases of step bw (the transposed one on both paths)."""
    bw = {(e.name, e.runner_op("fp32")) for e in ENTRIES if "bw" in e.steps}
    assert bw == {("conv_pw", "conv_pw_fp32"), ("conv_dw", "conv_dw_fp32"), ("transp_conv2d", "transp_conv2d_fp32"),
                  ("transp_conv2d", "transp_conv2d_direct_fp32")}


@pytest.mark.parametrize("entry", [CONV_DW, TRANSP_CONV2D_DIRECT], ids=lambda e: e.name)
def test_geometries_tell_the_sides_and_the_axes_apart(entry):
    shapes = entry.shapes
    assert any(s["L"] != s["R"] for s in shapes) and any(s["U"] != s["D"] for s in shapes)
    assert any(s["L"] != s["U"] for s in shapes)
    assert any(s["sh"] != s["sw"] for s in shapes) and any(min(s["sh"], s["sw"]) > 1 for s in shapes)
    assert any(s["Hk"] != s["Wk"] for s in shapes)
    assert any(s["H"] == s["W"] == s["Hk"] == s["Wk"] == 1 for s in shapes)


def test_transposed_shapes_include_negative_pads_and_strides_longer_than_the_kernel():
    assert any(min(s["L"], s["R"], s["U"], s["D"]) < 0 for s in TRANSP_CONV2D_SHAPE_SWEEP.shapes)
    assert any(s["sh"] > s["Hk"] and s["sw"] > s["Wk"] for s in TRANSP_CONV2D_SHAPE_SWEEP.shapes)
    assert TRANSP_CONV2D_DIRECT.shapes == TRANSP_CONV2D_KERNEL_SWEEP.shapes + TRANSP_CONV2D_SHAPE_SWEEP.shapes


def test_depthwise_shapes_include_pads_at_least_the_kernel_and_a_kernel_larger_than_the_input():
    assert any(max(s["L"], s["D"]) >= max(s["Hk"], s["Wk"]) for s in CONV_DW.shapes)
    assert any(s["Hk"] > s["H"] for s in CONV_DW.shapes)


@pytest.mark.parametrize("entry,shape", [
    (CONV_DW, dict(C=32, H=8, W=8, Hk=3, Wk=3, sh=1, sw=1, L=1, R=1, U=1, D=1)),
    (CONV_PW_KERNEL_SWEEP, dict(Ci=32, Co=64, H=8, W=8)),
], ids=["depthwise_3x3_32ch_8x8", "pointwise_32to64_8x8"])
def test_the_tinyml_layers_run_in_every_dtype_step_and_layout_within_the_default_l1(entry, shape):
    cases = [c for c in entry.cases() if c.shape == shape]
    assert len(cases) == 3 * 3 * 2
    assert max(sum(c.footprint.values()) for c in cases) <= L1_BYTES


def test_pointwise_footprint_counts_the_transpose_buffer_where_the_header_says():
    case = next(c for c in CONV_PW_KERNEL_SWEEP.cases() if c.shape == dict(Ci=32, Co=64, H=8, W=8) and c.dtype == "fp32"
                and c.step == "ig" and c.options["HWC"] == 0)
    assert case.footprint == {"W": 32 * 64 * 4, "dy": 64 * 64 * 4, "dx": 32 * 64 * 4, "transpose_buffer": 32 * 64 * 4}
    hwc_wg = next(c for c in CONV_PW_KERNEL_SWEEP.cases() if c.shape == case.shape and c.dtype == "fp32"
                  and c.step == "wg" and c.options["HWC"] == 1)
    assert conv_dw_pw.pw_transpose_elements(hwc_wg) == 32 * 8 * 8  # Ci*H*W: the input, transposed
    hwc_ig = next(c for c in CONV_PW_KERNEL_SWEEP.cases() if c.shape == case.shape and c.dtype == "fp32"
                  and c.step == "ig" and c.options["HWC"] == 1)
    assert conv_dw_pw.pw_transpose_elements(hwc_ig) == 32 * 64  # W transposed, in HWC too
    assert CONV_PW_KERNEL_SWEEP.inputs(hwc_ig)["W"] == (32, 64) and CONV_PW_KERNEL_SWEEP.inputs(case)["W"] == (64, 32)


def test_every_reduction_has_a_meaningful_bound_in_bfloat16():
    """n * u < 1/2 (harness/compare.py), or the case would be reported bad_case."""
    u = format_named("bf16").unit_roundoff
    for entry in ENTRIES:
        for case in (c for c in entry.cases() if c.dtype == "bf16"):
            zeros = {name: np.zeros(shape) for name, shape in entry.inputs(case).items()}
            for name, ref in entry.reference(case, zeros).items():
                assert ref.reduction * u < 0.5, (case.id, name, ref.reduction)


def test_runner_params_follow_the_case():
    case = next(c for c in TRANSP_CONV2D_SHAPE_SWEEP.cases() if c.shape["Ci"] == 2 and c.shape["R"] == -1
                and c.step == "wg" and c.options["HWC"] == 1 and c.options["bias"] == 1 and c.dtype == "fp32")
    assert TRANSP_CONV2D_SHAPE_SWEEP.params(case) == {
        "Ci": 2, "H": 3, "W": 3, "Co": 2, "Hk": 3, "Wk": 3, "stride_h": 2, "stride_w": 2,
        "inLpad": 0, "inRpad": -1, "inUpad": 0, "inDpad": -1, "HWC": 1, "USE_BIASES": 1, "step": 1}
    assert TRANSP_CONV2D_SHAPE_SWEEP.inputs(case) == {"x": (3, 3, 2), "W": (2, 3, 3, 2), "b": (2,), "dy": (8, 8, 2)}
    assert TRANSP_CONV2D_SHAPE_SWEEP.runner_op("bf16") == "transp_conv2d_fp16"
    direct = next(c for c in TRANSP_CONV2D_DIRECT.cases() if c.shape == case.shape and c.step == "wg")
    assert TRANSP_CONV2D_DIRECT.runner_op("fp32") == "transp_conv2d_direct_fp32" and direct.id.endswith("-im2col0")
    assert TRANSP_CONV2D_DIRECT.params(direct) == TRANSP_CONV2D_SHAPE_SWEEP.params(case) | {"HWC": 0, "USE_BIASES": 0}


@pytest.mark.parametrize("entry,unit", [(CONV_PW_KERNEL_SWEEP, "conv_pw"), (CONV_PW_SHAPE_SWEEP, "conv_pw"),
                                        (CONV_DW, "conv_dw"), (TRANSP_CONV2D_KERNEL_SWEEP, "transp_conv2d"),
                                        (TRANSP_CONV2D_SHAPE_SWEEP, "transp_conv2d"),
                                        (TRANSP_CONV2D_DIRECT, "transp_conv2d")], ids=lambda e: getattr(e, "name", e))
def test_each_api_family_runs_in_a_unit_of_its_own(entry, unit):
    """One unit per API family: a library that lacks a field of one family's
    struct (the published FP16 depthwise args have no strides) fails only that family."""
    assert entry.unit == unit and (ROOT / "harness" / "runtime" / "runner" / f"ops_{unit}.c").is_file()


def test_features_mark_exactly_the_cases_beyond_the_published_contract():
    """Published: pointwise in both layouts, depthwise in CHW, transposed conv
    direct (USE_IM2COL = 0) in CHW. Everything else is lib_c's."""
    for entry in ENTRIES:
        for case in entry.cases():
            o, expected = case.options, set()
            if entry.name == "conv_dw" and o["HWC"]:
                expected.add("hwc_depthwise")
            if entry.name == "transp_conv2d":
                expected |= {"transp_im2col"} if o["im2col"] else set()
                expected |= {"hwc_transp"} if o["HWC"] else set()
                expected |= {"negative_crop"} if min(case.shape[p] for p in "LRUD") < 0 else set()
            assert set(case.features) == expected, case.id
    published = [c for c in TRANSP_CONV2D_DIRECT.cases() if not c.features]
    assert published and {c.options["HWC"] for c in published} == {0}


def test_depthwise_params_are_named_as_the_api_fields():
    case = next(c for c in CONV_DW.cases() if c.shape["C"] == 9 and c.options["HWC"] == 0 and c.step == "ig")
    assert CONV_DW.params(case) == {"C": 9, "H": 11, "W": 10, "Hk": 5, "Wk": 4, "stride_h": 3, "stride_w": 2,
                                    "Lpad": 2, "Rpad": 1, "Upad": 0, "Dpad": 2, "HWC": 0, "step": 2}
