"""Catalogue of the Conv2D family: the layer on both paths, and the standalone
unrollings (im2col, im2row) and block transpose.

Shapes name the ConvGeometry fields: Ci x H x W input, Co kernels of Hk x Wk,
strides sh, sw, padding L, R, U, D. The conv2d entries split the work:

  conv2d, im2col=1, kernel sweep   every matmul kernel index x every step x
                                   both layouts, on shapes whose products
                                   (N, M, K) are off every unroll factor, and
                                   on the realistic tile that fits L1;
  conv2d, im2col=1, shape sweep    the awkward geometries (strides that
                                   differ per axis or leave rows unused,
                                   asymmetric and oversized padding, 1xN
                                   kernels, Ho = Wo = 1, primes) with one
                                   row-split and one column-split kernel, DMA
                                   unrolling on and off;
  conv2d, im2col=0                 the direct kernels on every shape;
  conv2d, step bw                  both gradients from one _bw_cl call
                                   (the entry point a training step calls),
                                   on both paths, a few shapes.

Realistic TinyML layer: a 3x3 conv, 16 -> 32 channels, padding 1, on 16x16.
On the default 64 KiB L1 it does not fit on the im2col path in FP32 or FP16
(its FW unrolling alone is 144 x 256 elements: 144 KiB in FP32), nor on the
direct path in FP32 (input + weights + output are 66 KiB); those variants
are reported not_fit. Only FP16 direct runs at 16x16. The same layer on an
8x8 tile fits in FP16 on both paths and in FP32 on the direct path; on a 4x4
tile it fits every step in FP32 and FP16 (FP32 IG, the largest: 57 KiB, with
the 288 x 16 unrolling of dOut and the block-transposed weights).
The realistic shapes are not run in bf16: their reductions (144 FW, 288 IG
terms) are beyond the length at which the bf16 error bound says anything
(n * 2^-8 >= 1/2, see harness/compare.py).

Features (OpEntry.features): what a case uses of lib_c beyond the published
API (TRAINLIB_API.md, "Contract details checked against the published
library"). A case without a feature tests the published contract.
  dma_im2col   USE_DMA / USE_DMA_IM2COL where the published library has no
               DMA: only pulp_im2row_fp32 has it, not for HWC mod 1; the
               layer has it only where it unrolls with im2row (HWC FW).
  any_stride   a mod-0 unrolling whose (H + Upad + Dpad - Hk) is not a
               multiple of stride_h (or likewise W): the published one
               reports an error and writes nothing.
  hwc_padding  a mod-0 unrolling in HWC with padding (im2row, im2col, and the
               layer's FW and WG, which go through them).
  hwc_direct   the direct kernels (USE_IM2COL=0) in HWC: published, CHW only.
mod 1 ignores every pad and stride field in the published API and in lib_c,
so the IG unrollings of padded or strided geometries test that, and carry
no feature; the layer's IG unrolls strided and padded layers itself.
"""
from __future__ import annotations

from golden import conv
from golden.conv import ConvGeometry
from harness.cases import Case, OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes
from harness.catalogue.linalg import SHAPE_SWEEP_KERNELS

_FIELDS = ("Ci", "H", "W", "Co", "Hk", "Wk", "sh", "sw", "L", "R", "U", "D")


def _shapes(*rows: tuple[int, ...]) -> tuple[dict, ...]:
    return tuple(dict(zip(_FIELDS, row)) for row in rows)


