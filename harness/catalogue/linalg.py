"""Catalogue of the linear-algebra family: the raw matmul kernels (on the
team, and on one core alone), mm_manager given a kernel index out of range,
and the linear layer."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from golden import linalg
from golden.formats import format_named
from harness import core_split
from harness.cases import OpEntry
from harness.compare import tolerance
from harness.dtypes import DTYPES, build_of, element_bytes

# (N, M, K): each of N, M and K takes 1, values just below, at and just above
# the unroll factors 2, 4 and 8, primes, and the 64x64x64 reference size.
MATMUL_SHAPES = tuple(dict(N=n, M=m, K=k) for n, m, k in (
    (1, 1, 1), (1, 9, 5), (9, 1, 5), (5, 7, 1), (2, 3, 4), (3, 2, 3), (4, 5, 2),
    (7, 8, 9), (8, 9, 7), (9, 4, 8), (15, 17, 16), (17, 16, 15), (13, 11, 7), (64, 64, 64),
))

LINEAR_SHAPES = tuple(dict(inp=i, out=o) for i, o in (
    (1, 1), (5, 3), (8, 17), (37, 19), (64, 32),
))



# Shapes on which mm_manager's bias is checked both ways (bias_transposed 0:
# one bias per column, M entries; 1: one per row, N entries). N != M, so a
# bias added along the wrong axis cannot pass.
MATMUL_BIAS_SHAPES = (dict(N=9, M=4, K=8), dict(N=1, M=9, K=5), dict(N=13, M=11, K=7))
# The op's `bias` param; `unused`: a bias of M entries given with USE_BIASES
# 0, which mm_manager must not add (it adds the bias "if USE_BIASES").
MATMUL_BIAS = {"none": 0, "per_column": 1, "per_row": 2, "unused": 3}


def _matmul_applies(c) -> bool:
    return c.options["bias"] == 0 or (c.options["trans_B"] == 0 and c.shape in MATMUL_BIAS_SHAPES)



def _matmul_footprint(c) -> dict[str, int]:
    """Bytes of the tensors mm and mm_manager read and write (no buffers)."""
    N, M, K = c.shape["N"], c.shape["M"], c.shape["K"]
    bias = {MATMUL_BIAS["none"]: 0, MATMUL_BIAS["per_column"]: M, MATMUL_BIAS["per_row"]: N,
            MATMUL_BIAS["unused"]: M}[c.options["bias"]]
    elements = {"A": N * K, "B": K * M, "C": N * M, "bias": bias}
    return {name: n * element_bytes(c.dtype) for name, n in elements.items() if n}


def _added_bias(c) -> int:
    """The bias the product has: golden.linalg.matmul's `bias` (0 for `unused`)."""
    return MATMUL_BIAS["none"] if c.options["bias"] == MATMUL_BIAS["unused"] else c.options["bias"]


def _matmul_inputs(c) -> dict[str, tuple[int, ...]]:
    N, M, K = c.shape["N"], c.shape["M"], c.shape["K"]
    return {"A": (N, K), "B": (M, K) if c.options["trans_B"] else (K, M),
            "bias": (N,) if c.options["bias"] == MATMUL_BIAS["per_row"] else (M,)}


MATMUL = OpEntry(
    name="matmul",
    unit="linalg",
    runner_op=lambda dtype: f"matmul_{build_of(dtype)}",
    steps=("fw",),
    dtypes=DTYPES,
    shapes=MATMUL_SHAPES,
    options={"trans_B": (0, 1), "bias": tuple(MATMUL_BIAS.values())},
    applies=_matmul_applies,
    inputs=_matmul_inputs,
    params=lambda c: {"N": c.shape["N"], "M": c.shape["M"], "K": c.shape["K"], "trans_B": c.options["trans_B"],
                      "bias": c.options["bias"]},
    reference=lambda c, inputs: linalg.matmul(inputs, c.options["trans_B"], _added_bias(c)),
    footprint=_matmul_footprint,
)

