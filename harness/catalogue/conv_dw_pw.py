"""Catalogue of the pointwise, depthwise and transposed-convolution family.

Shapes carry the whole geometry (sizes, strides, pads), so every case names
it in its id. They cover a 1x1 everything, primes, sizes around the unroll
factors and the core counts, asymmetric pads, different strides per axis,
kernels larger than the input, pads at least the kernel size, negative
(output_padding) pads, and the realistic TinyML layers (depthwise 3x3 on 32
channels of 8x8, pointwise 32->64 on 8x8). Each case runs in CHW and in HWC.

The matmul-based layers split their variants as the conv2d catalogue does:
  kernel sweep   every matmul kernel index x every step x both layouts, on
                 shapes whose products (N, M, K) sit off (and at) the unroll
                 factors, and on the realistic layer;
  shape sweep    the other shapes with one row-split and one column-split
                 kernel (the largest tiles);
  direct         (transposed conv, USE_IM2COL = 0) every shape.
The depthwise convolution has direct kernels only: one variant per core count.
Step bw (both gradients from one _bw_cl call, the entry point a training
step calls, which no other step reaches) runs on a few shapes of each.

Every reduction stays below 128 terms, so that the bfloat16 error bound
means something (harness/compare.py).

Each API family runs in a runner unit of its own (ops_conv_pw.c,
ops_conv_dw.c, ops_transp_conv2d.c), so a library whose struct of one family
lacks a field (the published FP16 DepthWise_Conv_args has no strides) fails
only that family and dtype.

Features (OpEntry.features): what a case uses of lib_c beyond the published
API (shared/TRAINLIB_API.md, "Contract details checked against the published
library"):
  hwc_depthwise  depthwise in HWC: the published depthwise never reads HWC
  transp_im2col  transposed convolution with USE_IM2COL = 1
  hwc_transp     transposed convolution in HWC
  negative_crop  transposed convolution with a negative pad: the page has
                 the pads crop the output (Ho = (H-1) sh + Hk - Upad - Dpad);
                 a negative crop, which lib_c reads as a border of zeros
                 (torch's output_padding beyond its padding), it does not
                 mention
(the published transposed convolution implements only USE_IM2COL = 0 in CHW).
Pointwise HWC is published: its weights are Ci x Co there.
"""
from __future__ import annotations

from dataclasses import replace

from golden import conv_dw_pw
from harness.cases import Case, OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes
from harness.catalogue.linalg import SHAPE_SWEEP_KERNELS

STEPS = ("fw", "wg", "ig")
# The runner's step param; bw is both gradients from one _bw_cl call (WG,
# then IG, in the same work buffers), as a training step calls it.




def _chw(hwc: int, c: int, h: int, w: int) -> tuple[int, int, int]:
    return (h, w, c) if hwc else (c, h, w)


def _geometry(s: dict) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    return (s["sh"], s["sw"]), (s["L"], s["R"], s["U"], s["D"])


# What each step reads and writes, by tensor name.
TOUCHED = {"fw": ("x", "W", "y"), "wg": ("x", "dy", "dW"), "ig": ("W", "dy", "dx"),
           "bw": ("x", "W", "dy", "dW", "dx")}


def _l1(case: Case, elements: dict[str, int], names: tuple[str, ...]) -> dict[str, int]:
    """L1 bytes of the named tensors, from their element counts."""
    return {name: elements[name] * element_bytes(case.dtype) for name in names}


# ---- pointwise -------------------------------------------------------------------


# (Ci, Co, H, W). The matmul is Co x Ci x HW (CHW) or HW x Ci x Co (HWC).
# W is Co x Ci in CHW and Ci x Co in HWC, as the published API has it.
PW_KERNEL_SWEEP = tuple(dict(Ci=ci, Co=co, H=h, W=w) for ci, co, h, w in (
    (8, 9, 3, 3), (7, 4, 5, 2),  # 7-10 on every matmul axis: below, at and above the unroll factors
    (32, 64, 8, 8),              # the TinyML layer
))
PW_SHAPE_SWEEP = tuple(dict(Ci=ci, Co=co, H=h, W=w) for ci, co, h, w in (
    (1, 1, 1, 1), (3, 5, 1, 7), (16, 3, 4, 4), (2, 17, 3, 1),
))


def _pw_inputs(c: Case) -> dict[str, tuple[int, ...]]:
    s, hwc = c.shape, c.options["HWC"]
    return {"x": _chw(hwc, s["Ci"], s["H"], s["W"]), "W": (s["Ci"], s["Co"]) if hwc else (s["Co"], s["Ci"]),
            "dy": _chw(hwc, s["Co"], s["H"], s["W"])}


