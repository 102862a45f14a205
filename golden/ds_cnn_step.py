"""References for the DS-CNN (keyword spotting) training run, FP32, one
sample per step, CHW, no batch.

The network, shape dict s (H, W input; C channels; conv1 kernel Hk x Wk,
stride sh, sw, zero padding U above, D below, L left, R right; K classes;
Ho = (H + U + D - Hk)//sh + 1, Wo = (W + L + R - Wk)//sw + 1):

  x [1 x H x W] -> a0 = relu(conv1(x, w1))                        [C x Ho x Wo]
  BLOCKS times:  d_b = relu(depthwise 3x3 (pad 1, groups C) of a_b, dw_b)
                 a_b+1 = relu(pointwise(d_b, pw_b))
  p = mean of a_4 over Ho x Wo, per channel [C] -> z = wf p + bf [K]
  -> loss = logsumexp(z) sum(t) - t.z (as golden/training.py); SGD on all.

Params, one vector in this order: w1 [C x 1 x Hk x Wk]; per block dw_b
[C x 1 x 3 x 3], pw_b [C x C] (row = output channel); wf [K x C]; bf [K].

Two references, as golden/training.py's (whose docstring says why the
teacher-forced steps are judged and the distance to the free float64 run
is only reported): `trajectory`, the float64 run; `teacher_forced`, each
step from the device's weights after the step before, with a bound per
element carried by ball arithmetic (golden/ball.py) through every
operation of the device's chain. A dot product of n terms with exact
coefficients W on a ball v (Arith.linear) has r = |W| r_v + g(n) |W| |v|~
+ n eta; a product-sum of two balls (Arith.bilinear, the weight gradients)
r = |a| r_b + r_a |b| + r_a r_b + g(n) |a|~ |b|~ + n eta, |v|~ = |c| + r.
Per layer, n the reduction length of the device's sum:
  conv1 FW     linear, n = Hk*Wk (x exact; padding zeros exact)
  ReLU FW      no rounding; relu's image of the ball lies within
               min(r, relu(c + r)) of relu(c): r where c >= 0, c + r where
               -r < c < 0, an exact 0 where c <= -r (the device's z <= 0)
  depthwise FW linear, n = 9;  pointwise FW linear, n = C
  avgpool FW   linear with coefficients 1/(Ho*Wo), n = Ho*Wo + 1 (golden/pool.py:
               the sum, then the product with a rounded reciprocal)
  linear FW    linear on [p; 1] with [wf | bf], n = C + 1
  CE FW, BW    golden/training.py's _ce_balls
  linear WG    dwf = outer(dz, p), bilinear n = 1; dbf = dz, an exact copy
  linear IG    dp = wf^T dz, linear n = K
  avgpool BW   dp / (Ho*Wo) to every position, linear n = 2 (golden/pool.py:
               cover + 1 with one window covering each position)
  ReLU BW      the device masks by its stored a > 0: where z.c > z.r, da's
               ball; where z.c < -z.r, an exact 0; else (the device may pass
               or block) centre da.c if z.c > 0 else 0, radius |da.c| + da.r
  pointwise WG bilinear n = Ho*Wo;  pointwise IG linear n = C
  depthwise WG bilinear n = Ho*Wo;  depthwise IG linear n = 9
  conv1 WG     bilinear n = Ho*Wo (no input gradient of conv1)
  SGD          golden/training.py's _teacher_forced_sgd:
               r_w' = lr r_g + g(2) (|w| + lr |g|~) + 2 eta

How tight. The radii go through |W|, the worst case of every element's
signs, while the values go through W: each pointwise layer multiplies the
radius relative to the value by about sqrt(C/2) E|w| / rms(w) and each
depthwise by sqrt(9/2) E|w| / rms(w), whatever the weights' scale. FP32,
lr 1/16, median bound / median |grad| measured with the 49 x 10 input:
6e-3 at C = 8, 0.2 at C = 16, 2 at C = 32, 55 at C = 64 (the DS-CNN
itself: the bounds hold but say nothing there; a float32 run's errors are
about 1e-5 of them). tests/test_golden_ds_cnn_step.py's small shape:
3e-4.

Hence `pass_checks`: the device also emits the intermediates of its last
step (outputs "acts", "grad_maps", "heads", below), and each pass of that
step is judged from the device's own inputs to it (exact balls), with that
pass's own rounding bound from the table above, as strictly as a single
primitive: the radii no longer go through a chain of |W|. The ReLU forward
is the image of the pass's ball (as above); the backward's mask is the
device's own stored activation > 0, an exact selection given those, so
where the device's activation is 0 the masked gradient must be exactly 0.
Median bound / median |value| (over nonzero values) at the DS-CNN shape,
float32 run, step 2: acts 1.6e-5, grad_maps 1.8e-6, heads 1.7e-6,
grads_last 1.9e-5; pass by pass at most 5.5e-5 (conv1's WG, n = Ho*Wo =
125, and the logits, whose 65 terms cancel), against 55 for the chained
whole-step bound of the gradients (tests/test_golden_ds_cnn_step.py). A
float32 run's worst error / bound: acts 0.26, grad_maps 0.48, heads 0.21,
the convolutions' WG 0.08, dwf 0.98 (a product, one rounding).

  acts [9 x C*Ho*Wo], CHW rows, after their ReLU: a0, then per block b
       d_b, a_b+1 (acts[2b+1] = d_b, acts[2b+2] = a_b+1)
  grad_maps [9 x C*Ho*Wo], after their mask, in the backward's order:
       [0] = mask(a4) avgpool_bw(dp), the gradient entering pw_3's backward;
       for b = 3..0: [1 + 2(3-b)] = mask(d_b) pw_b IG([2(3-b)]),
                     [2 + 2(3-b)] = mask(a_b) dw_b IG([1 + 2(3-b)])
       ([8] = mask(a0) ..., what conv1's WG reads)
  heads [C + K + K + C]: p, z, dz, dp
  grads_last: outputs["grads"][N-1], each WG from the device's tensors above
"""
from __future__ import annotations

