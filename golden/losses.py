"""References for the losses (MSE, L1, berHu, CrossEntropy; FW and BW) and
the optimizer (plain gradient descent, with and without weight decay).

Formulas from the API page (shared/TRAINLIB_API_MORE.md, "Losses",
"Optimizer"); values from float64 torch on inputs already on the device's
grid. N = number of elements; o the network output (logits for CE), t the
target. FW gives the scalar loss [1], BW the gradient do [N].

Reduction lengths bound the rounded operations behind one element as
lib_c performs them (lib_c/include/pulp_losses_fp32.h), in units of the
format's unit roundoff u; magnitudes are the sums of |terms| those
roundings are relative to.

- MSE FW: d = t - o, d*d, 1/N, the product (4 per term) and N - 1 additions:
  N + 3; magnitude = the loss (every term is >= 0). BW: o - t, 2/N, the
  product: 3, magnitude |do|.
- L1 FW: d, 1/N, the product (|.| is exact) and N - 1 additions: N + 2.
  BW: sign/N is 1/N rounded: 1, magnitude |do| (0 where o == t: exact).
- berHu: d = |o - t| (1), c = alpha * max d (2). A term d < c carries 1; a
  term (d^2 + c^2)/(2c) at most 10 (d^2: 3, c^2: 5, their sum: 6, 2c exact,
  the quotient of a 6-factor sum by a 2-factor c: 9; 10 when the quotient is
  taken as a product with a reciprocal). The library and the reference may
  pick different branches only where |d - c| <= 3u c; there the branches
  differ by (d - c)^2/(2c) <= 4.5 u^2 c, within one more rounding of the
  term: 11. N - 1 additions, then / N (N rounded to fp16 first in the FP16
  twin): 2. FW: N + 12, magnitude = the loss. BW: (o - t)/(N c): 1 + 2 + 1
  (N c) + 1 (N rounded in FP16) + 1 (quotient) = 6, and a branch flip
  (|d - c| <= 3u c) moves the gradient by |d - c|/(N c) <= 3u/N = 3u |do|:
  9, magnitude |do|. c == 0 (o == t): loss and gradient exactly 0.
- CrossEntropy: see crossentropy() (binary32 for every dtype; the count is
  turned into the format's units there).
- Optimizer: see sgd().
"""
from __future__ import annotations

import math

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat, format_named
from golden.lazy_torch import torch

FP32 = format_named("fp32")
U32 = FP32.unit_roundoff


def _t(array: np.ndarray) -> torch.Tensor:
    return torch.tensor(array, dtype=torch.float64)


def _scalar(value: float, magnitude: float, reduction: int) -> Reference:
    return Reference(np.array([value], dtype=np.float64), np.array([abs(magnitude)], dtype=np.float64),
                     reduction)


def milli_value(milli: int, fmt: NumberFormat) -> float:
    """alpha as ops_losses.c makes it: the binary32 quotient milli / 1000,
    rounded once more to fmt for fp16/bf16."""
    v = float(np.float32(milli) / np.float32(1000.0))
    return v if fmt.bits == 32 else float(fmt.round(np.array(v)))


def micro_value(micro: int, fmt: NumberFormat) -> float:
    """lr or lambda as ops_optim.c makes it: micro / 1000000 in binary32,
    rounded once more to fmt for fp16/bf16."""
    v = float(np.float32(micro) / np.float32(1000000.0))
    return v if fmt.bits == 32 else float(fmt.round(np.array(v)))


def _step(step: str, name: str) -> str:
    if step not in ("fw", "bw"):
        raise ValueError(f"{name} has no step {step!r}; expected fw or bw")
    return step


def mse(inputs: dict[str, np.ndarray], step: str) -> dict[str, Reference]:
    o, t = _t(inputs["o"]), _t(inputs["t"])
    n = o.numel()
    if _step(step, "mse_loss") == "fw":
        loss = float(((t - o) ** 2 / n).sum())
        return {"loss": _scalar(loss, loss, n + 3)}
    grad = (2.0 * (o - t) / n).numpy()
    return {"do": Reference(grad, np.abs(grad), 3)}


