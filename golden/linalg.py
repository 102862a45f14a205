"""References for the linear-algebra family: matmul and the linear layer.

Values come from float64 torch on inputs that are already on the device's
grid, so the only error left is the device's own rounding. Each function
also runs on |inputs| to get the magnitude of the summed terms: every output
element of these multilinear maps is a sum of products of one element per
input, so the same map on absolute values gives sum |term|.
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.lazy_torch import torch


def _t(array: np.ndarray, grad: bool = False) -> torch.Tensor:
    return torch.tensor(array, dtype=torch.float64, requires_grad=grad)


def matmul(inputs: dict[str, np.ndarray], trans_B: int, bias: int = 0) -> dict[str, Reference]:
    """C [N x M] = A [N x K] . B, with B stored [K x M], or [M x K] when trans_B,
    plus mm_manager's bias: 0 none, 1 one per column (C[i][j] += bias[j]),
    2 one per row (C[i][j] += bias[i]). The bias is one more rounded term."""
    def product(a, b, c):
        b = _t(b)
        out = _t(a) @ (b.T if trans_B else b)
        if bias == 1:
            out = out + _t(c)[None, :]
        elif bias == 2:
            out = out + _t(c)[:, None]
        return out.numpy()

    A, B = inputs["A"], inputs["B"]
    c = inputs.get("bias")
    return {"C": Reference(product(A, B, c), product(np.abs(A), np.abs(B), None if c is None else np.abs(c)),
                           A.shape[1] + (bias != 0))}


def _linear_grads(x, W, b, dy, use_bias):
    xt, Wt, bt = _t(x, True), _t(W, True), _t(b, True)
    y = Wt @ xt + (bt if use_bias else 0.0)
    y.backward(_t(dy))
    grads = {"y": y.detach().numpy(), "dW": Wt.grad.numpy(), "dx": xt.grad.numpy()}
    grads["db"] = bt.grad.numpy() if use_bias else np.zeros_like(b)
    return grads


def linear(inputs: dict[str, np.ndarray], step: str, use_bias: int) -> dict[str, Reference]:
    """Linear layer y = W . x (+ b), with W [out x in]; gradients by autograd.

    Reduction lengths: FW sums `in` products (+1 for the bias), WG is one
    product per element, IG sums `out` products, db is a copy of dy."""
    x, W, b, dy = (inputs[k] for k in ("x", "W", "b", "dy"))
    exact = _linear_grads(x, W, b, dy, use_bias)
    mags = _linear_grads(np.abs(x), np.abs(W), np.abs(b), np.abs(dy), use_bias)
    n_in, n_out = W.shape[1], W.shape[0]
    if step == "fw":
        return {"y": Reference(exact["y"], mags["y"], n_in + use_bias)}
    if step == "wg":
        refs = {"dW": Reference(exact["dW"], mags["dW"], 1)}
        if use_bias:
            refs["db"] = Reference(exact["db"], mags["db"], 0)
        return refs
    if step == "ig":
        return {"dx": Reference(exact["dx"], mags["dx"], n_out)}
    raise ValueError(f"linear has no step {step!r}; expected fw, wg or ig")
