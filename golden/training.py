"""References for the training runs (harness/runtime/runner/ops_train_*.c).

The CNN: x -> conv2d 3x3 (pad 1) -> ReLU -> maxpool 2x2/2 -> linear ->
CrossEntropy, no biases, plain gradient descent, one sample per step.

Two references:

- `trajectory`: PyTorch trains the same network in float64 from the same
  initial weights and data (inputs on the format's grid). It is what a user
  compares with, and it is plotted; it is not what the device is judged by
  (see below).
- `teacher_forced`: step k recomputed in float64 from the device's own
  weights after step k-1, with a bound per element that propagates every
  rounding of the step through the network, so each step is judged as
  strictly as a single primitive is.

How the error grows with the steps. By induction over k, a device run that
passes every teacher-forced step is the exact training run of this network
under per-step perturbations d_k (the step bounds below, in the weights).
Its distance to the float64 trajectory then obeys e_k <= L_k e_{k-1} + d_k,
L_k the Lipschitz constant of one training step (about 1 + lr ||Hessian||),
so it can grow geometrically with k. That constant has no rigorous bound
here (ReLU and max pooling make the step map only piecewise smooth), so the
suite asserts the teacher-forced steps and reports the distance to the
trajectory (the loss plot), instead of asserting a bound that would be
tuned.

The step bound. u is the format's unit roundoff, g(n) = nu/(1-nu), eta half
the smallest subnormal, E_v the bound on the device value of v. Every
primitive's own rounding is the bound its catalogue family uses (a dot
product of n terms: g(n) sum |terms| + n eta), evaluated on magnitudes that
include the incoming error, and the incoming error is carried through each
layer by its Lipschitz map:
  conv   E_z1 = g(n1) conv(|x|, |w1|) + n1 eta            (n1 = Ci*9; x, w1 exact)
  ReLU   E_a1 = E_z1                                      (1-Lipschitz, exact selection)
  pool   E_p  = max over the window of E_a1               (max is 1-Lipschitz in sup norm)
  linear E_z2 = |w2| E_p + g(F) |w2| (|p| + E_p) + F eta
  CE fw  |loss(z2') - loss(z2)| <= (|S| + sum|t|) max E_z2 (lse is 1-Lipschitz in
         sup norm), plus the CE's own bound (golden/losses.py, at z2)
  CE bw  softmax(z2') / softmax(z2) lies in [e^-2D, e^2D] (D = max E_z2), so
         E_dz2 = |S| softmax(z2) (e^2D - 1) plus the CE BW's own bound
  WG lin E_dw2 = E_dz2 (|p| + E_p) + |dz2| E_p + u (|dz2| + E_dz2)(|p| + E_p) + eta
  IG lin E_dp = |w2|^T E_dz2 + g(K) |w2|^T (|dz2| + E_dz2) + K eta
  pool bw routes dp to the window's maximum. Where the device's maximum
         may differ (another element within the error bounds: ties of
         zeros after ReLU are common), every candidate gets |dp| + E_dp,
         since the device puts dp there or nothing; else the maximum gets
         E_dp and the rest exact zeros.
  ReLU bw E_dz1 = E_da1 where z1 > E_z1, 0 where z1 < -E_z1, and |da1| + E_da1
         where z1 is within its bound of 0 (the device may pass or block).
  WG conv E_dw1 = corr(|x|, E_dz1) + g(H*W) corr(|x|, |dz1| + E_dz1) + H*W eta
  SGD    w' = w - lr g, two roundings: E_w' = lr E_g + g(2)(|w| + lr (|g| + E_g)) + 2 eta
The magnitudes are evaluated at the float64 values plus their bounds, so
they bound the device's own magnitudes.
"""
from __future__ import annotations

import math

import numpy as np

from golden import losses
from golden.formats import NumberFormat
from golden.lazy_torch import F, torch

FROZEN_CONV, FROZEN_LINEAR = 1, 2


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a, dtype=torch.float64)


def _gamma(n: int, u: float) -> float:
    if n * u >= 0.5:
        raise ValueError(f"a reduction of {n} terms has no error bound at u = {u:.3g}; use a smaller network")
    return n * u / (1 - n * u)


def _conv(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x.unsqueeze(0), w, padding=1)[0]


def _conv_weight_grad(x: torch.Tensor, dz: torch.Tensor, w_shape) -> torch.Tensor:
    return torch.nn.grad.conv2d_weight(x.unsqueeze(0), w_shape, dz.unsqueeze(0), padding=1)


