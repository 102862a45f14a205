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

from golden.bundle import Reference
from golden.formats import NumberFormat
from golden.lazy_torch import torch


def _softmax(x: np.ndarray) -> np.ndarray:
    return torch.softmax(torch.tensor(x, dtype=torch.float64), dim=-1).numpy()


def _fw_bound(x: np.ndarray, y: np.ndarray, A: float, k_e: int, k_s: int, k_div: int,
              fmt: NumberFormat, radius: np.ndarray | None = None) -> np.ndarray:
    """The bound of the device's softmax of x around y = softmax(x). With a
    `radius` (the device's input is x' with |x' - x| <= radius, elementwise),
    around y still: softmax(x')_j is within y_j e^(+-s_j), s_j = radius_j +
    the row's largest radius (numerator and denominator each move by at most
    that factor), and |x'_j - m'| <= X_j + s_j."""
    u, eta = fmt.unit_roundoff, fmt.smallest_subnormal / 2
    W = x.shape[-1]
    spread = 0.0 if radius is None else radius + radius.max(axis=-1, keepdims=True)
    X = np.abs(x - x.max(axis=-1, keepdims=True)) + spread
    y_in = y * np.exp(spread)                  # the largest softmax of an input in the ball
    up = (1 + A) * np.exp(u * X) * (1 + u) ** k_e - 1
    down = 1 - (1 - A) * np.exp(-u * X) * (1 - u) ** k_e
    r_up = (y_in * up).sum(axis=-1, keepdims=True)
    r_down = (y_in * down).sum(axis=-1, keepdims=True)
    n_sum = W - 1 + k_s
    upper = (1 + up) * (1 + u) ** k_div / ((1 - r_down) * (1 - u) ** n_sum)
    lower = (1 - down) * (1 - u) ** k_div / ((1 + r_up) * (1 + u) ** n_sum)
    return y_in * np.maximum(upper - 1, 1 - lower) + (y_in - y) + 2.0 ** -126 + 3 * eta


def storage_roundings(fmt: NumberFormat) -> tuple[int, int, int]:
    """(k_e, k_s, k_div) of the row softmax: fp16/bf16 store each
    exponential and the row sum in the format, and round the binary32
    quotient once more."""
    return (0, 0, 1) if fmt.bits == 32 else (1, 1, 2)


def fw_bound(x: np.ndarray, radius: np.ndarray, fmt: NumberFormat, fastexp_rel: float) -> np.ndarray:
    """The row softmax FW's bound around softmax(x) for a device input within
    `radius` of x (a chained computation, e.g. attention scores)."""
    return _fw_bound(x, _softmax(x), fastexp_rel, *storage_roundings(fmt), fmt, radius=radius)


