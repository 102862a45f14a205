"""Catalogue of the tensor utilities (pulp_train_utils_fp32.h, _fp16.h).

Shapes of up to four dims are params d0..d3 (a0..a3 the transposed axes,
p/q the two broadcast operands, A/B the matmul operands) with their length;
unused dims are 1. Sizes sit around the core counts (1, 3, 8), with single
elements, size-1 dims that broadcast, several axis permutations, odd pads on
each side, and both layouts. The per-core bodies are forked by the runner
(cores 1, 3, 8), mm_broadcast and the layout conversions fork themselves,
mean_std and q_rsqrt run on one core.

Every utility also runs in fp16 and bf16, as its FP16 twin (`_fp16`
names, fp16 elements; pulp_mean_std_fp16_cl, q_rsqrt_fp16).
"""
from __future__ import annotations

import numpy as np

from golden import utils
from golden.formats import format_named
from harness import core_split
from harness.cases import OpEntry
from harness.dtypes import DTYPES

MAX_DIMS = 4


def _dims(prefix: str, dims) -> dict[str, int]:
    return {f"{prefix}{k}": (dims[k] if k < len(dims) else 1) for k in range(MAX_DIMS)}


def _shape_dims(shape: dict, prefix: str, length: str) -> tuple[int, ...]:
    return tuple(shape[f"{prefix}{k}"] for k in range(shape[length]))


ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def _entry(name: str, shapes, inputs, params, reference, options=None, cores=(1, 3, 8), input_values=None,
           applies=None, approximations=None, dtypes=("fp32",), split=None) -> OpEntry:
    return OpEntry(
        name=name,
        unit="utils",
        runner_op=lambda dtype: f"{name}_{'fp32' if dtype == 'fp32' else 'fp16'}",
        steps=("fw",),
        dtypes=dtypes,
        shapes=shapes,
        options=options or {},
        applies=applies or (lambda c: True),
        inputs=inputs,
        params=params,
        input_values=input_values,
        reference=reference,
        cores=cores,
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
        footprint=lambda c: {name: ELEMENT_BYTES[c.dtype] * sum(int(np.prod(s)) for s in inputs(c).values())},
        approximations=approximations or {},
        split=split,
    )


SIZES = tuple(dict(n=n) for n in (1, 3, 8, 9, 17, 1000))
# The utilities the API has FP16 twins of (`_fp16` names) that lib_c implements.
WITH_FP16 = DTYPES


def _flat(*names):
    return lambda c: {name: (c.shape["n"],) for name in names}


TRANSPOSE_MATRIX = _entry(
    "transpose_matrix", tuple(dict(N=n, M=m) for n, m in ((1, 1), (1, 7), (3, 8), (8, 3), (9, 17), (32, 31))),
    lambda c: {"x": (c.shape["N"] * c.shape["M"],)}, lambda c: dict(c.shape),
    lambda c, i: utils.transpose(i["x"], (c.shape["N"], c.shape["M"]), (1, 0)), dtypes=WITH_FP16)

