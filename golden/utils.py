"""References for the tensor utilities (harness/runtime/runner/ops_utils.c).

Moves (transposes, copy, set_to_value, pad, the layout conversions) are
exact: reduction 0, bit for bit. Element-wise and broadcast sums: one
rounding. mm_broadcast: K products and sums per element; mm_add: K + 1
(the accumulation onto C), magnitude |C0| + sum |a b|. reduce_mean adds
into an output the caller zeroes first (the API page), so the reference is
the mean alone: a term passes n - 1 sums and the quotient, in either order
(the sum divided, or each term divided and summed); adding the result, or
the first term, to zero is exact: n, magnitude sum |x| / n. mean_std: the statistics of
golden/norm.py (statistics_bounds) with the entry's epsilon. q_rsqrt: the
exact 1/sqrt(x) with the documented relative error (the catalogue states
it) inherited, plus the Newton step's five roundings y0 (1.5 - 0.5 x y0^2):
y0 is within 3.5% of 1/sqrt(x), so 0.5 x y0^2 <= 0.55 and the magnitude is
(1.5 + 0.55) 1.035 |y| < 2.2 |y|.

The FP16 twins compute the sums, matmuls and means in the format itself:
the same references, with the format's unit roundoff. mean_std_fp16 may
compute in the format or in binary32 (the API page is silent; its bound
is the larger of the two), q_rsqrt_fp16 computes in binary32 and rounds
each result once. A binary32
error is the FP32 bound at binary32's unit roundoff, propagated; the
rounding to the format adds, for a stored statistic, u (|value| + that
bound) plus half the smallest subnormal, and for q_rsqrt reduction 1 on
magnitude |y|: the binary32 result is at most |y| (1 + 2.2 gamma(5)) since
the documented error is <= 0, and that excess is far below the u^2 by
which gamma(1) = u / (1 - u) exceeds u.
"""
from __future__ import annotations

import numpy as np

from golden import norm
from golden.bundle import Reference
from golden.formats import NumberFormat, format_named

BINARY32 = format_named("fp32")


def exact(y: np.ndarray) -> dict[str, Reference]:
    return {"y": Reference(y, np.abs(y), 0)}


def transpose(x: np.ndarray, dims: tuple[int, ...], axes: tuple[int, ...]) -> dict[str, Reference]:
    return exact(np.transpose(x.reshape(dims), axes).reshape(-1))


def broadcast_sum(a: np.ndarray, b: np.ndarray) -> dict[str, Reference]:
    return {"y": Reference((a + b).reshape(-1), (np.abs(a) + np.abs(b)).reshape(-1), 1)}


def mm_broadcast(A: np.ndarray, B: np.ndarray) -> dict[str, Reference]:
    return {"C": Reference(np.matmul(A, B).reshape(-1), np.matmul(np.abs(A), np.abs(B)).reshape(-1), A.shape[-1])}


def mm_add(A: np.ndarray, B: np.ndarray, C0: np.ndarray, trans_B: int) -> dict[str, Reference]:
    Bm = B.T if trans_B else B
    return {"C": Reference((C0 + A @ Bm).reshape(-1), (np.abs(C0) + np.abs(A) @ np.abs(Bm)).reshape(-1),
                           A.shape[1] + 1)}


def layout(x: np.ndarray, g: np.ndarray, C: int, H: int, W: int, to_hwc: int, data: int,
           grad: int) -> dict[str, Reference]:
    def convert(t):
        return (t.reshape(C, H, W).transpose(1, 2, 0) if to_hwc else t.reshape(H, W, C).transpose(2, 0, 1)).reshape(-1)
    y_data = convert(x) if data else x.copy()
    y_grad = convert(g) if grad else g.copy()
    return {"y_data": Reference(y_data, np.abs(y_data), 0), "y_grad": Reference(y_grad, np.abs(y_grad), 0)}


def pad(x: np.ndarray, C: int, H: int, W: int, L: int, R: int, U: int, D: int, hwc: int) -> dict[str, Reference]:
    if hwc:
        y = np.pad(x.reshape(H, W, C), ((U, D), (L, R), (0, 0)))
    else:
        y = np.pad(x.reshape(C, H, W), ((0, 0), (U, D), (L, R)))
    return exact(y.reshape(-1))


def reduce_mean(x: np.ndarray, dims: tuple[int, ...], axis: int) -> dict[str, Reference]:
    xs = x.reshape(dims)
    return {"y": Reference(xs.mean(axis=axis).reshape(-1), np.abs(xs).mean(axis=axis).reshape(-1), dims[axis])}


def _stored(value: np.ndarray, bound: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    """The bound of a binary32 result within `bound` of value once rounded to fmt."""
    if fmt.bits == 32:
        return bound
    return bound + fmt.unit_roundoff * (np.abs(value) + bound) + fmt.smallest_subnormal / 2


def mean_std(x: np.ndarray, eps: float, fmt: NumberFormat) -> dict[str, Reference]:
    """eps as the device holds it (rounded to fmt). The FP16 twin may compute
    in binary32 and round each result, or compute in the format itself (the
    API page documents only the FP32 call): the bound is the larger of the
    two."""
    mu, v, sigma, *in32 = norm.statistics_bounds(x.reshape(1, -1), BINARY32, eps)
    bounds = [_stored(value, bound, fmt) for value, bound in zip((mu, v, sigma), in32)]
    if fmt.bits != 32:
        in_format = norm.statistics_bounds(x.reshape(1, -1), fmt, eps)[3:]
        bounds = [np.maximum(a, b) for a, b in zip(bounds, in_format)]
    return {name: Reference(value, np.zeros_like(value), 0, propagated=bound)
            for name, value, bound in zip(("mean", "var", "std"), (mu, v, sigma), bounds)}


def q_rsqrt(x: np.ndarray, relative: float, fmt: NumberFormat) -> dict[str, Reference]:
    y = 1.0 / np.sqrt(x)
    if fmt.bits == 32:
        return {"y": Reference(y, 2.2 * y, 5, propagated=relative * y)}
    newton = 5 * BINARY32.unit_roundoff / (1 - 5 * BINARY32.unit_roundoff) * 2.2 * y
    return {"y": Reference(y, y, 1, propagated=relative * y + newton)}