def softmax(inputs: dict[str, np.ndarray], step: str, fmt: NumberFormat, fastexp_rel: float) -> dict[str, Reference]:
    """The row softmax over the last axis of x [H x W] (FW) or its BW from y, dy."""
    if step == "fw":
        x = inputs["x"]
        y = _softmax(x)
        bound = _fw_bound(x, y, fastexp_rel, *storage_roundings(fmt), fmt)
        return {"y": Reference(y, np.zeros_like(y), 0, propagated=bound)}
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
    elif pattern == "negative":     # every element in [-208, -200): a row maximum that starts at 0, not at the
        x = fmt.round(x * 4.0 - 204.0)   # lowest value, gives e^(x - 0) = 0 everywhere (0/0), below expf's range
    elif pattern in ("peaks", "peak_last"):   # each row's maximum first, in the middle or last in turn
        rows = np.atleast_2d(fmt.round(x * 4.0)).copy()   # (peak_last: last), 100 above the rest: a max search
        for r, row in enumerate(rows):                     # that misses a position overflows expf (past 88.72)
            at = row.size - 1 if pattern == "peak_last" else (0, row.size // 2, row.size - 1)[r % 3]
            row[at] = fmt.round(np.abs(row).max() + 100.0)
        x = rows.reshape(x.shape)
    elif pattern != "uniform":
        raise ValueError(f"no softmax input pattern {pattern!r}")
    out = dict(inputs, x=x)
    if "y" in inputs:
        out["y"] = fmt.round(_softmax(x))
    return out


# ---- the softmax parts (FP32 per-core bodies) ----

def part_inputs(inputs: dict[str, np.ndarray], fmt: NumberFormat) -> dict[str, np.ndarray]:
    """Operands the parts need beyond uniform values: m (row_max's running
    maxima) above the row's maximum in every other row, so that both the old
    value and the row's must be able to win; a divisor and a scale far from
    0 (coeff); s as the row sums of a * b where sm_bw_op_2 reads it."""
    out = dict(inputs)
    if "m" in inputs:
        x = inputs["x"].reshape(len(inputs["m"]), -1)
        lift = np.where(np.arange(len(inputs["m"])) % 2 == 0, 0.25, -2.0)
        out["m"] = fmt.round(x.max(axis=1) + lift)
    if "coeff" in inputs:
        out["coeff"] = fmt.round(np.array([-2.75 + inputs["coeff"][0]]))   # in [-3.75, -1.75)
    if "s" in inputs and "a" in inputs:
        a, b = (inputs[k].reshape(len(inputs["s"]), -1) for k in ("a", "b"))
        out["s"] = fmt.round((a * b).sum(axis=1))
    if "s" in inputs and "x" in inputs:
        out["s"] = fmt.round(inputs["s"] + np.sign(inputs["s"]) * 0.5 + (inputs["s"] == 0))   # |s| >= 0.5
    return out


def row_max(inputs: dict[str, np.ndarray]) -> dict[str, Reference]:
    """maxes[i] = max(m[i], max of row i): exact."""
    m = inputs["m"]
    value = np.maximum(m, inputs["x"].reshape(len(m), -1).max(axis=1))
    return {"maxes": Reference(value, np.abs(value), 0)}


def row_div(inputs: dict[str, np.ndarray]) -> dict[str, Reference]:
    """One rounded quotient per element."""
    s = inputs["s"]
    value = (inputs["x"].reshape(len(s), -1) / s[:, None]).ravel()
    return {"y": Reference(value, np.abs(value), 1)}


def scaled(inputs: dict[str, np.ndarray], divide: bool) -> dict[str, Reference]:
    """x / n or x * scalar: one rounding."""
    c = inputs["coeff"][0]
    value = inputs["x"] / c if divide else inputs["x"] * c
    return {"y": Reference(value, np.abs(value), 1)}


def sm_bw_op_1(inputs: dict[str, np.ndarray], rows: int) -> dict[str, Reference]:
    """S[i] = sum_j a b in index order: each term is rounded by its product
    and at most W - 1 sums (W roundings; fewer where they fuse into FMAs)."""
    a, b = (inputs[k].reshape(rows, -1) for k in ("a", "b"))
    return {"s": Reference((a * b).sum(axis=1), np.abs(a * b).sum(axis=1), a.shape[1])}


def sm_bw_op_2(inputs: dict[str, np.ndarray]) -> dict[str, Reference]:
    """(a - S[i]) b: a difference and a product."""
    s = inputs["s"]
    a, b = (inputs[k].reshape(len(s), -1) for k in ("a", "b"))
    value = ((a - s[:, None]) * b).ravel()
    magnitude = ((np.abs(a) + np.abs(s)[:, None]) * np.abs(b)).ravel()
    return {"y": Reference(value, magnitude, 2)}


def mm_bias_add(inputs: dict[str, np.ndarray], rows: int, per_row: bool) -> dict[str, Reference]:
    """mat[i][j] + bias[i] (per_row) or bias[j]: one rounding."""
    x, bias = inputs["x"].reshape(rows, -1), inputs["bias"]
    added = bias[:, None] if per_row else bias[None, :]
    return {"y": Reference((x + added).ravel(), (np.abs(x) + np.abs(added)).ravel(), 1)}
