"""References for the pointwise, depthwise and transposed-convolution family.

Values come from float64 torch on inputs already on the device's grid (see
golden/linalg.py). Every output is bilinear in two inputs (plus a bias), so
the same computation on |inputs| gives the magnitude sum |term| of each
element. Gradients come from autograd through the very forward that gives
the values, so padding, cropping and strides are derived once.

Tensors arrive in the case's layout (CHW, or HWC when `hwc`) and leave in it:
    pointwise   x [Ci,H,W]  W [Co,Ci]          y [Co,H,W]
    depthwise   x [C,H,W]   W [C,Hk,Wk]        y [C,Ho,Wo]
    transposed  x [Ci,H,W]  W [Ci,Co,Hk,Wk]    y [Co,Ho,Wo]   (b [Co])
with HWC putting the channel last: x [H,W,C], y [Ho,Wo,C], pointwise W
[Ci,Co] (the published API's HWC layout), depthwise W [Hk,Wk,C], transposed
W [Ci,Hk,Wk,Co] (these two HWC layouts are lib_c's: the published library has
CHW only). Weight gradients are laid out like the weights.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from golden.bundle import Reference
from golden.lazy_torch import F, torch

STEPS = ("fw", "wg", "ig", "bw")   # bw: both gradients of one _bw_cl call


def _outputs(step: str, by_step: dict[str, dict[str, int]]) -> dict[str, int]:
    """The outputs (and their reductions) of a step; bw has WG's and IG's."""
    return {**by_step["wg"], **by_step["ig"]} if step == "bw" else by_step[step]


def _chw(t: torch.Tensor, hwc: int) -> torch.Tensor:
    """A [C,H,W] or [H,W,C] tensor as a batch of one [1,C,H,W]."""
    return (t.permute(2, 0, 1) if hwc else t).unsqueeze(0)


def _layout(t: torch.Tensor, hwc: int) -> torch.Tensor:
    """A [1,C,H,W] result back in the case's layout."""
    t = t.squeeze(0)
    return t.permute(1, 2, 0) if hwc else t


def _evaluate(forward: Callable[..., torch.Tensor], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """y = forward(inputs except dy), and the gradient of <y, dy> by every input."""
    tensors = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k != "dy") for k, v in inputs.items()}
    dy = tensors.pop("dy")
    y = forward(**tensors)
    y.backward(dy)
    grads = {f"d{k}": t.grad.numpy() if t.grad is not None else np.zeros(t.shape) for k, t in tensors.items()}
    return {"y": y.detach().numpy(), **grads}


def _references(forward, inputs: dict[str, np.ndarray], outputs: dict[str, int]) -> dict[str, Reference]:
    """Reference of each named output (y, dW, db, dx) with its reduction length."""
    exact = _evaluate(forward, inputs)
    mags = _evaluate(forward, {k: np.abs(v) for k, v in inputs.items()})
    return {name: Reference(exact[name], mags[name], n) for name, n in outputs.items()}


def _check_step(step: str) -> None:
    if step not in STEPS:
        raise ValueError(f"no step {step!r}; expected one of {STEPS}")


def pointwise(inputs: dict[str, np.ndarray], step: str, hwc: int) -> dict[str, Reference]:
    """1x1 convolution; W is Co x Ci in CHW and Ci x Co in HWC.
    Reductions: FW sums Ci products, WG H*W, IG Co."""
    _check_step(step)
    Ci, Co = inputs["W"].shape if hwc else inputs["W"].shape[::-1]
    H, W = inputs["x"].shape[:2] if hwc else inputs["x"].shape[1:]

    def forward(x, W):
        kernel = W.t() if hwc else W
        return _layout(F.conv2d(_chw(x, hwc), kernel.reshape(Co, Ci, 1, 1)), hwc)

    outputs = _outputs(step, {"fw": {"y": Ci}, "wg": {"dW": H * W}, "ig": {"dx": Co}})
    return _references(forward, {k: inputs[k] for k in ("x", "W", "dy")}, outputs)


def depthwise(inputs: dict[str, np.ndarray], step: str, hwc: int, stride: tuple[int, int],
              pads: tuple[int, int, int, int]) -> dict[str, Reference]:
    """Depthwise convolution (groups = C), zero padding (left, right, up, down).

    Reductions: FW at most Hk*Wk taps, WG Ho*Wo, IG at most
    ceil(Hk/sh)*ceil(Wk/sw) outputs per input element."""
    _check_step(step)
    if hwc:
        Hk, Wk, C = inputs["W"].shape
    else:
        C, Hk, Wk = inputs["W"].shape
    sh, sw = stride

    def forward(x, W):
        kernel = (W.permute(2, 0, 1) if hwc else W).unsqueeze(1)
        return _layout(F.conv2d(F.pad(_chw(x, hwc), pads), kernel, stride=stride, groups=C), hwc)

    dy = inputs["dy"]
    Ho, Wo = dy.shape[:2] if hwc else dy.shape[1:]
    outputs = _outputs(step, {"fw": {"y": Hk * Wk}, "wg": {"dW": Ho * Wo},
                              "ig": {"dx": math.ceil(Hk / sh) * math.ceil(Wk / sw)}})
    return _references(forward, {k: inputs[k] for k in ("x", "W", "dy")}, outputs)


def transposed_output_size(size: int, kernel: int, stride: int, pad_before: int, pad_after: int) -> int:
    """Length of one output axis: the full (size-1)*stride + kernel, cropped."""
    return (size - 1) * stride + kernel - pad_before - pad_after


def transposed(inputs: dict[str, np.ndarray], step: str, hwc: int, stride: tuple[int, int],
               pads: tuple[int, int, int, int], use_bias: int) -> dict[str, Reference]:
    """Transposed convolution: torch's conv_transpose2d with no padding (the
    full output), then `pads` = (left, right, up, down) cut off each side; a
    negative pad appends zero rows or columns instead. The bias is added last.

    Reductions: FW at most Ci*ceil(Hk/sh)*ceil(Wk/sw) products (+1 bias), WG
    H*W, db Ho*Wo, IG at most Co*Hk*Wk."""
    _check_step(step)
    if hwc:
        Ci, Hk, Wk, Co = inputs["W"].shape
    else:
        Ci, Co, Hk, Wk = inputs["W"].shape
    H, W = inputs["x"].shape[:2] if hwc else inputs["x"].shape[1:]
    sh, sw = stride
    left, right, up, down = pads

    def forward(x, W, b):
        kernel = W.permute(0, 3, 1, 2) if hwc else W
        full = F.conv_transpose2d(_chw(x, hwc), kernel, stride=stride)
        out = F.pad(full, (-left, -right, -up, -down))
        if use_bias:
            out = out + b.reshape(1, Co, 1, 1)
        return _layout(out, hwc)

    Ho = transposed_output_size(H, Hk, sh, up, down)
    Wo = transposed_output_size(W, Wk, sw, left, right)
    outputs = _outputs(step, {"fw": {"y": Ci * math.ceil(Hk / sh) * math.ceil(Wk / sw) + use_bias},
                              "wg": {"dW": H * W, **({"db": Ho * Wo} if use_bias else {})},
                              "ig": {"dx": Co * Hk * Wk}})
    return _references(forward, {k: inputs[k] for k in ("x", "W", "b", "dy")}, outputs)
