"""golden/norm.py: the documented InstanceNorm formulas agree with torch's
InstanceNorm2d(eps=EPSILON, affine=True) in float64, forward and backward."""
import numpy as np
import torch

from golden import norm
from golden.formats import FP32


def _case(C=3, H=4, W=5, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (C, H, W))
    coeff = rng.uniform(-1, 1, 2 * C)
    dy = rng.uniform(-1, 1, (C, H, W))
    mu, v, sigma = norm.statistics(x.reshape(C, -1))
    return dict(x=x, coeff=coeff, dy=dy, mean=mu, var=v, stdev=sigma)


def _torch(inputs, C):
    x = torch.tensor(inputs["x"], requires_grad=True)
    gamma = torch.tensor(inputs["coeff"][:C], requires_grad=True)
    beta = torch.tensor(inputs["coeff"][C:], requires_grad=True)
    y = torch.nn.functional.instance_norm(x.unsqueeze(0), weight=gamma, bias=beta, eps=norm.EPSILON)[0]
    y.backward(torch.tensor(inputs["dy"]))
    return y.detach().numpy(), torch.cat([gamma.grad, beta.grad]).numpy(), x.grad.numpy()


def test_forward_with_computed_statistics_is_torchs_instance_norm():
    inputs = _case()
    y, _, _ = _torch(inputs, 3)
    np.testing.assert_allclose(norm.instnorm(inputs, "fw", 0, 3, FP32)["y"].value, y, rtol=1e-12, atol=1e-12)


def test_weight_and_input_gradients_are_torchs():
    inputs = _case()
    _, dcoeff, dx = _torch(inputs, 3)
    out = norm.instnorm(inputs, "bw", 0, 3, FP32)
    np.testing.assert_allclose(out["dcoeff"].value, dcoeff, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out["dx"].value, dx, rtol=1e-10, atol=1e-12)


def test_a_zero_variance_channel_is_exact_and_its_output_is_beta():
    inputs = _case(C=2, H=4, W=4)
    edged = norm.edge_inputs(inputs, 2, 1, "fw", FP32)
    out = norm.instnorm(edged, "fw", 0, 2, FP32)
    assert out["mean_out"].propagated[0] == 0 and out["var_out"].propagated[0] == 0
    np.testing.assert_array_equal(out["y"].value[0], edged["coeff"][2])


def test_batchnorm_and_layernorm_are_torchs_in_training_mode():
    rng = np.random.default_rng(3)
    B, C, H, W = 3, 4, 2, 5
    x = rng.uniform(-1, 1, (B, C, H, W))
    coeff = rng.uniform(-1, 1, 2 * C)
    y = torch.nn.functional.batch_norm(torch.tensor(x), None, None, torch.tensor(coeff[:C]),
                                       torch.tensor(coeff[C:]), training=True, eps=1e-5)
    got = norm.batchnorm({"x": x.reshape(-1), "coeff": coeff}, B, C, FP32, 1e-5)["y"].value
    np.testing.assert_allclose(got, y.numpy().reshape(-1), rtol=1e-12, atol=1e-12)
    rows, n = 3, 7
    x = rng.uniform(-1, 1, (rows, n))
    coeff = rng.uniform(-1, 1, 2 * n)
    y = torch.nn.functional.layer_norm(torch.tensor(x), (n,), torch.tensor(coeff[:n]), torch.tensor(coeff[n:]),
                                       eps=1e-5)
    got = norm.layernorm({"x": x.reshape(-1), "coeff": coeff}, rows, FP32, 1e-5)["y"].value
    np.testing.assert_allclose(got, y.numpy().reshape(-1), rtol=1e-12, atol=1e-12)


def test_rmsnorm_is_torchs():
    rng = np.random.default_rng(4)
    x, w = rng.uniform(-1, 1, 17), rng.uniform(-1, 1, 17)
    y = torch.nn.functional.rms_norm(torch.tensor(x), (17,), torch.tensor(w), eps=norm.RMSNORM_EPSILON)
    np.testing.assert_allclose(norm.rmsnorm({"x": x, "coeff": w})["y"].value, y.numpy(), rtol=1e-12)