def l1(inputs: dict[str, np.ndarray], step: str) -> dict[str, Reference]:
    o, t = _t(inputs["o"]), _t(inputs["t"])
    n = o.numel()
    if _step(step, "l1_loss") == "fw":
        loss = float(((t - o).abs() / n).sum())
        return {"loss": _scalar(loss, loss, n + 2)}
    grad = (torch.sign(o - t) / n).numpy()
    return {"do": Reference(grad, np.abs(grad), 1)}


def berhu(inputs: dict[str, np.ndarray], step: str, alpha: float) -> dict[str, Reference]:
    """alpha already on the format's grid (milli_value)."""
    o, t = _t(inputs["o"]), _t(inputs["t"])
    n = o.numel()
    diff = o - t
    d = diff.abs()
    c = alpha * float(d.max())
    small = d < c
    if _step(step, "berhu_loss") == "fw":
        if c == 0.0:
            return {"loss": _scalar(0.0, 0.0, n + 12)}
        terms = torch.where(small, d, (d * d + c * c) / (2.0 * c))
        loss = float(terms.sum() / n)
        return {"loss": _scalar(loss, loss, n + 12)}
    if c == 0.0:
        grad = torch.zeros_like(d)
    else:
        grad = torch.where(small, torch.sign(diff) / n, diff / (n * c))
    grad = grad.numpy()
    return {"do": Reference(grad, np.abs(grad), 9)}


def _gamma(n: int, u: float) -> float:
    return n * u / (1.0 - n * u)


def _check_target_sum(t: np.ndarray) -> float:
    """S = sum t, and the 0 -> 1 rule on it, must not depend on rounding: S is
    either exactly 0 with every prefix sum exact in binary32 (the library sums
    in index order in binary32 for every dtype), or far from 0."""
    s = float(t.sum())
    if s == 0.0:
        prefix = np.cumsum(t)
        if not np.array_equal(prefix.astype(np.float32).astype(np.float64), prefix):
            raise ValueError("a target summing to 0 must sum exactly in binary32 (use dyadic values)")
    elif abs(s) <= 4 * _gamma(t.size, U32) * float(np.abs(t).sum()):
        raise ValueError("a target whose sum is within rounding of 0 makes the S == 0 -> 1 rule ambiguous")
    return s