def _forward_backward(x, t, w1, w2):
    """Exact float64 loss and gradients of one sample, and the intermediates."""
    w1 = w1.clone().requires_grad_(True)
    w2 = w2.clone().requires_grad_(True)
    z1 = _conv(x, w1)
    z1.retain_grad()
    a1 = torch.relu(z1)
    a1.retain_grad()
    p = F.max_pool2d(a1.unsqueeze(0), 2)[0]
    p.retain_grad()
    z2 = w2 @ p.reshape(-1)
    z2.retain_grad()
    s = float(t.sum()) or 1.0
    loss = torch.logsumexp(z2, 0) * s - (t * z2).sum()
    loss.backward()
    return dict(loss=loss.detach(), z1=z1.detach(), a1=a1.detach(), p=p.detach(), z2=z2.detach(),
                dz1=z1.grad, da1=a1.grad, dp=p.grad, dz2=z2.grad, dw1=w1.grad, dw2=w2.grad)


def trajectory(inputs: dict[str, np.ndarray], steps: int, lr: float, frozen: int) -> dict[str, np.ndarray]:
    """The float64 training run from the initial weights: loss, gradients and
    weights after each step, by output name."""
    xs, ts = _t(inputs["x"]), _t(inputs["t"])
    w1, w2 = _t(inputs["w1"]), _t(inputs["w2"])
    rows = {name: [] for name in ("loss", "g1", "g2", "w1s", "w2s")}
    for k in range(steps):
        r = _forward_backward(xs[k % len(xs)], ts[k % len(ts)], w1, w2)
        g1 = torch.zeros_like(w1) if frozen & FROZEN_CONV else r["dw1"]
        g2 = torch.zeros_like(w2) if frozen & FROZEN_LINEAR else r["dw2"]
        w1, w2 = w1 - lr * g1, w2 - lr * g2
        for name, value in (("loss", r["loss"]), ("g1", g1), ("g2", g2), ("w1s", w1), ("w2s", w2)):
            rows[name].append(value.numpy().reshape(-1))
    return {name: np.stack(values).reshape(steps, -1) if name != "loss" else np.concatenate(values)
            for name, values in rows.items()}


def _ce_bound(z2: np.ndarray, t: np.ndarray, step: str, fmt: NumberFormat, scale: float) -> np.ndarray:
    """The CrossEntropy primitive's own bound at logits z2 (golden/losses.py)."""
    ref = losses.crossentropy({"o": z2, "t": t}, step, fmt)["loss" if step == "fw" else "do"]
    n = ref.reduction
    return scale * (_gamma(n, fmt.unit_roundoff) * np.asarray(ref.magnitude) + n * fmt.smallest_subnormal / 2)


