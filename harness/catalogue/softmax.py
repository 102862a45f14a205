"""Catalogue of the softmax: the row softmax FW and BW (softmax_args, H rows
of W, rows split over the cores by the primitive) and the FP32 vector
softmax.

Shapes: single elements and single rows, W around the unroll factors and
the core counts, rows fewer and more than the cores, a realistic attention
map (16 rows of 64 and 4 of 128). Input patterns: uniform, large (rows
spanning -1000 .. 1000: the max subtraction must happen, and most
exponentials underflow), equal (all-equal rows: y = 1/W), spread (x in
[-8, 8)), negative (every element in [-208, -200): no exponential of an
element is representable, so a maximum search that starts from 0 rather
than below every element gives 0 / 0). The BW reads y as the rounded
softmax of x (golden/softmax.py).

The softmax parts (row_max, row_div, div, scalar_mul, sm_bw_op_1/2,
mm_bias_add_transposed: per-core bodies in every dtype, forked by the
runner) run on rows and sizes around the core counts; their references are
one or a few roundings of the dtype (golden/softmax.py). The parts whose exponential the API does
not pin down (exp_sum, vector_exp_sum, shift_sum) and pulp_max, whose
split of W is not documented, are not covered (README).

The row softmax's exponential is fastexp_gist, which the API documents as
approximate: the reference is the exact softmax and the documented bound
(approximations below) enters the tolerance through golden/softmax.py.
"""
from __future__ import annotations

import numpy as np

from golden import softmax
from golden.formats import format_named
from harness import core_split
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes

ROW_SHAPES = (
    dict(H=1, W=1, pattern="uniform"),          # one element: y = 1
    dict(H=1, W=7, pattern="uniform"),
    dict(H=3, W=8, pattern="uniform"),
    dict(H=7, W=9, pattern="spread"),           # fewer rows than 8 cores
    dict(H=9, W=16, pattern="uniform"),         # 9 rows on 8 cores: 2 + 1 + ... + 0
    dict(H=5, W=17, pattern="large"),
    dict(H=4, W=12, pattern="equal"),
    dict(H=16, W=64, pattern="spread"),         # attention map of 16 queries over 64 keys
    dict(H=4, W=128, pattern="large"),
    dict(H=6, W=9, pattern="peaks"),            # each row's maximum first, middle, last in turn
    dict(H=3, W=9, pattern="negative"),         # every element below -200: the max search starts below them
)
VECTOR_SHAPES = tuple(dict(n=n, pattern=p) for n, p in (
    (1, "uniform"), (7, "uniform"), (8, "spread"), (9, "uniform"), (17, "large"), (24, "equal"),
    (1000, "spread"), (17, "peaks"),             # one row: its maximum first
    (19, "peak_last"),                           # its maximum last: in the last core's block (3 cores: 14..18)
    (19, "negative"),
))

# fastexp_gist is within 3% of exp, relative (shared/TRAINLIB_API_MORE.md,
# "Tensor utilities"; measured on every float argument step of 1/11429 in
# [-87, 88] with binary32 arithmetic: within 2.984%).
FASTEXP_REL = 0.03

# Cores the vector softmax runs on; its per-core partial sums add up to
# max(cores) roundings to the sum (golden/softmax.py).
VECTOR_CORES = (1, 3, 8)



def _row_inputs(c):
    shape = (c.shape["H"], c.shape["W"])
    return {"x": shape, "y": shape, "dy": shape}     # the op copies only those its step reads


def _footprint(c) -> dict[str, int]:
    size = element_bytes(c.dtype)
    n = c.shape["H"] * c.shape["W"]
    buffers = {"input": n * size, "output": n * size, "maxes": c.shape["H"] * size, "sums": c.shape["H"] * size}
    if c.step == "bw":
        buffers["output_grad"] = n * size
    return buffers


def _applies(c) -> bool:
    # bfloat16 sums of more than ~100 terms have no useful error bound
    # (README, "Not supported"): the 128-wide BW runs in fp32 and fp16.
    return not (c.dtype == "bf16" and c.step == "bw" and c.shape["W"] > 100)


SOFTMAX = OpEntry(
    name="softmax",
    unit="softmax",
    runner_op=lambda dtype: f"softmax_{build_of(dtype)}",
    steps=("fw", "bw"),
    dtypes=DTYPES,
    shapes=ROW_SHAPES,
    applies=_applies,
    inputs=_row_inputs,
    params=lambda c: {"H": c.shape["H"], "W": c.shape["W"], "step": c.step_code},
    input_values=lambda c, inputs: softmax.edge_inputs(inputs, c.shape["pattern"], format_named(c.dtype)),
    reference=lambda c, inputs: softmax.softmax(inputs, c.step, format_named(c.dtype),
                                                c.entry.approximations["fastexp_gist_rel"]),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=_footprint,
    approximations={"fastexp_gist_rel": FASTEXP_REL},
)