def crossentropy(inputs: dict[str, np.ndarray], step: str, fmt: NumberFormat) -> dict[str, Reference]:
    """Logits o [N], target t [N].

    The library computes in binary32 for every dtype: m = max o (exact),
    x_i = fl(o_i - m), Se = sum expf(x_i), lse = fl(logf(Se) + m),
    S = sum t (0 -> 1), loss = fl(fl(lse S) - sum fl(t_i o_i));
    do_i = fl(fl(fl(expf(x_i) / Se) S) - t_i). expf and logf are counted here
    as one rounding each; their error beyond that is the catalogue entry's
    tolerance_scale.

    With X = m - min o (the logit range), the rounded x_i is off by at most
    u|x_i| <= uX, which changes expf(x_i) by a relative u|x_i|; in Se, whose
    largest term is 1, those add up to at most u min(X, (N-1)/e) (t e^-t <=
    1/e), call it uA. So Se carries (N - 1) + 1 + A roundings relative to
    itself, i.e. an absolute error of log Se of (N + A)u; logf and + m add u
    each relative to |log Se| and |lse|. With LM = |m| + |log Se| + 1 (the
    1 is the scale of log's absolute error), lse carries N + A + 2 relative
    to LM. S carries N - 1 relative to T = sum |t| (T = 1 when S == 0,
    which is then exact: _check_target_sum), the product 1, the dot product
    N relative to sum |t o|, the subtraction 1, and one more for the
    second-order terms:
        FW: reduction 2N + A + 4, magnitude LM T + sum |t_i o_i|.
    BW: expf(x_i) carries X + 1 relative to p_i = softmax(o)_i, Se N + A,
    the quotient 1, S N - 1, the product 1, - t_i 1, one for second order:
        BW: reduction X + 2N + A + 4, magnitude p_i T + |t_i|.
    fp16/bf16: that binary32 error (with expf/logf at one ulp: 2 more) is
    below one u of the format (checked), and the final rounding to the
    format is one more: reduction 2 in the format's units.
    """
    o_np, t_np = inputs["o"], inputs["t"]
    n = o_np.size
    s = _check_target_sum(t_np)
    o, t = _t(o_np), _t(t_np)
    m = float(o.max())
    x_range = m - float(o.min())
    a = min(x_range, (n - 1) / math.e)
    se = float(torch.exp(o - m).sum())
    lse = math.log(se) + m
    s_used = s if s != 0.0 else 1.0
    t_abs = float(t.abs().sum()) if s != 0.0 else 1.0
    if _step(step, "ce_loss") == "fw":
        n32 = 2 * n + math.ceil(a) + 4
        loss = lse * s_used - float((t * o).sum())
        magnitude = (abs(m) + abs(math.log(se)) + 1.0) * t_abs + float((t * o).abs().sum())
        return {"loss": _scalar(loss, magnitude, _in_format(n32, fmt))}
    p = torch.softmax(o, dim=0)
    grad = (p * s_used - t).numpy()
    magnitude = (p * t_abs + t.abs()).numpy()
    n32 = math.ceil(x_range) + 2 * n + math.ceil(a) + 4
    return {"do": Reference(grad, magnitude, _in_format(n32, fmt))}


def _in_format(n32: int, fmt: NumberFormat) -> int:
    """A binary32 reduction as the format's: itself for fp32; for fp16/bf16
    the binary32 error, expf/logf at one ulp included (n32 + 2), must stay
    below one u of the format, plus the final rounding: 2."""
    if fmt.bits == 32:
        return n32
    if _gamma(n32 + 2, U32) > fmt.unit_roundoff:
        raise ValueError(f"a binary32 reduction of {n32} does not fit in one {fmt.name} rounding")
    return 2


def sgd(inputs: dict[str, np.ndarray], use_biases: int, lr: float, lam: float) -> dict[str, Reference]:
    """w, dw [nw], b, db [nb]; lr and lam already on the format's grid.

    lambda == 0: w' = w - lr g: the product and the subtraction, 2, magnitude
    |w| + lr|g|; the gradient is untouched (a copy: 0).
    lambda != 0: g' = g + lambda w: 2, magnitude |g| + lambda|w|; w' = w - lr g':
    g' carries 2 relative to |g| + lambda|w|, the product 1, the subtraction 1:
    4, magnitude |w| + lr(|g| + lambda|w|).
    Without use_biases, b and db stay as they were (exact).
    """
    out = {} if use_biases else {name: Reference(inputs[name[:-4]], np.abs(inputs[name[:-4]]), 0)
                                 for name in ("b_new", "db_new")}
    pairs = (("w", "dw"),) + ((("b", "db"),) if use_biases else ())
    for p, g in pairs:
        w, dw = _t(inputs[p]), _t(inputs[g])
        if lam == 0.0:
            out[f"{p}_new"] = Reference((w - lr * dw).numpy(), (w.abs() + lr * dw.abs()).numpy(), 2)
            out[f"{g}_new"] = Reference(dw.numpy(), dw.abs().numpy(), 0)
        else:
            g2 = dw + lam * w
            g2_mag = dw.abs() + lam * w.abs()
            out[f"{p}_new"] = Reference((w - lr * g2).numpy(), (w.abs() + lr * g2_mag).numpy(), 4)
            out[f"{g}_new"] = Reference(g2.numpy(), g2_mag.numpy(), 2)
    return out