TRANSPOSE = _entry(
    "transpose",
    tuple(dict(n_dim=len(d), **_dims("d", d), **_dims("a", a)) for d, a in (
        ((7,), (0,)), ((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (0, 2, 1)), ((3, 1, 5), (1, 2, 0)),
        ((2, 3, 4, 5), (3, 1, 0, 2)), ((2, 2, 2, 3), (0, 1, 3, 2)))),
    lambda c: {"x": (int(np.prod(_shape_dims(c.shape, "d", "n_dim"))),)}, lambda c: dict(c.shape),
    lambda c, i: utils.transpose(i["x"], _shape_dims(c.shape, "d", "n_dim"), _shape_dims(c.shape, "a", "n_dim")),
    dtypes=WITH_FP16)

COPY = _entry("copy", SIZES, _flat("x"), lambda c: dict(c.shape), lambda c, i: utils.exact(i["x"].copy()),
              dtypes=WITH_FP16, split=core_split.flat())

SET_TO_VALUE = _entry(
    "set_to_value", SIZES, lambda c: {}, lambda c: {"n": c.shape["n"], **c.options},
    # the binary32 quotient the runner computes, rounded to the format as the FP16 twin stores it
    lambda c, i: utils.exact(format_named(c.dtype).round(
        np.full(c.shape["n"], float(np.float32(c.options["value_milli"]) / np.float32(1000))))),
    options={"value_milli": (-1500, 0, 333)}, dtypes=WITH_FP16, split=core_split.flat())

VECT_SUM = _entry("vect_sum", SIZES, _flat("a", "b"), lambda c: dict(c.shape),
                  lambda c, i: utils.broadcast_sum(i["a"], i["b"]), dtypes=WITH_FP16, split=core_split.flat())

BROADCAST_SUM = _entry(
    "broadcast_sum",
    tuple(dict(l1=len(p), **_dims("p", p), l2=len(q), **_dims("q", q)) for p, q in (
        ((4,), (1,)), ((3, 4), (4,)), ((3, 1), (1, 5)), ((2, 3, 4), (3, 1)), ((2, 1, 4), (2, 3, 1)), ((5,), (5,)),
        ((2, 3, 1, 4), (1, 3, 5, 1)))),
    lambda c: {"a": (int(np.prod(_shape_dims(c.shape, "p", "l1"))),),
               "b": (int(np.prod(_shape_dims(c.shape, "q", "l2"))),)},
    lambda c: dict(c.shape),
    lambda c, i: utils.broadcast_sum(i["a"].reshape(_shape_dims(c.shape, "p", "l1")),
                                     i["b"].reshape(_shape_dims(c.shape, "q", "l2"))), dtypes=WITH_FP16)

MM_BROADCAST = _entry(
    "mm_broadcast",
    tuple(dict(la=len(a), **_dims("A", a), lb=len(b), **_dims("B", b)) for a, b in (
        ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (1, 3, 4, 2)),
        ((1, 7, 9), (9, 8)))),
    lambda c: {"A": (int(np.prod(_shape_dims(c.shape, "A", "la"))),),
               "B": (int(np.prod(_shape_dims(c.shape, "B", "lb"))),)},
    lambda c: dict(c.shape),
    lambda c, i: utils.mm_broadcast(i["A"].reshape(_shape_dims(c.shape, "A", "la")),
                                    i["B"].reshape(_shape_dims(c.shape, "B", "lb"))), dtypes=WITH_FP16)

MM_ADD = _entry(
    "mm_add", tuple(dict(N=n, M=m, K=k) for n, m, k in ((1, 1, 1), (7, 8, 9), (9, 3, 17))),
    lambda c: {"A": (c.shape["N"] * c.shape["K"],), "B": (c.shape["K"] * c.shape["M"],),
               "C0": (c.shape["N"] * c.shape["M"],)},
    lambda c: {**c.shape, **c.options},
    lambda c, i: utils.mm_add(i["A"].reshape(c.shape["N"], c.shape["K"]),
                              i["B"].reshape((c.shape["M"], c.shape["K"]) if c.options["trans_B"]
                                             else (c.shape["K"], c.shape["M"])),
                              i["C0"].reshape(c.shape["N"], c.shape["M"]), c.options["trans_B"]),
    options={"trans_B": (0, 1)}, dtypes=WITH_FP16)

LAYOUT = _entry(
    "layout", tuple(dict(C=c, H=h, W=w) for c, h, w in ((1, 1, 1), (3, 4, 5), (8, 3, 3), (2, 1, 7))),
    lambda c: {"x": (c.shape["C"] * c.shape["H"] * c.shape["W"],), "g": (c.shape["C"] * c.shape["H"] * c.shape["W"],)},
    lambda c: {**c.shape, **c.options},
    lambda c, i: utils.layout(i["x"], i["g"], c.shape["C"], c.shape["H"], c.shape["W"], **c.options),
    options={"to_hwc": (0, 1), "data": (0, 1), "grad": (0, 1)},
    applies=lambda c: c.options["data"] or c.options["grad"], dtypes=WITH_FP16)

