"""References for the normalizations (harness/runtime/runner/ops_norm.c), from
the formulas of shared/TRAINLIB_API_MORE.md ("Normalization"), in float64
on inputs already on the grid. EPSILON is the binary32 value of 1e-10.

Per channel, D = H*W, sums in index order.

Frozen FW, WG and IG read the statistics (mu, v, sigma) from the inputs, so
each output is a plain expression of rounded operations on exact values:
  FW  y = gamma/sigma * (x - mu) + beta: quotient, difference, product,
      sum: reduction 4, magnitude |gamma/sigma| |x - mu| + |beta|
  WG  dgamma = (sum dy (x - mu)) / sigma: D + 2; dbeta = sum dy: D - 1;
      one output, so both get D + 2, magnitudes sum |dy| |x - mu| / sigma
      and sum |dy|
  IG  dx = gamma/(D sigma) * (D dy - sum dy - (x - mu)/v * sum (x - mu) dy):
      the longest chain is the last term's: dot product D + 1, difference,
      quotient and product 3, two subtractions, the scale's product and
      quotient and the final product 3: reduction D + 9, magnitude
      |gamma|/(D sigma) (D |dy| + sum |dy| + |x - mu|/v sum |x - mu| |dy|).

Unfrozen FW computes the statistics itself, and y inherits their error
(Reference.propagated). With A = sum |x| / D and Q = sum x^2 / D:
  mu:     E_mu = g(n_mu) A, n_mu = (D - 1) + D unless D is a power of two
          (then the divisions are exact): this covers both (sum x)/D and
          sum (x/D)
  Q:      E_Q = g(n_Q) Q, n_Q = D products + (D - 1) sums + the same divisions
  mu*mu:  E_m2 = (2|mu| + E_mu) E_mu + u (|mu| + E_mu)^2
  v:      E_v = E_Q + E_m2 + g(2) (Q + E_Q + mu^2 + E_m2 + eps); the clamp
          (v < 0 -> eps) only moves v towards the exact value, which is >= eps
  sigma:  |sqrt(v') - sqrt(v)| <= |v' - v| / sqrt(v), plus one rounding:
          E_s = E_v / sigma + u (sigma + E_v / sigma)
  y:      rounding as frozen (4), with magnitude |gamma|/(sigma - E_s)
          (|x - mu| + E_mu) + |beta|, plus the inherited
          |gamma| (E_mu / (sigma - E_s) + |x - mu| E_s / (sigma (sigma - E_s)))
Exact channels. For a constant channel whose value c is such that every
k c and k c^2 (k <= D) is on the grid, with D a power of two, the device
computes mu = c and Q = mu*mu exactly, so v = eps exactly: E_mu = E_v = 0
and E_s = u sigma. Not so for D = 1 with any x: a compiler that fuses
Q - mu*mu into one FMA (GCC does on RISC-V) leaves v = eps + (fl(x^2) - x^2),
up to u x^2 = 3e-9 for |x| = 0.25, where sigma = 1e-5 needs 1e-10: the
stored variance and stdev of a single-element channel then depend on the
compiler (y does not: x - mu = 0). So D = 1 channels get dyadic values. These
zero-variance channels are where a norm is most fragile (sigma = 1e-5: every
error in x - mu is amplified 1e5 times); with the exactness the bound stays
tight, and y must be beta. A channel where sigma <= E_s has no useful bound:
such inputs are refused, not passed.
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat

EPSILON = float(np.float32(1e-10))


def _gamma(n: int, u: float) -> float:
    return n * u / (1 - n * u)


def _channels(a: np.ndarray, C: int) -> np.ndarray:
    return a.reshape(C, -1)


def statistics(x: np.ndarray, eps: float = EPSILON) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact mu, v (biased variance + eps) and sigma per channel of x [C x D]."""
    mu = x.mean(axis=1)
    v = (x * x).mean(axis=1) - mu * mu + eps
    return mu, v, np.sqrt(v)