import numpy as np

from golden.ball import Arith, Ball
from golden.formats import NumberFormat
from golden.lazy_torch import F, torch
from golden.training import _ce_balls, _sgd_trajectory, _t, _teacher_forced_sgd

BLOCKS = 4


def out_size(s: dict) -> tuple[int, int]:
    """(Ho, Wo): conv1's output, kept by every block."""
    return (s["H"] + s["U"] + s["D"] - s["Hk"]) // s["sh"] + 1, (s["W"] + s["L"] + s["R"] - s["Wk"]) // s["sw"] + 1


def _sizes(s: dict) -> list[tuple[str, tuple[int, ...]]]:
    C, K = s["C"], s["K"]
    parts = [("w1", (C, 1, s["Hk"], s["Wk"]))]
    for b in range(BLOCKS):
        parts += [(f"dw{b}", (C, 1, 3, 3)), (f"pw{b}", (C, C))]
    return parts + [("wf", (K, C)), ("bf", (K,))]


def param_count(s: dict) -> int:
    return sum(int(np.prod(shape)) for _, shape in _sizes(s))


def split(params, s: dict) -> dict:
    """The views of the flat params (torch or numpy): w1, dw [BLOCKS], pw
    [BLOCKS], wf, bf."""
    out, o = {}, 0
    for name, shape in _sizes(s):
        n = int(np.prod(shape))
        out[name] = params[o:o + n].reshape(shape)
        o += n
    if o != len(params):
        raise ValueError(f"{len(params)} params for a DS-CNN of {o}")
    return {"w1": out["w1"], "dw": [out[f"dw{b}"] for b in range(BLOCKS)],
            "pw": [out[f"pw{b}"] for b in range(BLOCKS)], "wf": out["wf"], "bf": out["bf"]}


def input_shapes(s: dict) -> dict[str, tuple[int, ...]]:
    return {"x": (s["S"], 1, s["H"], s["W"]), "t": (s["S"], s["K"]), "params": (param_count(s),)}


def _with_channel(inputs: dict) -> dict:
    """x as [S x 1 x H x W] (also accepted: [S x H x W])."""
    x = np.asarray(inputs["x"])
    return dict(inputs, x=x[:, None] if x.ndim == 3 else x)


# ---- the layers as maps on CHW tensors (float64), shared by centres and magnitudes ----

def _conv1(x, w, s):
    xp = F.pad(x, (s["L"], s["R"], s["U"], s["D"]))
    return F.conv2d(xp.unsqueeze(0), w, stride=(s["sh"], s["sw"]))[0]


