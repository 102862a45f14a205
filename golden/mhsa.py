"""References for multi-head self-attention (harness/runtime/runner/ops_mhsa.c),
from the formulas of shared/TRAINLIB_API_MORE.md ("Multi-head
self-attention") in float64 torch, with the layouts of
lib_c/include/pulp_mhsa_fp32.h: x = I = X^T (E x L), weights E x F as the
args hold them, q, k, v, a F x L, p n_heads x L x L ([query][key]).

Every output is a chain of matmuls, a scaling and a softmax, so its bound
comes from ball arithmetic (golden/ball.py): each matmul adds the rounding
of its n-term sums (the dispatcher's bias one more), the scale s =
q_rsqrt(Hd) is a ball around 1/sqrt(Hd) as wide as q_rsqrt's documented
error (the FP16 scale adds its rounding to the format), and the row softmax
is the exact softmax of the scores' centre with golden.softmax.fw_bound:
fastexp_gist's documented error, the softmax's own roundings, and how far
the scores' radius can move it. The BW reads q, k, v, a and p as the
rounded FW results: exact inputs, so its balls start at radius 0.
"""
from __future__ import annotations

import numpy as np

from golden import softmax
from golden.ball import Arith, Ball
from golden.bundle import Reference
from golden.formats import NumberFormat
from golden.lazy_torch import torch

# binary32 roundings inside the device's scale beyond q_rsqrt's documented
# bound (its Newton step: "up to rounding") and the scale's rounding to the
# format, as relative errors.
_SCALE_ROUNDINGS = 4 * 2.0 ** -24


def _exact(a: np.ndarray, shape: tuple[int, ...]) -> Ball:
    return Ball.exact(torch.tensor(np.asarray(a, dtype=np.float64).reshape(shape)))


def _matmul(ar: Arith, a: Ball, b: Ball, n: int, trans_a: bool = False, trans_b: bool = False) -> Ball:
    def op(x, y):
        return (x.T if trans_a else x) @ (y.T if trans_b else y)
    return ar.bilinear(op, a, b, n)


def _scale(Hd: int, fmt: NumberFormat, q_rsqrt_rel: float) -> Ball:
    s = 1.0 / np.sqrt(Hd)
    rel = q_rsqrt_rel + _SCALE_ROUNDINGS + (fmt.unit_roundoff if fmt.bits != 32 else 0.0)
    return Ball(torch.tensor(s, dtype=torch.float64), torch.tensor(s * rel, dtype=torch.float64))


def _ref(b: Ball) -> Reference:
    c = b.c.numpy().ravel()
    return Reference(c, np.zeros_like(c), 0, propagated=b.r.numpy().ravel())


def _sizes(shape: dict) -> tuple[int, int, int, int, int]:
    L, E, F, heads = shape["L"], shape["E"], shape["F"], shape["heads"]
    return L, E, F, heads, F // heads


def forward_balls(ar: Arith, I: Ball, W: dict[str, Ball], B: dict[str, Ball], heads: int, fmt: NumberFormat,
                  fastexp_rel: float, q_rsqrt_rel: float) -> dict[str, Ball]:
    """q, k, v, a, p and y from the input I (E x L), the weights W (wq, wk,
    wv, wo: E x F) and the biases B (bq, bk, bv: F x 1), all balls."""
    (E, L), F = I.c.shape, W["wq"].c.shape[1]
    Hd = F // heads
    proj = {}
    for name in ("q", "k", "v"):
        product = _matmul(ar, W["w" + name], I, E, trans_a=True)                    # C^T I, F x L
        proj[name] = ar.add(product, B["b" + name])
    s = _scale(Hd, fmt, q_rsqrt_rel)
    a_c, a_r, p_c, p_r = (torch.zeros(F, L, dtype=torch.float64), torch.zeros(F, L, dtype=torch.float64),
                          torch.zeros(heads, L, L, dtype=torch.float64), torch.zeros(heads, L, L, dtype=torch.float64))
    for h in range(heads):
        rows = slice(h * Hd, (h + 1) * Hd)
        qh, kh, vh = (Ball(proj[n].c[rows], proj[n].r[rows]) for n in ("q", "k", "v"))
        scores = ar.mul(_matmul(ar, qh, kh, Hd, trans_a=True), s)                        # [query][key]
        x, r = scores.c.numpy(), scores.r.numpy()
        p = Ball(torch.tensor(softmax._softmax(x)), torch.tensor(softmax.fw_bound(x, r, fmt, fastexp_rel)))
        ah = _matmul(ar, vh, p, L, trans_b=True)                                          # v_h P^T
        a_c[rows], a_r[rows], p_c[h], p_r[h] = ah.c, ah.r, p.c, p.r
    a, p = Ball(a_c, a_r), Ball(p_c, p_r)
    y = _matmul(ar, W["wo"], a, F)
    return dict(proj, a=a, p=p, y=y)