# Input patterns a loss case asks for by a flag in its shape (value 1); the
# plain case keeps the seeded uniform o and t in [-1, 1).
INPUT_FLAGS = ("large_logits", "equal_logits", "soft_target", "zero_target", "zero_sum_target", "equal", "ties",
               "heavy_target", "signed_target", "max_first", "max_middle", "max_last")


def edge_inputs(loss: str, shape: dict, inputs: dict[str, np.ndarray], fmt: NumberFormat) -> dict[str, np.ndarray]:
    """o and t of a loss case from the seeded uniform ones (on fmt's grid, in
    [-1, 1)); every returned tensor is on the grid too.

    CrossEntropy: logits o = 4 x uniform (exact scaling) and a one-hot t at a
    seeded index, unless a flag asks for large logits (|o| up to 90 and one
    at 100: expf(100) overflows binary32, whose limit is e^88.72, so without
    the max subtraction the loss is Inf or NaN), all-equal
    logits (softmax exactly 1/N), a soft target (nonnegative, sum near 1), an
    all-zero target (S = 0 -> 1) or a dyadic target of +-1/2 summing exactly
    to 0; targets whose sum S is neither 0 nor 1 (heavy: about 2.5, signed:
    the uniform draw), so that the factor S of the gradient is alive; the
    maximum logit first, in the middle or last, 100 above the rest, so that
    a max search that misses a position overflows expf. Other losses: o == t everywhere ("equal": d = 0, berHu's c = 0), or
    o and t on a grid of 1/8 with |o - t| in {0, 1/8, 1/4, 1/2} ("ties":
    o == t at some elements, and d == c for alpha 0.5 and 1)."""
    flags = [k for k in shape if k in INPUT_FLAGS and shape[k]]
    o, t = inputs["o"], inputs["t"]
    n = o.size
    i = np.arange(n)
    if loss == "ce_loss":
        hot = np.zeros(n)
        hot[int(abs(t[0]) * n) % n] = 1.0
        o_out, t_out = 4.0 * o, hot
        if "large_logits" in flags:
            o_out = fmt.round(90.0 * o)
            o_out[int(abs(t[1 % n]) * n) % n] = 100.0   # at least one logit past expf's overflow at 88.72
        if "equal_logits" in flags:
            o_out = np.full(n, 3.0)
        if "soft_target" in flags:
            w = np.abs(t) + 0.125
            t_out = fmt.round(w / w.sum())
        if "zero_target" in flags:
            t_out = np.zeros(n)
        if "heavy_target" in flags:     # nonnegative, summing to about 2.5: S is a factor, not the identity
            w = np.abs(t) + 0.125
            t_out = fmt.round(2.5 * w / w.sum())
        if "signed_target" in flags:    # the seeded uniform t itself: S of either sign, neither 0 nor 1
            t_out = t.copy()
            if abs(t_out.sum()) < 0.25 or abs(t_out.sum() - 1.0) < 0.25:
                t_out[0] = fmt.round(t_out[0] - 1.0)
        for flag, at in (("max_first", 0), ("max_middle", n // 2), ("max_last", n - 1)):
            if flag in flags:           # the maximum at one end or the middle, far above the rest (expf overflows
                o_out = fmt.round(o_out)          # without it: e^(o - m) past 88.72 is Inf)
                o_out[at] = fmt.round(np.abs(o_out).max() + 100.0)
        if "zero_sum_target" in flags:
            if n % 2:
                raise ValueError("a +-1/2 target summing to 0 needs an even N")
            t_out = np.where(i % 2 == 0, 0.5, -0.5)
        return {"o": o_out, "t": t_out}
    if "equal" in flags:
        return {"o": o.copy(), "t": o.copy()}
    if "ties" in flags:
        t_out = np.floor(t * 4.0) / 8.0                      # multiples of 1/8 in [-1/2, 1/2)
        steps = np.array([0.0, 0.125, -0.25, 0.5, -0.5, 0.25, -0.125])
        return {"o": t_out + steps[i % len(steps)], "t": t_out}
    return {"o": o, "t": t}
