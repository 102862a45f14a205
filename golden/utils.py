"""References for the FP32 tensor utilities (harness/runtime/runner/ops_utils.c).

Moves (transposes, copy, set_to_value, pad, the layout conversions) are
exact: reduction 0, bit for bit. Element-wise and broadcast sums: one
rounding. mm_broadcast: K products and sums per element; mm_add: K + 1
(the accumulation onto C), magnitude |C0| + sum |a b|. reduce_mean: a term
x/n passes n - 1 sums, the quotient and the accumulation onto the output:
n + 1, magnitude |out0| + sum |x| / n. mean_std: the statistics of
golden/norm.py (statistics_bounds) with the entry's epsilon. q_rsqrt: the
exact 1/sqrt(x) with the documented relative error (the catalogue states
it) inherited, plus the Newton step's five roundings y0 (1.5 - 0.5 x y0^2):
y0 is within 3.5% of 1/sqrt(x), so 0.5 x y0^2 <= 0.55 and the magnitude is
(1.5 + 0.55) 1.035 |y| < 2.2 |y|.
"""
from __future__ import annotations

import numpy as np

from golden import norm
from golden.bundle import Reference
from golden.formats import NumberFormat


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


def reduce_mean(x: np.ndarray, out0: np.ndarray, dims: tuple[int, ...], axis: int) -> dict[str, Reference]:
    xs = x.reshape(dims)
    n = dims[axis]
    y = out0 + xs.mean(axis=axis).reshape(-1)
    magnitude = np.abs(out0) + np.abs(xs).mean(axis=axis).reshape(-1)
    return {"y": Reference(y, magnitude, n + 1)}


def mean_std(x: np.ndarray, eps: float, fmt: NumberFormat) -> dict[str, Reference]:
    mu, v, sigma, e_mu, e_v, e_s = norm.statistics_bounds(x.reshape(1, -1), fmt, eps)
    return {name: Reference(value, np.zeros_like(value), 0, propagated=bound)
            for name, value, bound in (("mean", mu, e_mu), ("var", v, e_v), ("std", sigma, e_s))}


def q_rsqrt(x: np.ndarray, relative: float) -> dict[str, Reference]:
    y = 1.0 / np.sqrt(x)
    return {"y": Reference(y, 2.2 * y, 5, propagated=relative * y)}
