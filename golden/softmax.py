"""References for the softmax (harness/runtime/runner/ops_softmax.c): the
exact softmax of each row in float64, never the approximation the library
uses; the approximation's documented bound enters the tolerance.

FW bound. With m the row maximum, e_j = exp(x_j - m) and y_j = e_j / S:
the device's exponential of the rounded difference fl(x_j - m) is e_j times
a factor within [(1 - A) e^-uX_j (1-u)^k_e, (1 + A) e^uX_j (1+u)^k_e], with
X_j = |x_j - m|, A the exponential's documented relative error (the
catalogue entry states it: fastexp_gist's 3%; expf's one ulp is A = 0 and
two more roundings) and k_e the roundings of its storage (fp16 rounds e to
the format). The sum S' of the W device exponentials, W - 1 additions and
k_s more roundings (the stored sum, the per-core partial sums), is S times a
factor within [(1 - r-)(1-u)^(W-1+k_s), (1 + r+)(1+u)^(W-1+k_s)], r+- the
y-weighted means of the per-element factors. The quotient (k_div roundings)
gives each y_j its relative bound; the exponentials that underflow (fast
exponential 0 below -87.3: e < 2^-126) and the format's subnormal roundings
add 2^-126 + 3 eta absolutely. Everything is in Reference.propagated.

BW: sums_i = sum_j dy y (W products and sums), stored (1), dx = (dy - sums_i) y
(2), and the format's rounding of a binary32 result (1): reduction W + 4,
magnitude (|dy_j| + sum |dy y|) |y_j|.
"""
from __future__ import annotations

import numpy as np
import torch

from golden.bundle import Reference
from golden.formats import NumberFormat


def _softmax(x: np.ndarray) -> np.ndarray:
    return torch.softmax(torch.tensor(x, dtype=torch.float64), dim=-1).numpy()


def _fw_bound(x: np.ndarray, y: np.ndarray, A: float, k_e: int, k_s: int, k_div: int,
              fmt: NumberFormat) -> np.ndarray:
    u, eta = fmt.unit_roundoff, fmt.smallest_subnormal / 2
    W = x.shape[-1]
    X = np.abs(x - x.max(axis=-1, keepdims=True))
    up = (1 + A) * np.exp(u * X) * (1 + u) ** k_e - 1
    down = 1 - (1 - A) * np.exp(-u * X) * (1 - u) ** k_e
    r_up = (y * up).sum(axis=-1, keepdims=True)
    r_down = (y * down).sum(axis=-1, keepdims=True)
    n_sum = W - 1 + k_s
    upper = (1 + up) * (1 + u) ** k_div / ((1 - r_down) * (1 - u) ** n_sum)
    lower = (1 - down) * (1 - u) ** k_div / ((1 + r_up) * (1 + u) ** n_sum)
    return y * np.maximum(upper - 1, 1 - lower) + 2.0 ** -126 + 3 * eta


def softmax(inputs: dict[str, np.ndarray], step: str, fmt: NumberFormat, fastexp_rel: float) -> dict[str, Reference]:
    """The row softmax over the last axis of x [H x W] (FW) or its BW from y, dy."""
    if step == "fw":
        x = inputs["x"]
        y = _softmax(x)
        k_e = 0 if fmt.bits == 32 else 1          # fp16/bf16 store each exponential in the format
        k_s = 0 if fmt.bits == 32 else 1          # ... and the row sum
        k_div = 1 if fmt.bits == 32 else 2        # binary32 quotient, then the format's rounding
        return {"y": Reference(y, np.zeros_like(y), 0, propagated=_fw_bound(x, y, fastexp_rel, k_e, k_s, k_div, fmt))}
    if step == "bw":
        y, dy = inputs["y"], inputs["dy"]
        s = (dy * y).sum(axis=-1, keepdims=True)
        dx = (dy - s) * y
        magnitude = (np.abs(dy) + np.abs(dy * y).sum(axis=-1, keepdims=True)) * np.abs(y)
        return {"dx": Reference(dx, magnitude, y.shape[-1] + 4)}
    raise ValueError(f"softmax has no step {step!r}; expected fw or bw")


def vector_softmax(inputs: dict[str, np.ndarray], max_cores: int, fmt: NumberFormat) -> dict[str, Reference]:
    """expf within one ulp (A = 0, two roundings); the per-core partial sums
    add up to `max_cores` more roundings to the sum."""
    x = inputs["x"]
    y = _softmax(x)
    return {"y": Reference(y, np.zeros_like(y), 0, propagated=_fw_bound(x, y, 0.0, 2, max_cores, 1, fmt))}


def edge_inputs(inputs: dict[str, np.ndarray], pattern: str, fmt: NumberFormat) -> dict[str, np.ndarray]:
    """x as the shape's pattern asks, on the grid; for BW, y = the rounded
    softmax of x (the forward output the BW reads)."""
    x = inputs["x"]
    if pattern == "large":          # rows spanning -1000 .. 1000: overflow without the max subtraction
        x = fmt.round(x * 1000.0)
    elif pattern == "equal":        # all-equal rows: y = 1/W exactly
        x = np.broadcast_to(x[..., :1], x.shape).copy()
    elif pattern == "spread":       # a realistic attention row: logits of a few units
        x = fmt.round(x * 8.0)
    elif pattern != "uniform":
        raise ValueError(f"no softmax input pattern {pattern!r}")
    out = dict(inputs, x=x)
    if "y" in inputs:
        out["y"] = fmt.round(_softmax(x))
    return out