#                Ci  H  W Co Hk Wk sh sw  L  R  U  D
SHAPE_SWEEP = _shapes(
    (1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0),     # everything 1
    (2, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0),     # kernel = input: Ho = Wo = 1
    (3, 5, 7, 4, 3, 2, 1, 1, 1, 0, 0, 2),     # non-square kernel, L != R, U != D
    (2, 7, 6, 5, 3, 3, 2, 1, 1, 1, 1, 1),     # stride_h 2, stride_w 1
    (3, 6, 9, 2, 2, 3, 1, 2, 2, 0, 1, 0),     # stride_w 2, stride_h 1, asymmetric pads
    (2, 8, 8, 3, 3, 3, 3, 3, 0, 1, 1, 1),     # stride 3 leaves input rows and columns unused
    (2, 4, 4, 2, 2, 2, 1, 1, 2, 2, 2, 2),     # padding wider than the kernel: all-padding borders
    (1, 9, 8, 9, 1, 5, 2, 3, 0, 3, 4, 0),     # 1x5 kernel, strides 2/3, U > Hk - 1, Co 9
    (4, 3, 9, 8, 3, 1, 1, 1, 0, 0, 1, 1),     # 3x1 kernel, Co 8
    (8, 4, 4, 12, 3, 3, 1, 1, 1, 1, 1, 1),    # mid-size: T 72, T' 108
    (3, 4, 5, 2, 1, 1, 1, 1, 0, 0, 0, 0),     # 1x1 kernel on several channels and pixels: in CHW a
                                              # tap's channels are a plane apart in the source; lib_c's
                                              # layer reads its unrollings in place (the input, dOut)
)
# The layer's geometries one condition away from lib_c's in-place 1x1 case
# (pulp_conv2d_impl.h, conv_unrolls_in_place: a 1x1 kernel, strides 1, the
# output grid the input's size), each with every other condition met: a
# test that loses or loosens one condition reads them in place, wrongly.
IN_PLACE_EDGES = _shapes(
    (2, 3, 4, 3, 2, 1, 1, 1, 0, 0, 0, 1),     # 2x1 kernel, a bottom pad: Ho = H
    (2, 3, 4, 3, 1, 2, 1, 1, 0, 1, 0, 0),     # 1x2 kernel, a right pad: Wo = W
    (2, 3, 4, 3, 1, 1, 2, 1, 0, 0, 0, 2),     # stride_h 2, bottom pads that keep Ho = H
    (2, 3, 4, 3, 1, 1, 1, 2, 0, 3, 0, 0),     # stride_w 2, right pads that keep Wo = W
    (2, 3, 4, 3, 1, 1, 1, 1, 0, 0, 1, 0),     # a top pad: Ho = H + 1, Wo = W
    (2, 3, 4, 3, 1, 1, 1, 1, 1, 0, 0, 0),     # a left pad: Wo = W + 1, Ho = H
)
KERNEL_SWEEP = _shapes(
    # N, M, K of every step off 2, 4 and 8 (7, 5, 35, 45, 63); unpadded, so
    # that the HWC kernel sweep tests the published contract (no hwc_padding)
    (5, 7, 9, 7, 3, 3, 1, 1, 0, 0, 0, 0),
)
REALISTIC_FULL = _shapes((16, 16, 16, 32, 3, 3, 1, 1, 1, 1, 1, 1))
REALISTIC_TILE_8 = _shapes((16, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1))
REALISTIC_TILE_4 = _shapes((16, 4, 4, 32, 3, 3, 1, 1, 1, 1, 1, 1))   # fits 64 KiB in every step and dtype
REALISTIC = REALISTIC_FULL + REALISTIC_TILE_8 + REALISTIC_TILE_4

BLOCKTRANSP_SHAPES = tuple(dict(Ci=ci, Co=co, Hk=hk, Wk=wk) for ci, co, hk, wk in (
    (1, 1, 1, 1), (2, 3, 3, 3), (3, 4, 3, 2), (5, 7, 3, 3), (4, 9, 1, 5), (16, 32, 3, 3),
))

STEPS = ("fw", "wg", "ig")
# The runner's step param; bw is both gradients from one pulp_conv2d_*_bw_cl
# call (WG, then IG, in the same work buffers), as a training step calls it.
# Unrollings only copy elements: the two 16-bit formats run the same code.
COPY_DTYPES = ("fp32", "bf16")


def geometry(case: Case) -> ConvGeometry:
    return ConvGeometry(**case.shape)




def _realistic_not_in_bf16(case: Case) -> bool:
    return not (case.dtype == "bf16" and case.shape in REALISTIC)


# ---- features: lib_c beyond the published API --------------------------------------

def meets_stride_precondition(g: ConvGeometry) -> bool:
    """The published mod-0 unrolling's precondition on the strides."""
    return (g.H + g.U + g.D - g.Hk) % g.sh == 0 and (g.W + g.L + g.R - g.Wk) % g.sw == 0


def _padded(g: ConvGeometry) -> bool:
    return any((g.L, g.R, g.U, g.D))


def _mod0_features(g: ConvGeometry, hwc: int) -> list[str]:
    """Of a mod-0 unrolling (im2col or im2row) of geometry g."""
    features = []
    if not meets_stride_precondition(g):
        features.append("any_stride")
    if hwc and _padded(g):
        features.append("hwc_padding")
    return features


def _conv_features(case: Case) -> tuple[str, ...]:
    g, o = geometry(case), case.options
    if not o["im2col"]:
        return ("hwc_direct",) if o["HWC"] else ()
    features = _mod0_features(g, o["HWC"]) if case.step in ("fw", "wg", "bw") else []
    # The published layer has DMA only where it unrolls with pulp_im2row_fp32: HWC FW.
    if o["dma"] and not (case.dtype == "fp32" and o["HWC"] and case.step == "fw"):
        features.append("dma_im2col")
    return tuple(features)


