"""golden/ds_cnn_step.py: the DS-CNN training run's float64 trajectory is
torch.autograd's on a rebuild of the network written here from its
definition (own params layout, own layers), and the teacher-forced bounds
hold a float32 simulation of the device while being tight enough that a
1e-2 relative error in one gradient element fails. The per-pass checks of
the last step hold the same simulation, are tight at the DS-CNN shape
itself (C = 64, where the chained bounds are not) and catch a 1e-3
relative error in one element of any intermediate, and a wrong mask."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from golden import ds_cnn_step as ds
from golden.formats import FP32
from golden.inputs import uniform_inputs

SMALL = dict(H=13, W=6, C=8, Hk=4, Wk=3, sh=2, sw=2, U=1, D=2, L=1, R=1, K=5, S=2, N=2)
DSCNN = dict(H=49, W=10, C=64, Hk=10, Wk=4, sh=2, sw=2, U=4, D=5, L=1, R=1, K=12, S=2, N=1)
LR = 1 / 16            # exact in FP32, as the catalogue's training runs
CE_SCALE = 1.334       # CROSSENTROPY.tolerance_scale["fp32"] (harness/catalogue/losses.py)


def layout(s):
    """(name, shape) of each parameter tensor in the flat vector, from the spec."""
    C, K = s["C"], s["K"]
    parts = [("w1", (C, 1, s["Hk"], s["Wk"]))]
    for b in range(4):
        parts += [(f"dw{b}", (C, 1, 3, 3)), (f"pw{b}", (C, C))]
    return parts + [("wf", (K, C)), ("bf", (K,))]


def offsets(s):
    out, o = {}, 0
    for name, shape in layout(s):
        n = int(np.prod(shape))
        out[name] = (o, n, shape)
        o += n
    return out, o


def net(x, t, params, s, acts=None):
    """The network from its definition, in params' dtype; x [1 x H x W]."""
    offs, _ = offsets(s)
    W = {name: params[o:o + n].reshape(shape) for name, (o, n, shape) in offs.items()}
    xp = F.pad(x.unsqueeze(0), (s["L"], s["R"], s["U"], s["D"]))
    a = torch.relu(F.conv2d(xp, W["w1"], stride=(s["sh"], s["sw"])))
    if acts is not None:
        acts.append(a[0].detach())
    for b in range(4):
        d = torch.relu(F.conv2d(a, W[f"dw{b}"], padding=1, groups=s["C"]))
        a = torch.relu(F.conv2d(d, W[f"pw{b}"][:, :, None, None]))
        if acts is not None:
            acts.append(a[0].detach())
    p = F.avg_pool2d(a, a.shape[2:]).reshape(-1)
    z = W["wf"] @ p + W["bf"]
    return torch.logsumexp(z, 0) * t.sum() - (t * z).sum()


def loss_and_grad(x, t, params, s, dtype):
    p = torch.tensor(params, dtype=dtype, requires_grad=True)
    loss = net(torch.tensor(x, dtype=dtype), torch.tensor(t, dtype=dtype), p, s)
    loss.backward()
    return loss.detach(), p.grad


def case(s, seed=5):
    return ds.initial_values(uniform_inputs(ds.input_shapes(s), FP32, seed), s)