PAD = _entry(
    "pad", tuple(dict(C=c, H=h, W=w, L=l, R=r, U=u, D=d) for c, h, w, l, r, u, d in (
        (1, 1, 1, 1, 1, 1, 1), (3, 4, 5, 0, 2, 1, 0), (2, 3, 3, 1, 0, 0, 2), (8, 4, 4, 1, 1, 1, 1))),
    lambda c: {"x": (c.shape["C"] * c.shape["H"] * c.shape["W"],)}, lambda c: {**c.shape, **c.options},
    lambda c, i: utils.pad(i["x"], **{k: c.shape[k] for k in "CHWLRUD"}, hwc=c.options["HWC"]),
    options={"HWC": (0, 1)}, dtypes=WITH_FP16)

REDUCE_MEAN = _entry(
    "reduce_mean", tuple(dict(len=len(d), **_dims("d", d), axis=a) for d, a in (
        ((7,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((2, 3, 4, 5), 3), ((9, 8), 0))),
    lambda c: {"x": (int(np.prod(_shape_dims(c.shape, "d", "len"))),)},
    lambda c: dict(c.shape),
    lambda c, i: utils.reduce_mean(i["x"], _shape_dims(c.shape, "d", "len"), c.shape["axis"]),
    dtypes=WITH_FP16)

EPS_MICRO = 10      # 1e-5, torch's usual norm epsilon


def _mean_std_values(c, inputs: dict) -> dict:
    """The constant shape: a dyadic value, whose statistics are exact."""
    if c.shape.get("constant"):
        return dict(inputs, x=np.full(c.shape["n"], 0.375))
    return inputs


MEAN_STD = _entry(
    "mean_std", (dict(n=8), dict(n=17), dict(n=1000), dict(n=16, constant=1), dict(n=17, eps_micro=100000)),
    _flat("x"),
    lambda c: {"n": c.shape["n"], "eps_micro": c.shape.get("eps_micro", EPS_MICRO)},   # 0.1: the `epsilon` field read
    # epsilon: the binary32 quotient the runner computes, rounded to the format as the FP16 twin holds it
    lambda c, i: utils.mean_std(i["x"], float(format_named(c.dtype).round(
        np.float32(c.shape.get("eps_micro", EPS_MICRO)) / np.float32(1e6))), format_named(c.dtype)),
    cores=(1,), input_values=_mean_std_values, dtypes=WITH_FP16,
    # The FP16 twin may sum in its own format (golden/utils.py, mean_std):
    # E[x^2] of 1000 elements then takes 2999 roundings, and at u = 2^-8 or
    # 2^-11 no error bound exists (n u >= 1/2); such a case could only pass
    # by assuming binary32 sums, which the API page does not promise.
    applies=lambda c: c.dtype == "fp32" or c.shape["n"] <= 17)

# q_rsqrt: one Newton step after the 0x5f3759df guess, relative error in
# [-1.76e-3, 0] (shared/TRAINLIB_API_MORE.md, "Tensor utilities").
Q_RSQRT_REL = 1.76e-3


def _positive(c, inputs: dict) -> dict:
    """x in (0, 64]: |u| * 64 plus 2^-10, on the grid."""
    return dict(inputs, x=format_named(c.dtype).round(np.abs(inputs["x"]) * 64 + 2.0 ** -10))


Q_RSQRT = _entry("q_rsqrt", (dict(n=64),), _flat("x"), lambda c: dict(c.shape),
                 lambda c, i: utils.q_rsqrt(i["x"], c.entry.approximations["q_rsqrt_rel"], format_named(c.dtype)),
                 cores=(1,), input_values=_positive, approximations={"q_rsqrt_rel": Q_RSQRT_REL}, dtypes=WITH_FP16)

ENTRIES = [TRANSPOSE_MATRIX, TRANSPOSE, COPY, SET_TO_VALUE, VECT_SUM, BROADCAST_SUM, MM_BROADCAST, MM_ADD, LAYOUT,
           PAD, REDUCE_MEAN, MEAN_STD, Q_RSQRT]