def _conv1_wg(x, g, s):
    xp = F.pad(x, (s["L"], s["R"], s["U"], s["D"]))
    return torch.nn.grad.conv2d_weight(xp.unsqueeze(0), (s["C"], 1, s["Hk"], s["Wk"]), g.unsqueeze(0),
                                       stride=(s["sh"], s["sw"]))


def _dw(v, w):
    return F.conv2d(v.unsqueeze(0), w, padding=1, groups=v.shape[0])[0]


def _dw_wg(v, g):
    C = v.shape[0]
    return torch.nn.grad.conv2d_weight(v.unsqueeze(0), (C, 1, 3, 3), g.unsqueeze(0), padding=1, groups=C)


def _dw_ig(g, w):
    C, Ho, Wo = g.shape
    return torch.nn.grad.conv2d_input((1, C, Ho, Wo), w, g.unsqueeze(0), padding=1, groups=C)[0]


def _pw(v, w):
    """w [C out x C in] on v [C in x Ho x Wo]."""
    return torch.einsum("oi,ihw->ohw", w, v)


def _loss(x, t, params, s):
    """The float64 loss of one sample, differentiable in params."""
    P = split(params, s)
    a = torch.relu(_conv1(x, P["w1"], s))
    for b in range(BLOCKS):
        a = torch.relu(_pw(torch.relu(_dw(a, P["dw"][b])), P["pw"][b]))
    z = P["wf"] @ a.mean(dim=(1, 2)) + P["bf"]
    n = float(t.sum()) or 1.0
    return torch.logsumexp(z, 0) * n - (t * z).sum()


def trajectory(inputs: dict[str, np.ndarray], steps: int, lr: float, s: dict) -> dict[str, np.ndarray]:
    """The float64 run from the initial params (sample k % S at step k):
    loss [N], grads [N x P], weights after each update [N x P]."""
    return _sgd_trajectory(_with_channel(inputs), steps, lr, lambda x, t, p: _loss(x, t, p, s))


# ---- one teacher-forced step in balls ----

def _relu(z: Ball) -> Ball:
    """The image of [c - r, c + r] under relu lies within min(r, relu(c + r))
    of relu(c): r where c >= 0, c + r where -r < c < 0, an exact 0 (the
    device's z <= 0) where c <= -r."""
    return Ball(torch.relu(z.c), torch.minimum(z.r, torch.relu(z.c + z.r)))


def _relu_bw(z: Ball, da: Ball) -> Ball:
    """The device passes da where its stored a = relu(z) > 0."""
    return Ball(torch.where(z.c > 0, da.c, 0.0),
                torch.where(z.c > z.r, da.r, torch.where(z.c < -z.r, 0.0, da.c.abs() + da.r)))


def step_balls(x, t, params, s: dict, fmt: NumberFormat, ce_scale: float) -> dict[str, Ball]:
    """The loss and the gradients (params order) of one step from exact
    params, as balls following the device's chain."""
    A = Arith(fmt)
    P = split(params, s)
    C = s["C"]
    Ho, Wo = out_size(s)
    hw = Ho * Wo
    X = Ball.exact(x)
    w1 = P["w1"]
    # forward
    z0 = A.linear(lambda v: _conv1(v, w1, s), X, s["Hk"] * s["Wk"], lambda v: _conv1(v, w1.abs(), s))
    a = _relu(z0)
    acts = []                                   # (a_b, zd_b, d_b, zp_b)
    for b in range(BLOCKS):
        dw, pw = P["dw"][b], P["pw"][b]
        zd = A.linear(lambda v: _dw(v, dw), a, 9, lambda v: _dw(v, dw.abs()))
        d = _relu(zd)
        zp = A.linear(lambda v: _pw(v, pw), d, C, lambda v: _pw(v, pw.abs()))
        acts.append((a, zd, d, zp))
        a = _relu(zp)
    p = A.linear(lambda v: v.sum(dim=(1, 2)) / hw, a, hw + 1)
    wfb = torch.cat([P["wf"], P["bf"][:, None]], 1)
    p1 = Ball(torch.cat([p.c, p.c.new_ones(1)]), torch.cat([p.r, p.r.new_zeros(1)]))
    z = A.linear(lambda v: wfb @ v, p1, C + 1, lambda v: wfb.abs() @ v)
    loss, dz = _ce_balls(z, t, fmt, ce_scale)
    # backward
    wf = P["wf"]
    dwf = A.bilinear(lambda g, v: torch.outer(g, v), dz, p, 1)
    dp = A.linear(lambda g: wf.T @ g, dz, s["K"], lambda g: wf.abs().T @ g)
    da = A.linear(lambda g: (g / hw)[:, None, None].expand(C, Ho, Wo), dp, 2)
    block_grads = []
    for b in reversed(range(BLOCKS)):
        a_in, zd, d, zp = acts[b]
        dw, pw = P["dw"][b], P["pw"][b]
        dzp = _relu_bw(zp, da)
        dpw = A.bilinear(lambda g, v: g.reshape(C, hw) @ v.reshape(C, hw).T, dzp, d, hw)
        dd = A.linear(lambda g: _pw(g, pw.T), dzp, C, lambda g: _pw(g, pw.abs().T))
        dzd = _relu_bw(zd, dd)
        ddw = A.bilinear(_dw_wg, a_in, dzd, hw)
        da = A.linear(lambda g: _dw_ig(g, dw), dzd, 9, lambda g: _dw_ig(g, dw.abs()))
        block_grads = [ddw, dpw] + block_grads
    dz0 = _relu_bw(z0, da)
    dw1 = A.bilinear(lambda v, g: _conv1_wg(v, g, s), X, dz0, hw)
    return {"loss": loss, "grads": Ball.cat([dw1] + block_grads + [dwf, dz])}