def _pool_backward_bound(a1, e_a1, dp, e_dp) -> tuple[torch.Tensor, torch.Tensor]:
    """Max pooling's backward: the exact routing (first maximum, as torch)
    and the bound per input element, widened where the device's maximum may
    be another element of the window."""
    C, H, W = a1.shape
    win = a1.reshape(C, H // 2, 2, W // 2, 2).permute(0, 1, 3, 2, 4).reshape(C, H // 2, W // 2, 4)
    err = e_a1.reshape(C, H // 2, 2, W // 2, 2).permute(0, 1, 3, 2, 4).reshape(C, H // 2, W // 2, 4)
    lowest_max = (win - err).max(dim=-1, keepdim=True).values
    candidates = (win + err) >= lowest_max
    ambiguous = candidates.sum(dim=-1, keepdim=True) > 1
    first = torch.zeros_like(win, dtype=torch.bool).scatter_(-1, win.argmax(dim=-1, keepdim=True), True)
    da1 = torch.where(first, dp.unsqueeze(-1), torch.zeros_like(win))
    bound = torch.where(ambiguous, torch.where(candidates, dp.abs().unsqueeze(-1) + e_dp.unsqueeze(-1), 0.0),
                        torch.where(first, e_dp.unsqueeze(-1), 0.0))

    def back(v):
        return v.reshape(C, H // 2, W // 2, 2, 2).permute(0, 1, 3, 2, 4).reshape(C, H, W)
    return back(da1), back(bound)


def teacher_forced(inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray], lr: float, frozen: int,
                   fmt: NumberFormat, ce_scale: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every step from the device's weights after the step before: the
    exact value and the bound of each output, (value, bound) by name."""
    u, eta = fmt.unit_roundoff, fmt.smallest_subnormal / 2
    xs, ts = _t(inputs["x"]), _t(inputs["t"])
    steps = outputs["loss"].size
    w1_dev, w2_dev = _t(outputs["w1s"]), _t(outputs["w2s"])
    w1_shape = inputs["w1"].shape
    rows = {name: ([], []) for name in ("loss", "g1", "g2", "w1s", "w2s")}
    for k in range(steps):
        w1 = _t(inputs["w1"]) if k == 0 else w1_dev[k - 1].reshape(w1_shape)
        w2 = _t(inputs["w2"]) if k == 0 else w2_dev[k - 1].reshape(inputs["w2"].shape)
        if not (torch.isfinite(w1).all() and torch.isfinite(w2).all()):
            # The device's state is no longer a number: no step from it can
            # be right. NaN references fail every element of the steps left.
            for name, (values, bounds) in rows.items():
                size = outputs[name].size // steps
                values += [torch.full((size,), math.nan, dtype=torch.float64)] * (steps - k)
                bounds += [torch.zeros(size, dtype=torch.float64)] * (steps - k)
            break
        x, t = xs[k % len(xs)], ts[k % len(ts)]
        r = _forward_backward(x, t, w1, w2)
        ci = x.shape[0]
        n1, n_f, n_k = ci * 9, r["p"].numel(), t.numel()
        hw = x.shape[1] * x.shape[2]
        # forward
        e_z1 = _gamma(n1, u) * _conv(x.abs(), w1.abs()) + n1 * eta
        e_p = F.max_pool2d(e_z1.unsqueeze(0), 2)[0]
        p, e_pf = r["p"].reshape(-1), e_p.reshape(-1)
        e_z2 = w2.abs() @ e_pf + _gamma(n_f, u) * (w2.abs() @ (p.abs() + e_pf)) + n_f * eta
        d = float(e_z2.max())
        s = float(t.sum()) or 1.0
        t_abs = float(t.abs().sum())
        z2_np, t_np = r["z2"].numpy(), t.numpy()
        e_loss = (abs(s) + t_abs) * d + float(_ce_bound(z2_np, t_np, "fw", fmt, ce_scale).reshape(-1)[0])
        # backward
        softmax = torch.softmax(r["z2"], 0)
        e_dz2 = abs(s) * softmax * math.expm1(2 * d) + _t(_ce_bound(z2_np, t_np, "bw", fmt, ce_scale))
        dz2 = r["dz2"]
        e_dw2 = (torch.outer(e_dz2, p.abs() + e_pf) + torch.outer(dz2.abs(), e_pf)
                 + u * torch.outer(dz2.abs() + e_dz2, p.abs() + e_pf) + eta)
        e_dp = w2.abs().T @ e_dz2 + _gamma(n_k, u) * (w2.abs().T @ (dz2.abs() + e_dz2)) + n_k * eta
        da1, e_da1 = _pool_backward_bound(r["a1"], e_z1, r["dp"], e_dp.reshape(r["p"].shape))
        z1 = r["z1"]
        e_dz1 = torch.where(z1 > e_z1, e_da1, torch.where(z1 < -e_z1, 0.0, da1.abs() + e_da1))
        dz1 = torch.where(z1 > 0, da1, 0.0)
        e_dw1 = (_conv_weight_grad(x.abs(), e_dz1, w1.shape)
                 + _gamma(hw, u) * _conv_weight_grad(x.abs(), dz1.abs() + e_dz1, w1.shape) + hw * eta)
        # the update, per layer
        for name, gname, w, g, e_g, bit in (("w1s", "g1", w1, r["dw1"], e_dw1, FROZEN_CONV),
                                             ("w2s", "g2", w2, r["dw2"], e_dw2, FROZEN_LINEAR)):
            if frozen & bit:   # no gradient, no update: zeros and the same weights, bit for bit
                g_value, g_bound, w_value, w_bound = torch.zeros_like(w), torch.zeros_like(w), w, torch.zeros_like(w)
            else:
                g_value, g_bound = g, e_g
                w_value = w - lr * g
                w_bound = lr * e_g + _gamma(2, u) * (w.abs() + lr * (g.abs() + e_g)) + 2 * eta
            rows[gname][0].append(g_value.reshape(-1))
            rows[gname][1].append(g_bound.reshape(-1))
            rows[name][0].append(w_value.reshape(-1))
            rows[name][1].append(w_bound.reshape(-1))
        rows["loss"][0].append(r["loss"].reshape(1))
        rows["loss"][1].append(torch.tensor([e_loss], dtype=torch.float64))
    return {name: (torch.stack(values).numpy().reshape(outputs[name].shape),
                   torch.stack(bounds).numpy().reshape(outputs[name].shape))
            for name, (values, bounds) in rows.items()}


# ---- the depthwise-separable block with InstanceNorm and a residual ----
#
# Parameters concatenated as ops_train_dsblock.c keeps them: depthwise [C x 9],
# pointwise [C x C], InstanceNorm gamma and beta [2C], linear [K x F]. The
# teacher-forced bound is carried by ball arithmetic (golden/ball.py): every
# operation of the step, in the order lib_c performs it, with its operands'
# bounds and its own rounding; ReLU and max pooling decisions that may flip
# within a bound widen it as in the CNN. InstanceNorm's statistics are
# computed from the device's own (bounded) pre-norm values, stored, and read
# back by its backward step, so their bounds flow into both.

def _ds_split(params: torch.Tensor, C: int, K: int):
    o_pw, o_in = 9 * C, 9 * C + C * C
    o_l = o_in + 2 * C
    return (params[:o_pw].reshape(C, 1, 3, 3), params[o_pw:o_in].reshape(C, C, 1, 1),
            params[o_in:o_in + C], params[o_in + C:o_l], params[o_l:].reshape(K, -1))


def _ds_loss(x, t, params, C, K):
    from golden.norm import EPSILON
    w_dw, w_pw, gamma, beta, w_l = _ds_split(params, C, K)
    z1 = F.conv2d(x.unsqueeze(0), w_dw, padding=1, groups=C)
    z2 = F.conv2d(z1, w_pw)
    z3 = F.instance_norm(z2, weight=gamma, bias=beta, eps=EPSILON)
    r = x.unsqueeze(0) + torch.relu(z3)
    z4 = w_l @ F.max_pool2d(r, 2).reshape(-1)
    s = float(t.sum()) or 1.0
    return torch.logsumexp(z4, 0) * s - (t * z4).sum()


def dsblock_trajectory(inputs: dict[str, np.ndarray], steps: int, lr: float, C: int, K: int) -> dict[str, np.ndarray]:
    """The float64 run from the initial parameters: loss, gradients, weights
    after each step and the input gradient."""
    xs, ts = _t(inputs["x"]), _t(inputs["t"])
    params = _t(inputs["params"])
    rows = {name: [] for name in ("loss", "grads", "weights", "dx")}
    for k in range(steps):
        x = xs[k % len(xs)].clone().requires_grad_(True)
        p = params.clone().requires_grad_(True)
        loss = _ds_loss(x, ts[k % len(ts)], p, C, K)
        loss.backward()
        params = params - lr * p.grad
        for name, value in (("loss", loss.detach().reshape(1)), ("grads", p.grad), ("weights", params),
                            ("dx", x.grad.reshape(-1))):
            rows[name].append(value.detach().numpy().reshape(-1))
    return {name: np.concatenate(v) if name == "loss" else np.stack(v) for name, v in rows.items()}


def _ce_balls(z, t, fmt: NumberFormat, ce_scale: float):
    """The CrossEntropy's loss and gradient as balls, from logits z (a ball),
    as in the CNN's derivation (module docstring, CE fw and bw)."""
    from golden.ball import Ball
    dmax = float(z.r.max())
    s = float(t.sum()) or 1.0
    t_abs = float(t.abs().sum())
    z_np, t_np = z.c.numpy(), t.numpy()
    loss_c = torch.logsumexp(z.c, 0) * s - (t * z.c).sum()
    loss_r = (abs(s) + t_abs) * dmax + float(_ce_bound(z_np, t_np, "fw", fmt, ce_scale).reshape(-1)[0])
    softmax = torch.softmax(z.c, 0)
    dz = Ball(softmax * s - t, abs(s) * softmax * math.expm1(2 * dmax) + _t(_ce_bound(z_np, t_np, "bw", fmt, ce_scale)))
    return Ball(loss_c.reshape(1), torch.tensor([loss_r], dtype=torch.float64)), dz


def _ds_step_balls(x, t, params, C, K, fmt: NumberFormat, ce_scale: float):
    """One teacher-forced step: the balls of the loss, the gradients and the
    input gradient, from exact parameters."""
    from golden.ball import Arith, Ball, gamma
    from golden.norm import EPSILON
    A = Arith(fmt)
    u = fmt.unit_roundoff
    w_dw, w_pw, g_in, b_in, w_l = _ds_split(params, C, K)
    H, W = x.shape[1:]
    D = H * W
    X = Ball.exact(x)

    def dw_fw(v, w):
        return F.conv2d(v.unsqueeze(0), w, padding=1, groups=C)[0]

    def pw_fw(v, w):
        return F.conv2d(v.unsqueeze(0), w)[0]

    # forward
    z1 = A.linear(lambda v: dw_fw(v, w_dw), X, 9, lambda v: dw_fw(v, w_dw.abs()))
    z2 = A.linear(lambda v: pw_fw(v, w_pw), z1, C, lambda v: pw_fw(v, w_pw.abs()))
    z2f = Ball(z2.c.reshape(C, D), z2.r.reshape(C, D))
    mu = A.div(A.sum(z2f, 1, keepdim=True), Ball.exact(torch.full((C, 1), float(D), dtype=torch.float64)))
    q = A.div(A.sum(A.mul(z2f, z2f), 1, keepdim=True), Ball.exact(torch.full((C, 1), float(D), dtype=torch.float64)))
    var = A.add(A.sub(q, A.mul(mu, mu)), Ball.exact(torch.full((C, 1), EPSILON, dtype=torch.float64)))
    sigma = A.sqrt(var)
    d = A.sub(z2f, mu)
    scale = A.div(Ball.exact(g_in[:, None]), sigma)
    z3 = A.add(A.mul(scale, d), Ball.exact(b_in[:, None]))
    a = Ball(torch.relu(z3.c), z3.r)
    r = A.add(Ball.exact(x.reshape(C, D)), a)
    r3 = Ball(r.c.reshape(C, H, W), r.r.reshape(C, H, W))
    p = Ball(F.max_pool2d(r3.c.unsqueeze(0), 2)[0].reshape(-1), F.max_pool2d(r3.r.unsqueeze(0), 2)[0].reshape(-1))
    n_f = p.c.numel()
    z4 = A.linear(lambda v: w_l @ v, p, n_f, lambda v: w_l.abs() @ v)
    loss, dz4 = _ce_balls(z4, t, fmt, ce_scale)
    # backward
    dw_l = A.bilinear(lambda g, v: torch.outer(g, v), dz4, p, 1)
    dp = A.linear(lambda g: w_l.T @ g, dz4, K, lambda g: w_l.abs().T @ g)
    dr_c, dr_r = _pool_backward_bound(r3.c, r3.r, dp.c.reshape(C, H // 2, W // 2), dp.r.reshape(C, H // 2, W // 2))
    da = Ball(dr_c.reshape(C, D), dr_r.reshape(C, D))                        # residual BW: a copy
    z3c, z3r = z3.c, z3.r
    dz3 = Ball(torch.where(z3c > 0, da.c, 0.0),
               torch.where(z3c > z3r, da.r, torch.where(z3c < -z3r, 0.0, da.c.abs() + da.r)))
    # InstanceNorm WG then IG, with the stored statistics (mu, var, sigma balls)
    dot = A.sum(A.mul(dz3, d), 1, keepdim=True)
    dgamma = A.div(dot, sigma)
    dbeta = A.sum(dz3, 1, keepdim=True)
    d_count = Ball.exact(torch.full((C, 1), float(D), dtype=torch.float64))
    sum_dy = A.sum(dz3, 1, keepdim=True)
    dot_ig = A.sum(A.mul(d, dz3), 1, keepdim=True)
    in_scale = A.div(Ball.exact(g_in[:, None]), A.mul(d_count, sigma))
    term = A.mul(A.div(d, var), dot_ig)
    inner = A.sub(A.sub(A.mul(d_count, dz3), sum_dy), term)
    dz2 = A.mul(in_scale, inner)
    dz2_3 = Ball(dz2.c.reshape(C, H, W), dz2.r.reshape(C, H, W))
    z1_2 = Ball(z1.c.reshape(C, D), z1.r.reshape(C, D))
    dw_pw = A.bilinear(lambda g, v: g @ v.T, Ball(dz2.c, dz2.r), z1_2, D)
    dz1 = A.linear(lambda g: pw_fw(g, w_pw.transpose(0, 1)), dz2_3, C, lambda g: pw_fw(g, w_pw.abs().transpose(0, 1)))

    def dw_wg(inp, g):
        return torch.nn.grad.conv2d_weight(inp.unsqueeze(0), (C, 1, 3, 3), g.unsqueeze(0), padding=1, groups=C)

    def dw_ig(g, w):
        return torch.nn.grad.conv2d_input((1, C, H, W), w, g.unsqueeze(0), padding=1, groups=C)[0]

    dw_dw = A.bilinear(dw_wg, X, dz1, D)
    dx_block = A.linear(lambda g: dw_ig(g, w_dw), dz1, 9, lambda g: dw_ig(g, w_dw.abs()))
    dx = A.add(dx_block, Ball(dr_c, dr_r))                                   # the sum node
    grads = Ball.cat([dw_dw, dw_pw, dgamma, dbeta, dw_l])
    return loss, grads, dx, gamma(2, u)


def _teacher_forced_sgd(inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray], lr: float,
                        fmt: NumberFormat, step_balls) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every step from the device's parameters after the step before, for a
    run whose parameters are one vector updated by SGD: step_balls(x, t,
    params) gives the step's balls by output name ("loss", "grads", and any
    other per-step output); "weights" is the update. (value, bound) by name."""
    from golden.ball import gamma
    eta = fmt.smallest_subnormal / 2
    g2 = gamma(2, fmt.unit_roundoff)
    xs, ts = _t(inputs["x"]), _t(inputs["t"])
    steps = outputs["loss"].size
    rows = {name: ([], []) for name in outputs}
    for k in range(steps):
        params = _t(inputs["params"]) if k == 0 else _t(outputs["weights"][k - 1])
        if not bool(torch.isfinite(params).all()):
            for name, (values, bounds) in rows.items():
                size = outputs[name].size // steps
                values += [torch.full((size,), math.nan, dtype=torch.float64)] * (steps - k)
                bounds += [torch.zeros(size, dtype=torch.float64)] * (steps - k)
            break
        balls = step_balls(xs[k % len(xs)], ts[k % len(ts)], params)
        grads = balls["grads"]
        new = params - lr * grads.c
        new_r = lr * grads.r + g2 * (params.abs() + lr * grads.mag) + 2 * eta
        for name in rows:
            value, bound = (new, new_r) if name == "weights" else (balls[name].c, balls[name].r)
            rows[name][0].append(value.reshape(-1))
            rows[name][1].append(bound.reshape(-1))
    return {name: (torch.stack(v).numpy().reshape(outputs[name].shape), torch.stack(b).numpy().reshape(outputs[name].shape))
            for name, (v, b) in rows.items()}


def dsblock_teacher_forced(inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray], lr: float, C: int, K: int,
                           fmt: NumberFormat, ce_scale: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every step from the device's parameters after the step before:
    (value, bound) of loss, grads, weights and dx, by name."""
    def step(x, t, params):
        loss, grads, dx, _ = _ds_step_balls(x, t, params, C, K, fmt, ce_scale)
        return {"loss": loss, "grads": grads, "dx": dx}
    return _teacher_forced_sgd(inputs, outputs, lr, fmt, step)


# ---- the transformer block (LayerNorm -> attention -> residual -> linear -> CE) ----

def _tf_split(params: torch.Tensor, E: int, F: int, K: int) -> dict[str, torch.Tensor]:
    n = E * F
    return {"wq": params[:n].reshape(E, F), "wk": params[n:2 * n].reshape(E, F), "wv": params[2 * n:3 * n].reshape(E, F),
            "wo": params[3 * n:4 * n].reshape(E, F), "wl": params[4 * n:].reshape(K, -1)}


def _tf_fixed(fixed: torch.Tensor, E: int, F: int) -> dict[str, torch.Tensor]:
    return {"ln_w": fixed[:E], "ln_b": fixed[E:2 * E], "bq": fixed[2 * E:2 * E + F], "bk": fixed[2 * E + F:2 * E + 2 * F],
            "bv": fixed[2 * E + 2 * F:]}


def _tf_loss(x, t, params, fixed, shape: dict, eps: float):
    """The block in float64, in the device's layouts (pulp_mhsa_fp32.h)."""
    E, n_f, heads, K = shape["E"], shape["F"], shape["heads"], shape["K"]
    W, B = _tf_split(params, E, n_f, K), _tf_fixed(fixed, E, n_f)
    I = F.layer_norm(x, (E,), weight=B["ln_w"], bias=B["ln_b"], eps=eps).T         # E x L
    q, k, v = (W[w].T @ I + B[b][:, None] for w, b in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
    Hd = n_f // heads
    heads_out = []
    for h in range(heads):
        rows = slice(h * Hd, (h + 1) * Hd)
        p = torch.softmax(q[rows].T @ k[rows] / math.sqrt(Hd), dim=-1)   # [query][key]
        heads_out.append(v[rows] @ p.T)
    r = W["wo"] @ torch.cat(heads_out) + I
    logits = W["wl"] @ r.reshape(-1)
    s = float(t.sum()) or 1.0
    return torch.logsumexp(logits, 0) * s - (t * logits).sum()


def _sgd_trajectory(inputs: dict[str, np.ndarray], steps: int, lr: float, loss_of) -> dict[str, np.ndarray]:
    """The float64 run from the initial parameters of a network whose
    parameters are one vector: loss_of(x, t, params) is its loss. Loss,
    gradients and weights after each step."""
    xs, ts = _t(inputs["x"]), _t(inputs["t"])
    params = _t(inputs["params"])
    rows = {name: [] for name in ("loss", "grads", "weights")}
    for k in range(steps):
        p = params.clone().requires_grad_(True)
        loss = loss_of(xs[k % len(xs)], ts[k % len(ts)], p)
        loss.backward()
        params = params - lr * p.grad
        for name, value in (("loss", loss.detach().reshape(1)), ("grads", p.grad), ("weights", params)):
            rows[name].append(value.detach().numpy().reshape(-1))
    return {name: np.concatenate(v) if name == "loss" else np.stack(v) for name, v in rows.items()}


def transformer_trajectory(inputs: dict[str, np.ndarray], steps: int, lr: float, shape: dict,
                           eps: float) -> dict[str, np.ndarray]:
    """The float64 run (gradients in the parameters' layout)."""
    fixed = _t(inputs["fixed"])
    return _sgd_trajectory(inputs, steps, lr, lambda x, t, p: _tf_loss(x, t, p, fixed, shape, eps))


def _tf_step_balls(x, t, params, fixed, shape: dict, fmt: NumberFormat, eps: float, ce_scale: float,
                   fastexp_rel: float, q_rsqrt_rel: float):
    from golden import mhsa, norm
    from golden.ball import Arith, Ball, gamma
    E, n_f, heads, K = shape["E"], shape["F"], shape["heads"], shape["K"]
    A = Arith(fmt)
    W = {n: Ball.exact(w) for n, w in _tf_split(params, E, n_f, K).items()}
    B = _tf_fixed(fixed, E, n_f)
    # LayerNorm over each token's E values: the norm family's bound (golden/norm.py)
    ln = norm.normalized(x.numpy(), B["ln_w"].numpy()[None, :], B["ln_b"].numpy()[None, :], fmt, eps)
    z_r = gamma(ln.reduction, fmt.unit_roundoff) * ln.magnitude + ln.reduction * fmt.smallest_subnormal / 2
    z = Ball(_t(ln.value), _t(z_r + ln.propagated))
    I = Ball(z.c.T.contiguous(), z.r.T.contiguous())                                # the exact transpose
    biases = {b: Ball.exact(B[b][:, None]) for b in ("bq", "bk", "bv")}
    fw = mhsa.forward_balls(A, I, W, biases, heads, fmt, fastexp_rel, q_rsqrt_rel)
    r = A.add(fw["y"], I)                                                          # the residual
    r_flat = Ball(r.c.reshape(-1), r.r.reshape(-1))
    wl = W["wl"].c
    logits = A.linear(lambda v: wl @ v, r_flat, r_flat.c.numel(), lambda v: wl.abs() @ v)
    loss, dlogits = _ce_balls(logits, t, fmt, ce_scale)
    dwl = A.bilinear(lambda g, v: torch.outer(g, v), dlogits, r_flat, 1)
    dr = A.linear(lambda g: wl.T @ g, dlogits, K, lambda g: wl.abs().T @ g)
    dO = Ball(dr.c.reshape(E, -1), dr.r.reshape(E, -1))                            # residual BW: a copy
    bw = mhsa.backward_balls(A, I, W, fw, dO, heads, fmt, q_rsqrt_rel)
    parts = [bw["dwq"], bw["dwk"], bw["dwv"]]                                       # F x E: back to E x F
    grads = Ball.cat([g.T for g in parts] + [bw["dwo"], dwl])
    return {"loss": loss, "grads": grads}


def transformer_teacher_forced(inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray], lr: float,
                               shape: dict, fmt: NumberFormat, eps: float, ce_scale: float, fastexp_rel: float,
                               q_rsqrt_rel: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    fixed = _t(inputs["fixed"])
    return _teacher_forced_sgd(inputs, outputs, lr, fmt, lambda x, t, params: _tf_step_balls(
        x, t, params, fixed, shape, fmt, eps, ce_scale, fastexp_rel, q_rsqrt_rel))


# ---- the recurrent run: an RNN chained over a sequence (BPTT) -> linear -> CE ----
#
# One step's balls follow the device's chain call by call
# (harness/runtime/runner/ops_train_rnn.c). FW, per time step, the layer's
# own model (golden/rnn.py): z_t = [x_t, h_t-1] W sums K + M products (one
# more rounding for the stored z); h_t = tanh_prll(z_t) lies within
# tanh_abs of tanh(z_t), and tanh is 1-Lipschitz, so h_t's radius is z_t's
# plus tanh_abs. BW, per time step: G_t = (1 - h_t^2) dh_t (three
# roundings), [dx_t, dh_t-1] = G_t W^T (M products), the step's weight
# gradient u_t^T G_t (one product), summed over the steps with one rounding
# per addition. Radii grow along the sequence through |W|; the teacher
# forcing keeps that growth to one training step's.

def _rnn_split(params: torch.Tensor, K: int, M: int, C: int) -> tuple[torch.Tensor, torch.Tensor]:
    n_w = (K + M) * M
    return params[:n_w].reshape(K + M, M), params[n_w:].reshape(C, M)


def _rnn_loss(x, t, params, K: int, M: int, C: int):
    W, wl = _rnn_split(params, K, M, C)
    h = torch.zeros(M, dtype=torch.float64)
    for x_t in x:
        h = torch.tanh(torch.cat([x_t, h]) @ W)
    logits = wl @ h
    s = float(t.sum()) or 1.0
    return torch.logsumexp(logits, 0) * s - (t * logits).sum()


def rnn_trajectory(inputs: dict[str, np.ndarray], steps: int, lr: float, shape: dict) -> dict[str, np.ndarray]:
    """The float64 run, full backpropagation through time."""
    return _sgd_trajectory(inputs, steps, lr, lambda x, t, p: _rnn_loss(x, t, p, shape["K"], shape["M"], shape["C"]))


def _rnn_step_balls(x, t, params, shape: dict, fmt: NumberFormat, ce_scale: float, tanh_abs: float):
    from golden.ball import Arith, Ball
    K, M, C = shape["K"], shape["M"], shape["C"]
    A = Arith(fmt)
    W, wl = _rnn_split(params, K, M, C)
    h = Ball.exact(torch.zeros(M, dtype=torch.float64))
    us, hs = [], []
    for x_t in x:                                                       # forward, chained
        u = Ball(torch.cat([x_t, h.c]), torch.cat([torch.zeros(K, dtype=torch.float64), h.r]))
        z = A.linear(lambda v: v @ W, u, K + M + 1, lambda v: v @ W.abs())
        h = Ball(torch.tanh(z.c), z.r + tanh_abs)
        us.append(u)
        hs.append(h)
    logits = A.linear(lambda v: wl @ v, h, M, lambda v: wl.abs() @ v)
    loss, dlogits = _ce_balls(logits, t, fmt, ce_scale)
    dwl = A.bilinear(lambda g, v: torch.outer(g, v), dlogits, h, 1)
    dh = A.linear(lambda g: wl.T @ g, dlogits, C, lambda g: wl.abs().T @ g)
    one = Ball.exact(torch.ones(M, dtype=torch.float64))
    dw = None
    for u, h_t in zip(reversed(us), reversed(hs)):                      # backward through time
        g = A.mul(A.sub(one, A.mul(h_t, h_t)), dh)
        dw_t = A.bilinear(lambda a, b: torch.outer(a, b), u, g, 1)
        dw = dw_t if dw is None else A.add(dw, dw_t)
        du = A.linear(lambda v: W @ v, g, M, lambda v: W.abs() @ v)
        dh = Ball(du.c[K:], du.r[K:])
    grads = Ball.cat([dw, dwl])
    return {"loss": loss, "grads": grads}


def rnn_teacher_forced(inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray], lr: float, shape: dict,
                       fmt: NumberFormat, ce_scale: float, tanh_abs: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return _teacher_forced_sgd(inputs, outputs, lr, fmt, lambda x, t, params: _rnn_step_balls(
        x, t, params, shape, fmt, ce_scale, tanh_abs))