def pw_transpose_elements(c: Case) -> int:
    """transpose_buffer as the published contract sizes it (shared/TRAINLIB_API.md):
    Ci*Co for IG in both layouts, Ci*H*W for WG in HWC, else unused; bw
    the larger of WG's and IG's."""
    s, hwc = c.shape, c.options["HWC"]
    ig = s["Ci"] * s["Co"] if c.step in ("ig", "bw") else 0
    wg = s["Ci"] * s["H"] * s["W"] if c.step in ("wg", "bw") and hwc else 0
    return max(ig, wg)


def _pw_footprint(c: Case) -> dict[str, int]:
    s = c.shape
    x, y, w = s["Ci"] * s["H"] * s["W"], s["Co"] * s["H"] * s["W"], s["Ci"] * s["Co"]
    elements = {"x": x, "dx": x, "y": y, "dy": y, "W": w, "dW": w, "transpose_buffer": pw_transpose_elements(c)}
    return _l1(c, elements, TOUCHED[c.step] + ("transpose_buffer",))


def _pw_params(c: Case) -> dict[str, int]:
    s = c.shape
    return {"Ci": s["Ci"], "Co": s["Co"], "H": s["H"], "W": s["W"], "HWC": c.options["HWC"],
            "step": c.step_code}


def _pointwise(shapes, steps=STEPS, **variants) -> OpEntry:
    return OpEntry(
        name="conv_pw",
        unit="conv_pw",
        runner_op=lambda dtype: f"conv_pw_{build_of(dtype)}",
        steps=steps,
        dtypes=DTYPES,
        shapes=shapes,
        options={"HWC": (0, 1)},
        inputs=_pw_inputs,
        params=_pw_params,
        reference=lambda c, inputs: conv_dw_pw.pointwise(inputs, c.step, c.options["HWC"]),
        cores=(1, 3, 8),
        footprint=_pw_footprint,
        **variants,
    )


CONV_PW_KERNEL_SWEEP = _pointwise(PW_KERNEL_SWEEP)
CONV_PW_SHAPE_SWEEP = _pointwise(PW_SHAPE_SWEEP, kernels=lambda dtype, step: SHAPE_SWEEP_KERNELS[dtype])
# bw: pulp_conv_pw_*_bw_cl, the entry point a training step calls.
CONV_PW_BW = _pointwise(PW_KERNEL_SWEEP[:2] + PW_SHAPE_SWEEP[1:2], steps=("bw",),
                        kernels=lambda dtype, step: SHAPE_SWEEP_KERNELS[dtype])


# ---- a whole pointwise layer, tiled (issue 26) ----------------------------------------
# conv_pw_layer (ops_conv_pw.c): the layer's tensors in far memory (L2 on
# GVSOC), each tile moved into L1 and its output out by the DMA,
# double-buffered; the measured region is the whole layer. CHW. A shape is
# the layer's sizes and its tile sizes: FW cuts Co x H, WG Co x Ci, IG Ci x H
# (the tiler's axes, harness/autotune/layers.py); tCi of FW, tH of WG and tCo
# of IG are the whole axis. The reference is the whole layer's: the tiles
# write disjoint slices, each computed over its whole reduction.
PW_LAYER_TILE_AXES = {"fw": ("Co", "H"), "wg": ("Co", "Ci"), "ig": ("Ci", "H")}
PW_LAYER_SHAPES = tuple(dict(Ci=ci, Co=co, H=h, W=w, tCo=tco, tCi=tci, tH=th) for ci, co, h, w, tco, tci, th in (
    (8, 9, 5, 3, 4, 3, 2),      # edge tiles on every axis
    (6, 5, 4, 2, 5, 6, 4),      # one tile: the whole layer
    (16, 12, 7, 4, 5, 7, 3),    # 3 x 3 tiles
))


def pw_layer_tile(c: Case) -> dict[str, int]:
    """The sizes of a layer case's first (largest) tile, as one pointwise call sees them."""
    s = dict(c.shape)
    for axis in PW_LAYER_TILE_AXES[c.step]:
        s[axis] = s[f"t{axis}"]
    return {k: s[k] for k in ("Ci", "Co", "H", "W")}