def recorded_step(x, t, params, s):
    """One float32 step by autograd, and its intermediates as the device
    emits them: (loss, grads, {acts, grad_maps, heads}), float32 values.
    autograd's ReLU backward masks by the stored output > 0, as the device's."""
    offs, _ = offsets(s)
    p = torch.tensor(params, dtype=torch.float32, requires_grad=True)
    W = {name: p[o:o + n].reshape(shape) for name, (o, n, shape) in offs.items()}
    x, t = torch.tensor(x, dtype=torch.float32), torch.tensor(t, dtype=torch.float32)
    xp = F.pad(x.unsqueeze(0), (s["L"], s["R"], s["U"], s["D"]))
    pre, acts = [], []                      # z0, then per block zd_b, zp_b; after ReLU: a0, d_b, a_b+1

    def keep(z):
        z.retain_grad()
        pre.append(z)
        acts.append(torch.relu(z))
        return acts[-1]
    a = keep(F.conv2d(xp, W["w1"], stride=(s["sh"], s["sw"])))
    for b in range(4):
        d = keep(F.conv2d(a, W[f"dw{b}"], padding=1, groups=s["C"]))
        a = keep(F.conv2d(d, W[f"pw{b}"][:, :, None, None]))
    pool = F.avg_pool2d(a, a.shape[2:]).reshape(-1)
    pool.retain_grad()
    z = W["wf"] @ pool + W["bf"]
    z.retain_grad()
    loss = torch.logsumexp(z, 0) * t.sum() - (t * z).sum()
    loss.backward()
    inter = {"acts": torch.stack([v.detach().reshape(-1) for v in acts]),
             "grad_maps": torch.stack([v.grad.reshape(-1) for v in reversed(pre)]),
             "heads": torch.cat([pool.detach(), z.detach(), z.grad, pool.grad])}
    return loss.detach(), p.grad, inter


def device_run(inputs, s):
    """A float32 device: each step from its own float32 weights, SGD in
    float32; also the intermediates of its last step."""
    params = torch.tensor(inputs["params"], dtype=torch.float32)
    lr = torch.tensor(LR, dtype=torch.float32)
    rows = {"loss": [], "grads": [], "weights": []}
    for k in range(s["N"]):
        loss, g, inter = recorded_step(inputs["x"][k % s["S"]], inputs["t"][k % s["S"]], params.numpy(), s)
        params = params - lr * g
        for name, v in (("loss", loss.reshape(1)), ("grads", g), ("weights", params)):
            rows[name].append(v.to(torch.float64).numpy())
    out = {name: np.concatenate(v) if name == "loss" else np.stack(v) for name, v in rows.items()}
    return dict(out, **{name: v.to(torch.float64).numpy() for name, v in inter.items()})


def test_layout_and_output_size_follow_the_spec():
    assert ds.out_size(SMALL) == (7, 3) and ds.out_size(DSCNN) == (25, 5)
    for s in (SMALL, DSCNN):
        offs, total = offsets(s)
        assert ds.param_count(s) == total
        parts = ds.split(np.arange(total, dtype=np.float64), s)
        named = [parts["w1"]] + [m for b in range(4) for m in (parts["dw"][b], parts["pw"][b])] + [parts["wf"], parts["bf"]]
        for (name, (o, n, shape)), got in zip(offs.items(), named):
            assert got.shape == shape and got.reshape(-1)[0] == o and got.reshape(-1)[-1] == o + n - 1, name


def test_trajectory_is_autograd_of_the_rebuild_and_matches_finite_differences():
    s = SMALL
    inputs = case(s)
    run = ds.trajectory(inputs, s["N"], LR, s)
    params = inputs["params"].copy()
    for k in range(s["N"]):
        x, t = inputs["x"][k % s["S"]], inputs["t"][k % s["S"]]
        loss, g = loss_and_grad(x, t, params, s, torch.float64)
        np.testing.assert_allclose(run["loss"][k], loss.item(), rtol=1e-13)
        np.testing.assert_allclose(run["grads"][k], g.numpy(), rtol=1e-11, atol=1e-15)
        params = params - LR * g.numpy()
        np.testing.assert_allclose(run["weights"][k], params, rtol=1e-13, atol=1e-16)
    flat = ds.trajectory(dict(inputs, x=inputs["x"][:, 0]), s["N"], LR, s)      # x as [S x H x W]
    for name in run:
        np.testing.assert_array_equal(flat[name], run[name])
    # the gradient as the loss's derivative: central differences on a few params of each tensor
    x, t = torch.tensor(inputs["x"][0]), torch.tensor(inputs["t"][0])
    p0, h = inputs["params"], 1e-6
    offs, _ = offsets(s)
    for name in ("w1", "dw0", "pw0", "dw3", "pw3", "wf", "bf"):
        o, n, _ = offs[name]
        i = o + int(np.argmax(np.abs(run["grads"][0][o:o + n])))
        plus, minus = p0.copy(), p0.copy()
        plus[i] += h
        minus[i] -= h
        fd = (net(x, t, torch.tensor(plus), s) - net(x, t, torch.tensor(minus), s)).item() / (2 * h)
        assert abs(fd - run["grads"][0][i]) <= 1e-6 * abs(run["grads"][0][i]) + 1e-9, name