def backward_balls(ar: Arith, I: Ball, W: dict[str, Ball], fw: dict[str, Ball], dO: Ball, heads: int,
                   fmt: NumberFormat, q_rsqrt_rel: float) -> dict[str, Ball]:
    """Every gradient the BW writes (dwo, da, dv, dk, dq, dwq, dwk, dwv, dx)
    from I, the weights, the FW's q, k, v, a, p (balls) and dO (E x L)."""
    (E, L), F = I.c.shape, W["wq"].c.shape[1]
    Hd = F // heads
    q, k, v, a, P = (fw[n] for n in ("q", "k", "v", "a", "p"))
    s = _scale(Hd, fmt, q_rsqrt_rel)
    out = {"dwo": _matmul(ar, dO, a, L, trans_b=True), "da": _matmul(ar, W["wo"], dO, E, trans_a=True)}
    grads = {n: (torch.zeros(F, L, dtype=torch.float64), torch.zeros(F, L, dtype=torch.float64))
             for n in ("dq", "dk", "dv")}
    for h in range(heads):
        rows = slice(h * Hd, (h + 1) * Hd)
        dah = Ball(out["da"].c[rows], out["da"].r[rows])
        qh, kh, vh = (Ball(t.c[rows], t.r[rows]) for t in (q, k, v))
        ph = Ball(P.c[h], P.r[h])
        dvh = _matmul(ar, dah, ph, L)                                                     # dA_h P
        dp = _matmul(ar, dah, vh, Hd, trans_a=True)                                       # dA_h^T v_h
        # softmax BW: row sums of dP * P (L products and sums, stored: L + 1
        # roundings), then (dP - sums) * P
        sums = ar.bilinear(lambda x, y: (x * y).sum(-1, keepdim=True), dp, ph, L + 1)
        g = ar.mul(ar.sub(dp, sums), ph)
        grad = ar.mul(Ball(g.c.T, g.r.T), s)                                              # [key][query]
        dkh = _matmul(ar, qh, grad, L, trans_b=True)
        dqh = _matmul(ar, kh, grad, L)
        for name, b in (("dq", dqh), ("dk", dkh), ("dv", dvh)):
            grads[name][0][rows], grads[name][1][rows] = b.c, b.r
    d = {n: Ball(*grads[n]) for n in grads}
    out.update(d)
    for n in ("q", "k", "v"):
        out["dw" + n] = _matmul(ar, d["d" + n], I, L, trans_b=True)                       # d I^T, F x E
    dx = _matmul(ar, W["wq"], d["dq"], F)
    for n in ("k", "v"):
        dx = ar.add(dx, _matmul(ar, W["w" + n], d["d" + n], F))
    out["dx"] = dx
    return out


def _weights(inputs: dict[str, np.ndarray], E: int, F: int) -> dict[str, Ball]:
    return {w: _exact(inputs[w], (E, F)) for w in ("wq", "wk", "wv", "wo")}


def forward(inputs: dict[str, np.ndarray], shape: dict, fmt: NumberFormat, fastexp_rel: float,
            q_rsqrt_rel: float) -> dict[str, Ball]:
    """q, k, v, a, p and y as balls, from exact inputs."""
    L, E, F, heads, _ = _sizes(shape)
    biases = {b: _exact(inputs[b], (F, 1)) for b in ("bq", "bk", "bv")}
    return forward_balls(Arith(fmt), _exact(inputs["x"], (E, L)), _weights(inputs, E, F), biases, heads, fmt,
                         fastexp_rel, q_rsqrt_rel)


def mhsa(inputs: dict[str, np.ndarray], step: str, shape: dict, fmt: NumberFormat, fastexp_rel: float,
         q_rsqrt_rel: float) -> dict[str, Reference]:
    if step == "fw":
        return {name: _ref(b) for name, b in forward(inputs, shape, fmt, fastexp_rel, q_rsqrt_rel).items()}
    L, E, F, heads, _ = _sizes(shape)
    fw = {n: _exact(inputs[n], (F, L)) for n in ("q", "k", "v", "a")}
    fw["p"] = _exact(inputs["p"], (heads, L, L))
    out = backward_balls(Arith(fmt), _exact(inputs["x"], (E, L)), _weights(inputs, E, F), fw,
                         _exact(inputs["dy"], (E, L)), heads, fmt, q_rsqrt_rel)
    return {name: _ref(b) for name, b in out.items()}


def forward_values(inputs: dict[str, np.ndarray], shape: dict, fmt: NumberFormat) -> dict[str, np.ndarray]:
    """The FW results the BW reads (q, k, v, a, p), exact and rounded to the
    format: what a FW on the device leaves, up to its rounding."""
    balls = forward(inputs, shape, fmt, 0.0, 0.0)
    return {n: fmt.round(balls[n].c.numpy().ravel()) for n in ("q", "k", "v", "a", "p")}