def _pw_layer_footprint(c: Case) -> dict[str, int]:
    """L1: two sets of the largest tile's buffers (its two inputs and its
    output) and one transpose buffer; the layer's tensors are in L2."""
    tile = replace(c, shape_items=tuple(pw_layer_tile(c).items()))
    one = _pw_footprint(tile)
    return {**{f"{name} x2": 2 * size for name, size in one.items() if name != "transpose_buffer"},
            "transpose_buffer": one["transpose_buffer"]}


def _pw_layer_params(c: Case) -> dict[str, int]:
    return {**_pw_params(c), **{k: c.shape[k] for k in ("tCo", "tCi", "tH")}}


def _pw_layer(shapes, **variants) -> OpEntry:
    return OpEntry(
        name="conv_pw_layer",
        unit="conv_pw",
        runner_op=lambda dtype: f"conv_pw_layer_{build_of(dtype)}",
        steps=STEPS,
        dtypes=DTYPES,
        shapes=shapes,
        options={"HWC": (0,)},
        inputs=_pw_inputs,
        params=_pw_layer_params,
        reference=lambda c, inputs: conv_dw_pw.pointwise(inputs, c.step, 0),
        cores=(1, 8),
        footprint=_pw_layer_footprint,
        **variants,
    )


CONV_PW_LAYER = _pw_layer(PW_LAYER_SHAPES, kernels=lambda dtype, step: SHAPE_SWEEP_KERNELS[dtype])


# ---- depthwise -------------------------------------------------------------------

def _geo(C, H, W, Hk, Wk, sh, sw, L, R, U, D) -> dict:
    return dict(C=C, H=H, W=W, Hk=Hk, Wk=Wk, sh=sh, sw=sw, L=L, R=R, U=U, D=D)


DW_SHAPES = (
    _geo(32, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1),   # the TinyML layer: 3x3 on 32 channels of 8x8
    _geo(1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0),
    _geo(3, 7, 6, 3, 3, 1, 1, 2, 0, 0, 1),    # asymmetric pads: L != R, U != D
    _geo(5, 9, 7, 3, 2, 2, 1, 1, 0, 1, 1),    # stride_h != stride_w
    _geo(4, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1),    # stride 2: the last input row is read by no output
    _geo(9, 11, 10, 5, 4, 3, 2, 2, 1, 0, 2),  # strides 3 and 2, kernel 5x4
    _geo(2, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1),    # kernel larger than the input
    _geo(7, 4, 4, 2, 2, 1, 1, 3, 0, 0, 2),    # pads >= the kernel: outputs that read only padding
    _geo(3, 6, 5, 3, 3, 1, 1, 0, 0, 0, 0),    # neither pads nor strides: tells a padding bug from the rest
    _geo(4, 7, 9, 3, 3, 2, 2, 0, 0, 0, 0),    # strides without pads
)