def _exact_channels(x: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    """Channels whose statistics the device computes exactly (see above)."""
    C, D = x.shape
    if D & (D - 1):
        return np.zeros(C, dtype=bool)
    k = np.arange(1, D + 1, dtype=np.float64)
    out = np.zeros(C, dtype=bool)
    for c in range(C):
        v = x[c, 0]
        if np.all(x[c] == v):
            multiples = np.concatenate([k * v, k * v * v])
            out[c] = bool(np.all(fmt.round(multiples) == multiples))
    return out


def statistics_bounds(x: np.ndarray, fmt: NumberFormat, eps: float = EPSILON):
    """mu, v, sigma per channel of x [C x D] and the bounds of the device's
    values of them (the derivation above): mu, v, sigma, E_mu, E_v, E_s."""
    D = x.shape[1]
    u = fmt.unit_roundoff
    divisions = 0 if D & (D - 1) == 0 else D
    n_mu, n_q = (D - 1) + divisions, D + (D - 1) + divisions
    mu, v, sigma = statistics(x, eps)
    a, q = np.abs(x).mean(axis=1), (x * x).mean(axis=1)
    e_mu = _gamma(n_mu, u) * a
    e_q = _gamma(n_q, u) * q
    e_m2 = (2 * np.abs(mu) + e_mu) * e_mu + u * (np.abs(mu) + e_mu) ** 2
    e_v = e_q + e_m2 + _gamma(2, u) * (q + e_q + mu * mu + e_m2 + eps)
    exact = _exact_channels(x, fmt)
    e_mu, e_v = np.where(exact, 0.0, e_mu), np.where(exact, 0.0, e_v)
    e_s = e_v / sigma + u * (sigma + e_v / sigma)
    if np.any(sigma <= e_s):
        c = int(np.argmax(sigma <= e_s))
        raise ValueError(f"channel {c} has sigma {sigma[c]:.3g} within its error bound {e_s[c]:.3g}: "
                         f"the documented formula has no useful bound there; choose other inputs")
    return mu, v, sigma, e_mu, e_v, e_s


def normalized(x: np.ndarray, w: np.ndarray, b: np.ndarray, fmt: NumberFormat, eps: float) -> Reference:
    """(x - mu) / sigma * w + b per row of x [R x n] with the row's own
    statistics (w, b broadcast against x): four roundings with magnitudes
    that allow for the statistics' error, plus the error y inherits from
    them (the derivation above)."""
    mu, _, sigma, e_mu, _, e_s = statistics_bounds(x, fmt, eps)
    mu_, sigma_, e_mu_, e_s_ = mu[:, None], sigma[:, None], e_mu[:, None], e_s[:, None]
    d = x - mu_
    y = d / sigma_ * w + b
    magnitude = np.abs(w) / (sigma_ - e_s_) * (np.abs(d) + e_mu_) + np.abs(b)
    inherited = np.abs(w) * (e_mu_ / (sigma_ - e_s_) + np.abs(d) * e_s_ / (sigma_ * (sigma_ - e_s_)))
    return Reference(y, magnitude, 4, propagated=inherited)


def _only(value: np.ndarray, bound: np.ndarray) -> Reference:
    """A value whose whole bound is inherited."""
    return Reference(value, np.zeros_like(value), 0, propagated=bound)


def instnorm(inputs: dict[str, np.ndarray], step: str, frozen: int, C: int,
             fmt: NumberFormat) -> dict[str, Reference]:
    x = _channels(inputs["x"], C)
    shape = inputs["x"].shape
    D = x.shape[1]
    gamma, beta = inputs["coeff"][:C, None], inputs["coeff"][C:, None]
    if step == "fw" and not frozen:
        mu, v, sigma, e_mu, e_v, e_s = statistics_bounds(x, fmt)
        if fmt.bits == 16:   # the statistics are stored rounded to the format
            e_mu, e_v, e_s = (e + fmt.unit_roundoff * (np.abs(value) + e) + fmt.smallest_subnormal / 2
                              for value, e in ((mu, e_mu), (v, e_v), (sigma, e_s)))
        y = normalized(x, gamma, beta, fmt, EPSILON)
        return {"y": Reference(y.value.reshape(shape), y.magnitude.reshape(shape), 4,
                               propagated=y.propagated.reshape(shape)),
                "mean_out": _only(mu, e_mu), "var_out": _only(v, e_v), "stdev_out": _only(sigma, e_s)}
    mu, v, sigma = (inputs[name][:, None] for name in ("mean", "var", "stdev"))
    d = x - mu
    if step == "fw":
        y = gamma / sigma * d + beta
        out = {"y": Reference(y.reshape(shape), (np.abs(gamma / sigma * d) + np.abs(beta)).reshape(shape), 4)}
        for name in ("mean", "var", "stdev"):
            out[f"{name}_out"] = Reference(inputs[name].copy(), np.abs(inputs[name]), 0)
        return out
    dy = _channels(inputs["dy"], C)
    out = {}
    if step in ("wg", "bw"):
        dgamma = (dy * d).sum(axis=1) / sigma[:, 0]
        dbeta = dy.sum(axis=1)
        magnitude = np.concatenate([(np.abs(dy) * np.abs(d)).sum(axis=1) / sigma[:, 0], np.abs(dy).sum(axis=1)])
        out["dcoeff"] = Reference(np.concatenate([dgamma, dbeta]), magnitude, D + 2)
    if step in ("ig", "bw"):
        sum_dy = dy.sum(axis=1, keepdims=True)
        dot = (d * dy).sum(axis=1, keepdims=True)
        scale = gamma / (D * sigma)
        dx = scale * (D * dy - sum_dy - d / v * dot)
        magnitude = np.abs(scale) * (D * np.abs(dy) + np.abs(dy).sum(axis=1, keepdims=True)
                                     + np.abs(d) / v * (np.abs(d) * np.abs(dy)).sum(axis=1, keepdims=True))
        out["dx"] = Reference(dx.reshape(shape), magnitude.reshape(shape), D + 9)
    if not out:
        raise ValueError(f"instnorm has no step {step!r}; expected fw, wg, ig or bw")
    return out


def edge_inputs(inputs: dict[str, np.ndarray], C: int, constant: int, step: str,
                fmt: NumberFormat, offset: int = 0, foreign: bool = False) -> dict[str, np.ndarray]:
    """Channels at different scales (x times 1, 2, 4) around `offset` (a mean
    far from 0 makes sum x^2 / D - mu^2 cancel: the bound must carry the
    terms' magnitude, not the result's), the first `constant` channels (all
    of them when D = 1) constant at a dyadic value (zero variance, computed
    exactly), and the running statistics.

    The backward steps read statistics consistent with x, as a training step
    leaves them (mean, var = variance + EPSILON, stdev = sqrt(var), each
    rounded to the grid). The FW gets statistics that are NOT x's own (mean
    shifted by half a stdev, twice the variance): a frozen FW must use them
    and leave them untouched, an unfrozen one must overwrite them; with x's
    own statistics in the arrays, a FW that ignores the flag, or never
    stores what it computed, would pass. `foreign` gives the backward steps
    such statistics too: the page has them "use stored stats", and one that
    recomputed mu and sigma from x would differ from x's own only by
    rounding, inside the bound."""
    x = fmt.round(_channels(inputs["x"], C) * (2.0 ** (np.arange(C) % 3))[:, None] + offset)
    if x.shape[1] == 1:
        constant = C               # a single element is a constant channel: make it an exact one
    for c in range(constant):
        x[c] = (c % 5 + 3) / 8.0   # 0.375 .. 0.875: k c and k c^2 on every grid for k <= 64
    mu, v, sigma = statistics(x)
    if step == "fw" or foreign:
        mu, v = mu + sigma / 2, 2 * v
    v_rounded = fmt.round(v)
    return dict(inputs, x=x.reshape(inputs["x"].shape), mean=fmt.round(mu), var=v_rounded,
                stdev=fmt.round(np.sqrt(v_rounded)))


# ---- BatchNorm, LayerNorm, RMSNorm, NoNorm (FP32 FW) ----

def _flat(r: Reference) -> Reference:
    return Reference(r.value.reshape(-1), r.magnitude.reshape(-1), r.reduction,
                     None if r.propagated is None else r.propagated.reshape(-1))


def batchnorm(inputs: dict[str, np.ndarray], B: int, C: int, fmt: NumberFormat, eps: float) -> dict[str, Reference]:
    """Per channel over its B*H*W values: rows of the channel-major view."""
    x = inputs["x"].reshape(B, C, -1).transpose(1, 0, 2).reshape(C, -1)
    w, b = inputs["coeff"][:C, None], inputs["coeff"][C:, None]
    y = normalized(x, w, b, fmt, eps)

    def back(a):
        return a.reshape(C, B, -1).transpose(1, 0, 2).reshape(-1)
    return {"y": Reference(back(y.value), back(y.magnitude), 4, propagated=back(y.propagated))}


def layernorm(inputs: dict[str, np.ndarray], rows: int, fmt: NumberFormat, eps: float) -> dict[str, Reference]:
    x = inputs["x"].reshape(rows, -1)
    n = x.shape[1]
    return {"y": _flat(normalized(x, inputs["coeff"][None, :n], inputs["coeff"][None, n:], fmt, eps))}


RMSNORM_EPSILON = float(np.float32(1e-5))


def rmsnorm(inputs: dict[str, np.ndarray]) -> dict[str, Reference]:
    """o = w (r x), r = 1/sqrt(sum x^2 / n + 1e-5). Everything is relative:
    the sum of squares (n products, n - 1 sums, up to 8 per-core partials
    added), the quotient and eps add no cancellation, so q = sum/n + eps is
    within g(n + 9) of itself; the square root halves that and rounds, the
    reciprocal, r x and w (r x) round once each: within n + 13 roundings of
    |o|."""
    x, w = inputs["x"], inputs["coeff"]
    n = x.size
    o = w * x / np.sqrt((x * x).sum() / n + RMSNORM_EPSILON)
    return {"y": Reference(o, np.abs(o), n + 13)}


def sum_of_squares(inputs: dict[str, np.ndarray]) -> dict[str, Reference]:
    """sum x^2 from the cores' partials added in core order: a term's chain is
    its product, at most n - 1 sums within its core and at most 7 adding the
    partials (n + 7 roundings); no cancellation, every term is >= 0."""
    x = inputs["x"]
    s = np.array([(x * x).sum()])
    return {"sum": Reference(s, s.copy(), x.size + 7)}


def weighted_scaling(inputs: dict[str, np.ndarray]) -> dict[str, Reference]:
    """o = w (s x), s = coeff[n]: two products."""
    x = inputs["x"]
    w, s = inputs["coeff"][:x.size], inputs["coeff"][x.size]
    o = w * (s * x)
    return {"y": Reference(o, np.abs(o), 2)}


def nonorm(inputs: dict[str, np.ndarray], rows: int) -> dict[str, Reference]:
    """y = x * coeff[j] + bias[j]: a product and a sum."""
    x = inputs["x"].reshape(rows, -1)
    n = x.shape[1]
    c, b = inputs["coeff"][None, :n], inputs["coeff"][None, n:]
    y = x * c + b
    return {"y": Reference(y.reshape(-1), (np.abs(x * c) + np.abs(b)).reshape(-1), 2)}