def teacher_forced(inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray], lr: float, s: dict,
                   fmt: NumberFormat, ce_scale: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every step from the device's params after the step before: (value,
    bound) of loss, grads and weights, by name (the last step's
    intermediates, if outputs has them, are pass_checks')."""
    outputs = {name: outputs[name] for name in ("loss", "grads", "weights")}
    return _teacher_forced_sgd(_with_channel(inputs), outputs, lr, fmt,
                               lambda x, t, params: step_balls(x, t, params, s, fmt, ce_scale))


# ---- the last step, pass by pass, from the device's own intermediates ----

def _masked(g: Ball, a: torch.Tensor) -> Ball:
    """The device's ReLU backward by its stored activation a: exact
    selection, an exact 0 where a is not > 0."""
    keep = a > 0
    return Ball(torch.where(keep, g.c, 0.0), torch.where(keep, g.r, 0.0))


def pass_checks(inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray], s: dict, fmt: NumberFormat,
                ce_scale: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each pass of the last step (k = N-1) from the device's own inputs to
    it (module docstring, pass_checks): (value, bound) of "acts",
    "grad_maps", "heads" (shaped as the device's) and "grads_last" (shaped
    as one row of "grads"), by name. The step's weights are the device's
    weights row N-2 (inputs["params"] when N == 1)."""
    inputs = _with_channel(inputs)
    A = Arith(fmt)
    E = Ball.exact
    C, K = s["C"], s["K"]
    Ho, Wo = out_size(s)
    hw = Ho * Wo
    N = np.asarray(outputs["loss"]).size
    k = N - 1
    P = split(_t(inputs["params"] if N == 1 else outputs["weights"][N - 2]), s)
    x = _t(inputs["x"][k % len(inputs["x"])])
    t = _t(inputs["t"][k % len(inputs["t"])])
    acts = _t(outputs["acts"]).reshape(2 * BLOCKS + 1, C, Ho, Wo)
    gm = _t(outputs["grad_maps"]).reshape(2 * BLOCKS + 1, C, Ho, Wo)
    heads = _t(outputs["heads"]).reshape(-1)
    if heads.numel() != 2 * (C + K):
        raise ValueError(f"heads has {heads.numel()} values, not 2 (C + K) = {2 * (C + K)}")
    p, z, dz, dp = heads[:C], heads[C:C + K], heads[C + K:C + 2 * K], heads[C + 2 * K:]
    # forward: each activation from the device's one before
    w1 = P["w1"]
    a_balls = [_relu(A.linear(lambda v: _conv1(v, w1, s), E(x), s["Hk"] * s["Wk"], lambda v: _conv1(v, w1.abs(), s)))]
    for b in range(BLOCKS):
        dw, pw = P["dw"][b], P["pw"][b]
        a_balls.append(_relu(A.linear(lambda v: _dw(v, dw), E(acts[2 * b]), 9, lambda v: _dw(v, dw.abs()))))
        a_balls.append(_relu(A.linear(lambda v: _pw(v, pw), E(acts[2 * b + 1]), C, lambda v: _pw(v, pw.abs()))))
    # the heads, each from the device's value before
    wf = P["wf"]
    wfb = torch.cat([wf, P["bf"][:, None]], 1)
    p_ball = A.linear(lambda v: v.sum(dim=(1, 2)) / hw, E(acts[2 * BLOCKS]), hw + 1)
    z_ball = A.linear(lambda v: wfb @ v, E(torch.cat([p, p.new_ones(1)])), C + 1, lambda v: wfb.abs() @ v)
    _, dz_ball = _ce_balls(E(z), t, fmt, ce_scale)
    dp_ball = A.linear(lambda g: wf.T @ g, E(dz), K, lambda g: wf.abs().T @ g)
    # backward: each map from the device's one before, masked by the device's activation
    g_balls = [_masked(A.linear(lambda g: (g / hw)[:, None, None].expand(C, Ho, Wo), E(dp), 2), acts[2 * BLOCKS])]
    for b in reversed(range(BLOCKS)):
        dw, pw = P["dw"][b], P["pw"][b]
        i = 2 * (BLOCKS - 1 - b)                  # the map entering pw_b's backward
        g_balls.append(_masked(A.linear(lambda g: _pw(g, pw.T), E(gm[i]), C, lambda g: _pw(g, pw.abs().T)),
                               acts[2 * b + 1]))
        g_balls.append(_masked(A.linear(lambda g: _dw_ig(g, dw), E(gm[i + 1]), 9, lambda g: _dw_ig(g, dw.abs())),
                               acts[2 * b]))
    # the weight gradients, each from the device's tensors the WG pass reads
    grads = [A.bilinear(lambda v, g: _conv1_wg(v, g, s), E(x), E(gm[2 * BLOCKS]), hw)]
    for b in range(BLOCKS):
        i = 2 * (BLOCKS - 1 - b)
        grads.append(A.bilinear(_dw_wg, E(acts[2 * b]), E(gm[i + 1]), hw))
        grads.append(A.bilinear(lambda g, v: g.reshape(C, hw) @ v.reshape(C, hw).T, E(gm[i]), E(acts[2 * b + 1]), hw))
    grads += [A.bilinear(lambda g, v: torch.outer(g, v), E(dz), E(p), 1), E(dz)]
    shapes = {"acts": np.shape(outputs["acts"]), "grad_maps": np.shape(outputs["grad_maps"]),
              "heads": np.shape(outputs["heads"]), "grads_last": np.shape(outputs["grads"][N - 1])}
    balls = {"acts": Ball.cat(a_balls), "grad_maps": Ball.cat(g_balls),
             "heads": Ball.cat([p_ball, z_ball, dz_ball, dp_ball]), "grads_last": Ball.cat(grads)}
    return {name: (ball.c.numpy().reshape(shapes[name]), ball.r.numpy().reshape(shapes[name]))
            for name, ball in balls.items()}


def initial_values(inputs: dict[str, np.ndarray], s: dict) -> dict[str, np.ndarray]:
    """One-hot labels (sample i has class i % K) and the params, uniform in
    [-1, 1) on the grid, scaled by powers of two (exact): w1 / 4, dw / 2,
    pw / 2, wf / 4, bf / 4. Why: a zero-mean weight uniform in [-c, c)
    has variance c^2/3, so a sum of n products has n c^2/3 times the mean
    square of its inputs, and a ReLU halves the mean square of a symmetric
    input: one block multiplies the mean square of a_b by
    (9 / 12) (1/2) (C / 12) (1/2) = C / 64 with dw / 2 and pw / 2, 1 at
    C = 64 (measured at the DS-CNN shape: rms of a_0..a_4 all 0.3-0.45, half
    of each nonzero). pw / 8 loses a factor 4 per block: a_4 at 1/256 of a_0.
    w1 / 4 gives a_0 an rms of 0.33 from a fan-in of 40; wf and bf / 4 keep
    the logits O(0.5), the loss near log K."""
    t = np.zeros((s["S"], s["K"]))
    t[np.arange(s["S"]), np.arange(s["S"]) % s["K"]] = 1.0
    p = np.array(inputs["params"], dtype=np.float64, copy=True)
    views = split(p, s)                         # numpy views: scaling them scales p
    views["w1"] /= 4
    for b in range(BLOCKS):
        views["dw"][b] /= 2
        views["pw"][b] /= 2
    views["wf"] /= 4
    views["bf"] /= 4
    return dict(inputs, t=t, params=p)