# ---- one core alone through mm_manager (lib_c's feature caller_blocks) -----------------
# TRAINLIB_API.md: the mm* kernels split the N rows over the cores, the mm_M*
# kernels the M columns; it does not say which rows a core takes (the
# published unrolled kernels deal them out by their unroll, and split a
# leftover row's columns). lib_c deals them in the caller's blocks of
# TRAINLIB_API_MORE.md (core id: [id*b, (id+1)*b), b = ceil(n / cores)), so
# that a caller knows which part of C a core writes: one core alone
# (`alone`, harness/core_split.py) must write its block of rows or columns,
# right, and nothing else. No bias: mm_manager adds it after a barrier,
# which one core alone would wait at for ever. N and M are not multiples of
# the core counts or of the unrolls; on 8 cores N13's last block is empty.
ALONE_SHAPES = (dict(N=13, M=11, K=7), dict(N=9, M=17, K=5))


def _matmul_split(kernel: str) -> core_split.CoreSplit:
    if kernel.startswith("mm_M"):
        return core_split.columns("N", "M", ("C",))
    return core_split.rows("N", "M", ("C",))


MATMUL_ALONE = replace(
    MATMUL, name="matmul_alone", runner_op=lambda dtype: f"matmul_alone_{build_of(dtype)}",
    shapes=ALONE_SHAPES, options={"trans_B": (0, 1), "bias": (MATMUL_BIAS["none"],)},
    applies=lambda c: c.options[core_split.OPTION] != core_split.ALONE["TEAM"],   # the team is `matmul`'s
    split=core_split.KernelSplit(_matmul_split), cores=(2, 3, 8), features=lambda c: ("caller_blocks",))


# ---- mm_manager given a kernel index out of range -------------------------------------
# "An index out of range is an error the caller must be able to see"
# (TRAINLIB_API.md, mm_manager); the page does not say how. Seen: a line the
# call printed, or a C holding NaN or infinity (from finite A, B and a finite
# C0 that C starts as). Not seen: a call that returns without a word and
# leaves C finite, whether it ran some kernel or left C alone. The index is
# -1, or the first past the library's own table (ops_linalg.c, `where`).
BAD_INDEX = {"below": 0, "past_end": 1}   # ops_linalg.c's BAD_INDEX_BELOW, BAD_INDEX_PAST_END
BAD_INDEX_SHAPES = (dict(N=9, M=4, K=8), dict(N=1, M=1, K=1))


def _bad_index_rejects(c, inputs, references, outputs, printed) -> list[str]:
    C = outputs["C"]
    if printed or not np.isfinite(C).all():
        return []
    index = "-1" if c.options["where"] == BAD_INDEX["below"] else "one past the end of the library's table"
    product = references["C"]
    if np.array_equal(C, inputs["C0"].reshape(C.shape)):
        written = "left C as it was"
    elif (np.abs(C - product.value) <= tolerance(product, format_named(c.dtype))).all():
        written = "wrote A.B into C: it ran some kernel"
    else:
        written = "wrote finite values into C that are not A.B"
    return [f"mm_manager, kernel index {index}: the call printed nothing and {written}; the API says an index "
            f"out of range is an error the caller must be able to see"]