def test_teacher_forced_values_are_autograd_from_the_device_weights():
    s = SMALL
    inputs = case(s)
    outputs = device_run(inputs, s)
    steps = ds.teacher_forced(inputs, outputs, LR, s, FP32, CE_SCALE)
    for k in range(s["N"]):
        params = inputs["params"] if k == 0 else outputs["weights"][k - 1]
        loss, g = loss_and_grad(inputs["x"][k % s["S"]], inputs["t"][k % s["S"]], params, s, torch.float64)
        np.testing.assert_allclose(steps["loss"][0][k], loss.item(), rtol=1e-13)
        np.testing.assert_allclose(steps["grads"][0][k], g.numpy(), rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(steps["weights"][0][k], params - LR * g.numpy(), rtol=1e-13, atol=1e-16)


def check_device(s, seed=5):
    """The teacher-forced check of a float32 device run: (inputs, outputs, steps)."""
    inputs = case(s, seed)
    outputs = device_run(inputs, s)
    steps = ds.teacher_forced(inputs, outputs, LR, s, FP32, CE_SCALE)
    for name, (value, bound) in steps.items():
        assert value.shape == outputs[name].shape
        err = np.abs(value - outputs[name])
        assert np.all(err <= bound), f"{name}: worst error/bound {np.max(err / bound):.3g}"
    return inputs, outputs, steps


def grad_ratio(steps):
    value, bound = steps["grads"]
    return float(np.median(bound) / np.median(np.abs(value)))


def test_a_float32_device_is_within_the_bounds_and_the_bounds_are_tight():
    s = SMALL
    _, outputs, steps = check_device(s)
    assert grad_ratio(steps) < 1e-3
    value, bound = steps["weights"]
    assert np.median(bound / np.abs(value)) < 1e-5
    value, bound = steps["loss"]
    assert np.all(bound < 1e-4 * np.abs(value))
    # the device did round: its gradients are not the float64 ones
    assert np.any(outputs["grads"] != steps["grads"][0])


def test_a_gradient_off_by_1e_2_relative_fails():
    s = SMALL
    inputs, outputs, _ = check_device(s)
    offs, _ = offsets(s)
    for name in ("w1", "dw0", "pw0", "wf", "bf"):
        o, n, _ = offs[name]
        i = o + int(np.argmax(np.abs(outputs["grads"][1][o:o + n])))
        bad = {k: v.copy() for k, v in outputs.items()}
        bad["grads"][1, i] *= 1 + 1e-2
        value, bound = ds.teacher_forced(inputs, bad, LR, s, FP32, CE_SCALE)["grads"]
        assert abs(value[1, i] - bad["grads"][1, i]) > bound[1, i], name
        ok = np.abs(value - bad["grads"]) <= bound
        assert ok.sum() == ok.size - 1


def test_dscnn_shape_initial_values_keep_activations_alive_and_one_step_within_its_bounds():
    s = DSCNN
    inputs = case(s)
    params = torch.tensor(inputs["params"])
    for k in range(s["S"]):
        acts = []
        loss = net(torch.tensor(inputs["x"][k]), torch.tensor(inputs["t"][k]), params, s, acts)
        assert np.isfinite(loss.item()) and abs(loss.item() - np.log(s["K"])) < 1
        rms = [float(a.pow(2).mean().sqrt()) for a in acts]
        assert all(rms[0] / 4 < r < 4 * rms[0] for r in rms), rms
        assert float((acts[-1] > 0).double().mean()) > 0.25
    # the bounds hold at this shape, but are loose (module docstring, "How tight")
    check_device(s)


# ---- the last step, pass by pass ----

PASS_NAMES = ("acts", "grad_maps", "heads", "grads_last")


def device_of(outputs, name):
    return outputs["grads"][-1] if name == "grads_last" else outputs[name]


def failures(checks, outputs, name):
    value, bound = checks[name]
    return ~(np.abs(value - device_of(outputs, name)) <= bound)


def pass_check_device(s, seed=5):
    """The pass checks of a float32 device run, all holding: (inputs, outputs, checks)."""
    inputs = case(s, seed)
    outputs = device_run(inputs, s)
    checks = ds.pass_checks(inputs, outputs, s, FP32, CE_SCALE)
    assert set(checks) == set(PASS_NAMES)
    for name in PASS_NAMES:
        value, bound = checks[name]
        assert value.shape == bound.shape == device_of(outputs, name).shape, name
        err = np.abs(value - device_of(outputs, name))
        assert not failures(checks, outputs, name).any(), f"{name}: worst error/bound {np.max(err / bound):.3g}"
    return inputs, outputs, checks


def tightness(checks, name):
    """median bound / median |value| over the nonzero values."""
    value, bound = checks[name]
    nz = value != 0
    return float(np.median(bound[nz]) / np.median(np.abs(value[nz])))


DSCNN2 = dict(DSCNN, N=2)


@pytest.mark.parametrize("s", [SMALL, dict(SMALL, N=1), DSCNN2], ids=["small", "small-N1", "dscnn"])
def test_pass_checks_hold_a_float32_device(s):
    inputs, outputs, checks = pass_check_device(s)
    C, K = s["C"], s["K"]
    hw = int(np.prod(ds.out_size(s)))
    assert outputs["acts"].shape == outputs["grad_maps"].shape == (9, C * hw)
    # the device rounded, and the references are not its values
    for name in PASS_NAMES:
        assert np.any(checks[name][0] != device_of(outputs, name)), name
    # where the device's activation is 0, the masked gradient's bound is an exact 0
    masks = [8] + [i for b in reversed(range(4)) for i in (2 * b + 1, 2 * b)]
    value, bound = checks["grad_maps"]
    for j, i in enumerate(masks):
        dead = outputs["acts"][i] == 0
        assert dead.any() and np.all(value[j][dead] == 0) and np.all(bound[j][dead] == 0)
    # the last step's gradient is the whole-step one's value, from the device's own intermediates
    steps = ds.teacher_forced(inputs, outputs, LR, s, FP32, CE_SCALE)
    np.testing.assert_allclose(checks["grads_last"][0], steps["grads"][0][-1], rtol=1e-3, atol=1e-6)


def test_pass_checks_are_tight_at_the_dscnn_shape():
    """Measured (seed 5): acts 1.6e-5, grad_maps 1.8e-6, heads 1.7e-6,
    grads_last 1.9e-5; per pass at most 5.5e-5 (conv1's WG, the logits)."""
    s = DSCNN2
    C, K = s["C"], s["K"]
    _, _, checks = pass_check_device(s)
    ratios = {name: tightness(checks, name) for name in PASS_NAMES}
    assert all(r < 1e-4 for r in ratios.values()), ratios
    # and pass by pass: each row of acts and grad_maps, each head, each weight gradient
    parts = {f"{name}[{j}]": (checks[name][0][j], checks[name][1][j])
             for name in ("acts", "grad_maps") for j in range(9)}
    value, bound = checks["heads"]
    for name, o, n in (("p", 0, C), ("z", C, K), ("dz", C + K, K), ("dp", C + 2 * K, C)):
        parts[name] = value[o:o + n], bound[o:o + n]
    value, bound = checks["grads_last"]
    offs, _ = offsets(s)
    for name, (o, n, _) in offs.items():
        parts["d" + name] = value[o:o + n], bound[o:o + n]
    ratios = {name: tightness({name: vb}, name) for name, vb in parts.items()}
    assert all(r < 1e-4 for r in ratios.values()), ratios


def test_a_1e_3_relative_error_in_one_intermediate_fails():
    s = DSCNN2
    C, K = s["C"], s["K"]
    inputs, outputs, checks = pass_check_device(s)
    offs, _ = offsets(s)
    o, n, _ = offs["pw2"]
    # (output, its check, the row of both, the elements of the row to perturb: the largest of them)
    targets = [("acts", "acts", 3, 0, None), ("grad_maps", "grad_maps", 5, 0, None),
               ("heads", "heads", None, C + K, K),                                  # dz
               ("grads", "grads_last", -1, o, n)]                                   # pw_2's gradient
    for name, checked, row, start, count in targets:
        bad = {k: v.copy() for k, v in outputs.items()}
        vec = bad[name] if row is None else bad[name][row]                          # a view: edits bad
        i = start + int(np.argmax(np.abs(vec[start:start + count if count else None])))
        vec[i] *= 1 + 1e-3
        fail = failures(ds.pass_checks(inputs, bad, s, FP32, CE_SCALE), bad, checked)
        assert (fail if row is None or checked == "grads_last" else fail[row])[i], (name, row, i)


def test_a_wrong_mask_fails():
    s = DSCNN2
    inputs, outputs, checks = pass_check_device(s)
    value = checks["grad_maps"][0]
    for j, i in ((1, 7), (8, 0)):           # grad_maps[1] is masked by d_3, grad_maps[8] by a_0
        dead = np.flatnonzero(outputs["acts"][i] == 0)
        alive = np.flatnonzero(outputs["acts"][i] > 0)
        # passed where the activation is 0: the unmasked gradient, nonzero
        bad = {k: v.copy() for k, v in outputs.items()}
        unmasked = unmasked_map(outputs, s, j)
        e = dead[int(np.argmax(np.abs(unmasked[dead])))]
        assert unmasked[e] != 0
        bad["grad_maps"][j, e] = unmasked[e]
        fail = failures(ds.pass_checks(inputs, bad, s, FP32, CE_SCALE), bad, "grad_maps")
        assert fail[j, e] and fail[j].sum() == 1, (j, e)
        # blocked where the activation is > 0
        bad = {k: v.copy() for k, v in outputs.items()}
        e = alive[int(np.argmax(np.abs(value[j, alive])))]
        bad["grad_maps"][j, e] = 0.0
        fail = failures(ds.pass_checks(inputs, bad, s, FP32, CE_SCALE), bad, "grad_maps")
        assert fail[j, e] and fail[j].sum() == 1, (j, e)


def unmasked_map(outputs, s, j):
    """grad_maps[j] before its mask, in float32 from the device's map before
    (j = 1: pw_3's IG of grad_maps[0]; j = 8: dw_0's IG of grad_maps[7])."""
    offs, _ = offsets(s)
    C = s["C"]
    Ho, Wo = ds.out_size(s)
    params = torch.tensor(outputs["weights"][-2], dtype=torch.float32)
    g = torch.tensor(outputs["grad_maps"][j - 1], dtype=torch.float32).reshape(1, C, Ho, Wo)
    if j == 1:
        o, n, _ = offs["pw3"]
        out = torch.einsum("oi,nohw->nihw", params[o:o + n].reshape(C, C), g)
    else:
        o, n, shape = offs["dw0"]
        out = torch.nn.grad.conv2d_input((1, C, Ho, Wo), params[o:o + n].reshape(shape), g, padding=1, groups=C)
    return out.reshape(-1).to(torch.float64).numpy()