def _unroll_features(name: str, case: Case) -> tuple[str, ...]:
    o, mod = case.options, _mod(case)
    features = _mod0_features(geometry(case), o["HWC"]) if mod == 0 else []
    # Only pulp_im2row_fp32 has DMA, and not for HWC mod 1.
    if o["dma"] and not (name == "im2row" and case.dtype == "fp32" and not (o["HWC"] and mod == 1)):
        features.append("dma_im2col")
    return tuple(features)


# ---- the layer ---------------------------------------------------------------------

def _conv_applies(case: Case) -> bool:
    o = case.options
    if case.step == "ig" and o["bias"]:
        return False                      # IG does not read the bias
    if o["dma"] and (o["bias"] or not o["im2col"]):
        return False                      # DMA unrolling: once per step and layout, im2col path only
    return _realistic_not_in_bf16(case)


def _conv_params(case: Case) -> dict[str, int]:
    """conv2d (the im2col path) or conv2d_direct params, named as ops_conv2d.c names them."""
    o = case.options
    params = {**geometry(case).params(), "HWC": o["HWC"], "USE_BIASES": o["bias"], "step": case.step_code}
    if o["im2col"]:
        params["USE_DMA_IM2COL"] = o["dma"]
    return params


def _conv_footprint(case: Case) -> dict[str, int]:
    """Bytes per buffer, as the step allocates them (pulp_conv2d_fp32.h)."""
    g, o = geometry(case), case.options
    n_in, n_w, n_out = g.Ci * g.H * g.W, g.Co * g.Ci * g.Hk * g.Wk, g.Co * g.Ho * g.Wo
    by_step = {
        "fw": {"input": n_in, "weights": n_w, "output": n_out, "bias": g.Co * o["bias"]},
        "wg": {"input": n_in, "output_grad": n_out, "weight_grad": n_w, "bias_grad": g.Co * o["bias"]},
        "ig": {"output_grad": n_out, "weights": n_w, "input_grad": n_in},
    }
    by_step["bw"] = {**by_step["wg"], **by_step["ig"]}
    parts = by_step[case.step]
    if o["im2col"]:
        i2c = {"fw": g.Ci * g.Hk * g.Wk * g.Ho * g.Wo, "ig": g.Co * g.Hk * g.Wk * g.H * g.W}
        bt = {"ig": n_w, "wg": n_out if o["HWC"] else 0}   # block-transposed weights; dOut as Co x Ho*Wo
        i2c["wg"] = i2c["fw"]
        i2c["bw"], bt["bw"] = max(i2c["wg"], i2c["ig"]), max(bt["wg"], bt["ig"])   # the same buffers, in turn
        parts["i2c_buffer"] = i2c[case.step]
        if bt.get(case.step):
            parts["bt_buffer"] = bt[case.step]
    size = element_bytes(case.dtype)
    return {name: count * size for name, count in parts.items() if count}


def _conv_entry(shapes, im2col: int, dma: tuple[int, ...], cores, kernels=None, kernel_names=None,
                steps=STEPS) -> OpEntry:
    extra = {}
    if kernels is not None:
        extra["kernels"] = kernels
    if kernel_names is not None:
        extra["kernel_names"] = kernel_names
    op = "conv2d" if im2col else "conv2d_direct"
    return OpEntry(
        name="conv2d",
        unit="conv2d",
        runner_op=lambda dtype: f"{op}_{build_of(dtype)}",
        steps=steps,
        dtypes=DTYPES,
        shapes=shapes,
        options={"HWC": (0, 1), "bias": (0, 1), "dma": dma, "im2col": (im2col,)},
        applies=_conv_applies,
        inputs=lambda c: conv.tensor_shapes(geometry(c), c.options["HWC"]),
        params=_conv_params,
        reference=lambda c, inputs: conv.conv2d(inputs, geometry(c), c.step, c.options["HWC"], c.options["bias"]),
        footprint=_conv_footprint,
        features=_conv_features,
        cores=cores,
        **extra,
    )


CONV2D_KERNEL_SWEEP = _conv_entry(KERNEL_SWEEP + REALISTIC_TILE_4, im2col=1, dma=(0,), cores=(1, 8))
CONV2D_SHAPE_SWEEP = _conv_entry(SHAPE_SWEEP + IN_PLACE_EDGES + REALISTIC_TILE_8 + REALISTIC_FULL, im2col=1, dma=(0, 1),
                                 cores=(1, 8), kernels=lambda dtype, step: SHAPE_SWEEP_KERNELS[dtype])