MATMUL_BAD_INDEX = OpEntry(
    name="matmul_bad_index",
    unit="linalg",
    runner_op=lambda dtype: f"matmul_bad_index_{build_of(dtype)}",
    steps=("fw",),
    dtypes=DTYPES,
    shapes=BAD_INDEX_SHAPES,
    options={"where": tuple(BAD_INDEX.values())},
    inputs=lambda c: {"A": (c.shape["N"], c.shape["K"]), "B": (c.shape["K"], c.shape["M"]),
                      "C0": (c.shape["N"], c.shape["M"])},
    params=lambda c: {"N": c.shape["N"], "M": c.shape["M"], "K": c.shape["K"], "where": c.options["where"]},
    reference=lambda c, inputs: linalg.matmul(inputs, trans_B=0),
    rejects=_bad_index_rejects,
    cores=(1, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("out_of_range",),
    footprint=lambda c: {name: element_bytes(c.dtype) * n for name, n in (
        ("A", c.shape["N"] * c.shape["K"]), ("B", c.shape["K"] * c.shape["M"]), ("C", c.shape["N"] * c.shape["M"]))},
)

# One row-split and one column-split kernel, the largest tiles: the kernels of
# the shape sweeps of every matmul-based family.
SHAPE_SWEEP_KERNELS = {"fp32": (0, 23), "fp16": (0, 5), "bf16": (0, 5)}


def _linear_footprint(c) -> dict[str, int]:
    """Bytes of the tensors the step reads and writes, as pulp_linear_* uses them (no buffers)."""
    i, o, bias = c.shape["inp"], c.shape["out"], c.options["bias"]
    elements = {"fw": {"x": i, "W": i * o, "y": o, "b": o * bias},
                "wg": {"x": i, "dy": o, "dW": i * o, "db": o * bias},
                "ig": {"W": i * o, "dy": o, "dx": i}}[c.step]
    return {name: n * element_bytes(c.dtype) for name, n in elements.items() if n}


LINEAR = OpEntry(
    name="linear",
    unit="linalg",
    runner_op=lambda dtype: f"linear_{build_of(dtype)}",
    steps=("fw", "wg", "ig"),
    dtypes=DTYPES,
    shapes=LINEAR_SHAPES,
    options={"bias": (0, 1)},
    applies=lambda c: not (c.step == "ig" and c.options["bias"]),  # IG does not read the bias
    inputs=lambda c: {"x": (c.shape["inp"],), "W": (c.shape["out"], c.shape["inp"]),
                      "b": (c.shape["out"],), "dy": (c.shape["out"],)},
    params=lambda c: {"in": c.shape["inp"], "out": c.shape["out"], "use_biases": c.options["bias"],
                      "step": c.step_code},
    reference=lambda c, inputs: linalg.linear(inputs, c.step, c.options["bias"]),
    footprint=_linear_footprint,
    cores=(1, 3, 8),
)


# ---- a whole linear layer, tiled (issue 26) ------------------------------------------
# linear_layer (ops_linalg.c): the layer's tensors in far memory (L2 on
# GVSOC), each tile moved into L1 and its outputs out by the DMA,
# double-buffered; the measured region is the whole layer. A shape is the
# layer's sizes and its tile sizes: FW cuts out, WG out x inp, IG inp (the
# tiler's axes, harness/autotune/layers.py); the reference is the whole
# layer's.
LINEAR_LAYER_TILE_AXES = {"fw": ("out",), "wg": ("out", "inp"), "ig": ("inp",)}
LINEAR_LAYER_SHAPES = tuple(dict(inp=i, out=o, tout=to, tinp=ti) for i, o, to, ti in (
    (13, 10, 4, 5),      # edge tiles on both axes, 3 x 3 tiles
    (13, 10, 4, 7),      # 2 input blocks: WG's second one ends each output block in the other buffer set
    (8, 6, 6, 8),        # one tile: the whole layer
))


def _linear_layer_tile(c) -> dict[str, int]:
    """The sizes of a layer case's first (largest) tile, as one linear call sees them."""
    return {axis: c.shape[f"t{axis}"] if axis in LINEAR_LAYER_TILE_AXES[c.step] else c.shape[axis]
            for axis in ("inp", "out")}


def _linear_layer_footprint(c) -> dict[str, int]:
    """L1: two sets of the largest tile's buffers; the layer's tensors are in L2."""
    one = _linear_footprint(replace(c, shape_items=tuple(_linear_layer_tile(c).items())))
    return {f"{name} x2": 2 * size for name, size in one.items()}


LINEAR_LAYER = replace(
    LINEAR, name="linear_layer", runner_op=lambda dtype: f"linear_layer_{build_of(dtype)}",
    shapes=LINEAR_LAYER_SHAPES, cores=(1, 8),
    params=lambda c: {**LINEAR.params(c), "tout": c.shape["tout"], "tinp": c.shape["tinp"]},
    footprint=_linear_layer_footprint, kernels=lambda dtype, step: SHAPE_SWEEP_KERNELS[dtype])

ENTRIES = [MATMUL, MATMUL_ALONE, MATMUL_BAD_INDEX, LINEAR, LINEAR_LAYER]