VECTOR_SOFTMAX = OpEntry(
    name="vector_softmax",
    unit="softmax",
    runner_op=lambda dtype: "vector_softmax_fp32",
    steps=("fw",),
    dtypes=("fp32",),
    shapes=VECTOR_SHAPES,
    inputs=lambda c: {"x": (c.shape["n"],)},
    params=lambda c: {"n": c.shape["n"]},
    input_values=lambda c, inputs: softmax.edge_inputs(inputs, c.shape["pattern"], format_named(c.dtype)),
    reference=lambda c, inputs: softmax.vector_softmax(inputs, max(VECTOR_CORES), format_named(c.dtype)),
    cores=VECTOR_CORES,
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"input": 4 * c.shape["n"], "output": 4 * c.shape["n"], "buffer_n_cores": 4 * 8},
)

# ---- the softmax parts: per-core bodies, forked by the runner ----
# Rows around the core counts (fewer rows than cores, 9 on 8), rows of one
# element and rows past the unroll factors; flat sizes likewise.
PART_ROWS = tuple(dict(H=h, W=w) for h, w in ((1, 1), (3, 5), (7, 16), (8, 3), (9, 17), (17, 64)))
PART_FLAT = tuple(dict(dim=n) for n in (1, 7, 8, 9, 17, 1000))


def _part(name: str, shapes, inputs, reference, options=None, params=None, split=None) -> OpEntry:
    return OpEntry(
        name=name,
        unit="softmax_parts",
        runner_op=lambda dtype: f"{name}_{build_of(dtype)}",
        steps=("fw",),
        dtypes=DTYPES,
        shapes=shapes,
        options=options or {},
        inputs=inputs,
        params=params or (lambda c: dict(c.shape)),
        input_values=lambda c, values: softmax.part_inputs(values, format_named(c.dtype)),
        reference=reference,
        cores=(1, 3, 8),
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
        # the inputs, and an output as large as them
        footprint=lambda c: {"tensors": 2 * element_bytes(c.dtype) * sum(int(np.prod(t)) for t in inputs(c).values())},
        split=split,
    )


# div and scalar_mul scale x in place over dim (the runner's y starts as x)
IN_PLACE = core_split.flat("dim", starts_from={"y": "x"})


def _rows(c) -> tuple[int, int]:
    return c.shape["H"], c.shape["W"]


ROW_MAX = _part("row_max", PART_ROWS, lambda c: {"x": _rows(c), "m": (c.shape["H"],)},
                lambda c, values: softmax.row_max(values))
ROW_DIV = _part("row_div", PART_ROWS, lambda c: {"x": _rows(c), "s": (c.shape["H"],)},
                lambda c, values: softmax.row_div(values))
DIV = _part("div", PART_FLAT, lambda c: {"x": (c.shape["dim"],), "coeff": (1,)},
            lambda c, values: softmax.scaled(values, divide=True), split=IN_PLACE)
SCALAR_MUL = _part("scalar_mul", PART_FLAT, lambda c: {"x": (c.shape["dim"],), "coeff": (1,)},
                   lambda c, values: softmax.scaled(values, divide=False), split=IN_PLACE)
SM_BW_OP_1 = _part("sm_bw_op_1", PART_ROWS, lambda c: {"a": _rows(c), "b": _rows(c)},
                   lambda c, values: softmax.sm_bw_op_1(values, c.shape["H"]))
SM_BW_OP_2 = _part("sm_bw_op_2", PART_ROWS, lambda c: {"a": _rows(c), "b": _rows(c), "s": (c.shape["H"],)},
                   lambda c, values: softmax.sm_bw_op_2(values))
MM_BIAS_ADD = _part("mm_bias_add_transposed", PART_ROWS,
                    lambda c: {"x": _rows(c), "bias": (c.shape["H"] if c.options["t"] else c.shape["W"],)},
                    lambda c, values: softmax.mm_bias_add(values, c.shape["H"], per_row=bool(c.options["t"])),
                    options={"t": (0, 1)}, params=lambda c: {**c.shape, "t": c.options["t"]})

ENTRIES = [SOFTMAX, VECTOR_SOFTMAX, ROW_MAX, ROW_DIV, DIV, SCALAR_MUL, SM_BW_OP_1, SM_BW_OP_2, MM_BIAS_ADD]