def dw_output_size(s: dict) -> tuple[int, int]:
    return ((s["H"] + s["U"] + s["D"] - s["Hk"]) // s["sh"] + 1,
            (s["W"] + s["L"] + s["R"] - s["Wk"]) // s["sw"] + 1)


def _dw_inputs(c: Case) -> dict[str, tuple[int, ...]]:
    s, hwc = c.shape, c.options["HWC"]
    Ho, Wo = dw_output_size(s)
    return {"x": _chw(hwc, s["C"], s["H"], s["W"]),
            "W": (s["Hk"], s["Wk"], s["C"]) if hwc else (s["C"], s["Hk"], s["Wk"]),
            "dy": _chw(hwc, s["C"], Ho, Wo)}


def _dw_footprint(c: Case) -> dict[str, int]:
    s = c.shape
    Ho, Wo = dw_output_size(s)
    x, y, w = s["C"] * s["H"] * s["W"], s["C"] * Ho * Wo, s["C"] * s["Hk"] * s["Wk"]
    return _l1(c, {"x": x, "dx": x, "y": y, "dy": y, "W": w, "dW": w}, TOUCHED[c.step])


def _dw_params(c: Case) -> dict[str, int]:
    s = c.shape
    return {"C": s["C"], "H": s["H"], "W": s["W"], "Hk": s["Hk"], "Wk": s["Wk"],
            "stride_h": s["sh"], "stride_w": s["sw"], "Lpad": s["L"], "Rpad": s["R"], "Upad": s["U"],
            "Dpad": s["D"], "HWC": c.options["HWC"], "step": c.step_code}


CONV_DW = OpEntry(
    name="conv_dw",
    unit="conv_dw",
    runner_op=lambda dtype: f"conv_dw_{build_of(dtype)}",
    steps=STEPS,
    dtypes=DTYPES,
    shapes=DW_SHAPES,
    options={"HWC": (0, 1)},
    inputs=_dw_inputs,
    params=_dw_params,
    reference=lambda c, inputs: conv_dw_pw.depthwise(inputs, c.step, c.options["HWC"], *_geometry(c.shape)),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=_dw_footprint,
    features=lambda c: ("hwc_depthwise",) if c.options["HWC"] else (),
)
# bw: pulp_conv_dw_*_bw_cl, the entry point a training step calls.
CONV_DW_BW = replace(CONV_DW, steps=("bw",), shapes=DW_SHAPES[1:6])


# ---- transposed convolution -----------------------------------------------------

def _tgeo(Ci, Co, H, W, Hk, Wk, sh, sw, L, R, U, D) -> dict:
    return dict(Ci=Ci, Co=Co, H=H, W=W, Hk=Hk, Wk=Wk, sh=sh, sw=sw, L=L, R=R, U=U, D=D)


# Pads are (L, R, U, D) crops of the full output; torch's padding p with
# output_padding o is p on the left/top and p - o on the right/bottom.
TC_KERNEL_SWEEP = (
    # N, M, K of every step off 2, 4 and 8: Ci 5, Co 7, H*W 9, Ho*Wo 25, Ci*Hk*Wk 45, Co*Hk*Wk 63
    _tgeo(5, 7, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1),
    _tgeo(8, 8, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1),      # Ci = Co = 8 (at the unroll factor), 72-term sums
)
TC_SHAPE_SWEEP = (
    _tgeo(3, 4, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1),      # torch stride 2, padding 1
    _tgeo(2, 3, 3, 5, 3, 3, 2, 2, 1, 0, 1, 0),      # torch padding 1, output_padding 1
    _tgeo(3, 2, 5, 4, 3, 2, 1, 2, 0, 1, 2, 0),      # asymmetric crops, stride_h != stride_w
    _tgeo(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0),
    _tgeo(2, 2, 3, 3, 2, 2, 3, 3, 0, 0, 0, 0),      # stride > kernel: rows and columns no input reaches
    _tgeo(2, 2, 3, 3, 3, 3, 2, 2, 0, -1, 0, -1),    # output_padding > padding: negative pads
    _tgeo(2, 3, 6, 4, 2, 3, 2, 2, 2, 0, 3, 2),      # crop wider than the kernel
    _tgeo(3, 2, 3, 4, 2, 2, 1, 1, 0, 0, 0, 0),      # stride 1, no crop, several channels each side
)
TC_SHAPES = TC_KERNEL_SWEEP + TC_SHAPE_SWEEP


def tc_output_size(s: dict) -> tuple[int, int]:
    return (conv_dw_pw.transposed_output_size(s["H"], s["Hk"], s["sh"], s["U"], s["D"]),
            conv_dw_pw.transposed_output_size(s["W"], s["Wk"], s["sw"], s["L"], s["R"]))


def _tc_inputs(c: Case) -> dict[str, tuple[int, ...]]:
    s, hwc = c.shape, c.options["HWC"]
    Ho, Wo = tc_output_size(s)
    return {"x": _chw(hwc, s["Ci"], s["H"], s["W"]),
            "W": (s["Ci"], s["Hk"], s["Wk"], s["Co"]) if hwc else (s["Ci"], s["Co"], s["Hk"], s["Wk"]),
            "b": (s["Co"],),
            "dy": _chw(hwc, s["Co"], Ho, Wo)}


def tc_buffer_elements(c: Case) -> dict[str, int]:
    """i2c_buffer and bt_buffer as pulp_transp_conv2d_fp32.h documents them."""
    if not c.options["im2col"]:
        return {"i2c_buffer": 0, "bt_buffer": 0}
    s, hwc = c.shape, c.options["HWC"]
    Ho, Wo = tc_output_size(s)
    taps = s["Hk"] * s["Wk"]
    if c.step == "fw":
        return {"i2c_buffer": s["Ci"] * taps * Ho * Wo, "bt_buffer": 0 if hwc else s["Ci"] * s["Co"] * taps}
    return {"i2c_buffer": s["Co"] * taps * s["H"] * s["W"],   # bw: WG's and IG's, the same size
            "bt_buffer": s["Ci"] * s["H"] * s["W"] if c.step in ("wg", "bw") and hwc else 0}


def _tc_footprint(c: Case) -> dict[str, int]:
    s = c.shape
    Ho, Wo = tc_output_size(s)
    x, y = s["Ci"] * s["H"] * s["W"], s["Co"] * Ho * Wo
    w = s["Ci"] * s["Co"] * s["Hk"] * s["Wk"]
    elements = {"x": x, "dx": x, "y": y, "dy": y, "W": w, "dW": w, "b": s["Co"], "db": s["Co"],
                **tc_buffer_elements(c)}
    bias = {"fw": ("b",), "wg": ("db",), "ig": (), "bw": ("db",)}[c.step] if c.options["bias"] else ()
    return _l1(c, elements, TOUCHED[c.step] + bias + ("i2c_buffer", "bt_buffer"))


def _tc_params(c: Case) -> dict[str, int]:
    s = c.shape
    return {"Ci": s["Ci"], "H": s["H"], "W": s["W"], "Co": s["Co"], "Hk": s["Hk"], "Wk": s["Wk"],
            "stride_h": s["sh"], "stride_w": s["sw"], "inLpad": s["L"], "inRpad": s["R"], "inUpad": s["U"],
            "inDpad": s["D"], "HWC": c.options["HWC"], "USE_BIASES": c.options["bias"],
            "step": c.step_code}


def _tc_features(c: Case) -> tuple[str, ...]:
    negative = any(c.shape[pad] < 0 for pad in "LRUD")
    return ((("transp_im2col",) if c.options["im2col"] else ()) + (("hwc_transp",) if c.options["HWC"] else ())
            + (("negative_crop",) if negative else ()))


def _transposed(shapes, im2col: int, cores=(1, 3, 8), steps=STEPS, **variants) -> OpEntry:
    # USE_IM2COL is the runner op: transp_conv2d (1) takes a kernel index,
    # transp_conv2d_direct (0) none.
    op = "transp_conv2d" if im2col else "transp_conv2d_direct"
    return OpEntry(
        name="transp_conv2d",
        unit="transp_conv2d",
        runner_op=lambda dtype: f"{op}_{build_of(dtype)}",
        steps=steps,
        dtypes=DTYPES,
        shapes=shapes,
        options={"HWC": (0, 1), "bias": (0, 1), "im2col": (im2col,)},
        applies=lambda c: not (c.step == "ig" and c.options["bias"]),  # IG does not read the bias
        inputs=_tc_inputs,
        params=_tc_params,
        reference=lambda c, inputs: conv_dw_pw.transposed(inputs, c.step, c.options["HWC"], *_geometry(c.shape),
                                                          c.options["bias"]),
        footprint=_tc_footprint,
        features=_tc_features,
        cores=cores,
        **variants,
    )


# USE_IM2COL = 1: gather + one matmul per step.
TRANSP_CONV2D_KERNEL_SWEEP = _transposed(TC_KERNEL_SWEEP, 1)
TRANSP_CONV2D_SHAPE_SWEEP = _transposed(TC_SHAPE_SWEEP, 1, kernels=lambda dtype, step: SHAPE_SWEEP_KERNELS[dtype])
# USE_IM2COL = 0: the direct kernels.
TRANSP_CONV2D_DIRECT = _transposed(TC_SHAPES, 0, cores=(1, 2, 3, 4, 7, 8), kernels=lambda dtype, step: (0,),
                                   kernel_names=lambda dtype: ("direct",))
# bw: pulp_transp_conv2d_*_bw_cl, the entry point a training step calls, on
# both paths.
TC_BW_SHAPES = TC_KERNEL_SWEEP[:1] + TC_SHAPE_SWEEP[1:3]
TRANSP_CONV2D_BW = _transposed(TC_BW_SHAPES, 1, steps=("bw",), kernels=lambda dtype, step: SHAPE_SWEEP_KERNELS[dtype])
TRANSP_CONV2D_BW_DIRECT = _transposed(TC_BW_SHAPES, 0, steps=("bw",), kernels=lambda dtype, step: (0,),
                                      kernel_names=lambda dtype: ("direct",))

ENTRIES = [CONV_PW_KERNEL_SWEEP, CONV_PW_SHAPE_SWEEP, CONV_PW_BW, CONV_PW_LAYER, CONV_DW, CONV_DW_BW,
           TRANSP_CONV2D_KERNEL_SWEEP, TRANSP_CONV2D_SHAPE_SWEEP, TRANSP_CONV2D_DIRECT, TRANSP_CONV2D_BW,
           TRANSP_CONV2D_BW_DIRECT]