CONV2D_DIRECT = _conv_entry(SHAPE_SWEEP + KERNEL_SWEEP + REALISTIC, im2col=0, dma=(0,), cores=(1, 3, 8),
                            kernels=lambda dtype, step: (0,), kernel_names=lambda dtype: ("direct",))
# bw: the API's pulp_conv2d_*_bw_cl, which a training step calls and no step
# above reaches; both paths, on the kernel-sweep shape and the geometries with
# asymmetric pads and per-axis strides.
BW_SHAPES = KERNEL_SWEEP + SHAPE_SWEEP[2:5]
CONV2D_BW = _conv_entry(BW_SHAPES, im2col=1, dma=(0,), cores=(1, 8),
                        kernels=lambda dtype, step: SHAPE_SWEEP_KERNELS[dtype], steps=("bw",))
CONV2D_BW_DIRECT = _conv_entry(BW_SHAPES, im2col=0, dma=(0,), cores=(1, 3, 8), kernels=lambda dtype, step: (0,),
                               kernel_names=lambda dtype: ("direct",), steps=("bw",))


# ---- the unrollings --------------------------------------------------------------------
# Step fw is the FW/WG unrolling (mod 0) of the input x, step ig the IG
# unrolling (mod 1) of the output gradient dy.

def _mod(case: Case) -> int:
    return 0 if case.step == "fw" else 1


def _unroll_inputs(case: Case) -> dict[str, tuple[int, ...]]:
    """Both tensors the op describes; mod 0 reads x, mod 1 dy."""
    shapes = conv.tensor_shapes(geometry(case), case.options["HWC"])
    return {"x": shapes["x"], "dy": shapes["dy"]}


def _unroll_params(case: Case) -> dict[str, int]:
    return {**geometry(case).params(), "HWC": case.options["HWC"], "USE_DMA": case.options["dma"], "mod": _mod(case)}


def _unroll_footprint(case: Case) -> dict[str, int]:
    g = geometry(case)
    if _mod(case) == 0:
        source, taps, windows = g.Ci * g.H * g.W, g.Ci * g.Hk * g.Wk, g.Ho * g.Wo
    else:
        source, taps, windows = g.Co * g.Ho * g.Wo, g.Co * g.Hk * g.Wk, g.H * g.W
    size = element_bytes(case.dtype)
    return {"source": source * size, "pBuffer": taps * windows * size}


def _unroll_entry(name: str, reference) -> OpEntry:
    return OpEntry(
        name=name,
        unit="conv2d",
        runner_op=lambda dtype: f"{name}_{build_of(dtype)}",
        steps=("fw", "ig"),
        dtypes=COPY_DTYPES,
        shapes=SHAPE_SWEEP + KERNEL_SWEEP + REALISTIC_TILE_4,
        options={"HWC": (0, 1), "dma": (0, 1)},
        inputs=_unroll_inputs,
        params=_unroll_params,
        reference=lambda c, inputs: reference(inputs, geometry(c), c.options["HWC"], _mod(c)),
        footprint=_unroll_footprint,
        features=lambda c: _unroll_features(name, c),
        cores=(1, 3, 8),
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
    )


IM2COL = _unroll_entry("im2col", conv.im2col)
IM2ROW = _unroll_entry("im2row", conv.im2row)


def _blocktransp_shape(case: Case) -> tuple[int, ...]:
    s = case.shape
    return (s["Co"], s["Hk"], s["Wk"], s["Ci"]) if case.options["HWC"] else (s["Co"], s["Ci"], s["Hk"], s["Wk"])


BLOCKTRANSP = OpEntry(
    name="blocktransp",
    unit="conv2d",
    runner_op=lambda dtype: f"blocktransp_{build_of(dtype)}",
    steps=("ig",),
    dtypes=COPY_DTYPES,
    shapes=BLOCKTRANSP_SHAPES,
    options={"HWC": (0, 1)},
    inputs=lambda c: {"W": _blocktransp_shape(c)},
    params=lambda c: {"Cin": c.shape["Ci"], "Cout": c.shape["Co"], "Hk": c.shape["Hk"], "Wk": c.shape["Wk"],
                      "HWC": c.options["HWC"]},
    reference=lambda c, inputs: conv.blocktransp(inputs, c.options["HWC"]),
    footprint=lambda c: dict.fromkeys(("weights", "bt_weights"), element_bytes(c.dtype) * c.shape["Ci"]
                                      * c.shape["Co"] * c.shape["Hk"] * c.shape["Wk"]),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
)

ENTRIES = [CONV2D_KERNEL_SWEEP, CONV2D_SHAPE_SWEEP, CONV2D_DIRECT, CONV2D_BW, CONV2D_BW_DIRECT, IM2COL, IM2ROW,
           BLOCKTRANSP]
