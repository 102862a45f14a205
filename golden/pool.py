"""References for the pooling family: average and max pooling, CHW, no padding.

Values come from float64 torch (avg_pool2d / max_pool2d, gradients by
autograd) on inputs already on the device's grid. Reduction lengths count the
rounded operations behind one output element, as the library performs them
(lib_c/include/pulp_pooling_fp32.h):

- average FW: Hk*Wk terms summed (Hk*Wk - 1 rounded additions, the first one
  adds to zero and is exact), then a product with 1/(Hk*Wk), which is itself
  rounded once: Hk*Wk + 1. The two extra roundings are there because the
  library multiplies by a rounded reciprocal instead of dividing.
- average BW: the output gradients of the (at most `cover`) windows that
  cover an input element are summed, then multiplied by the same rounded
  reciprocal: cover - 1 + 2 = cover + 1.
- max FW: a selection, exact (0).
- max BW: each input element receives the sum of the gradients of the windows
  that select it, accumulated from zero: (routed count - 1) rounded additions.
  The count is taken from torch's own routing on these inputs, so windows
  that do not overlap give 0: the gradient must be copied exactly. The page
  does not say which maximum of a tie takes the gradient, so max pooling's
  inputs have no ties (without_ties), and its BW also gets the FW's y.

Magnitudes: average is linear, so the same map on |inputs| gives sum |term|.
Max BW routes by x, so its magnitude routes |dy| by the same x.
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat
from golden.lazy_torch import F, torch


def _t(array: np.ndarray, grad: bool = False) -> torch.Tensor:
    return torch.tensor(array, dtype=torch.float64, requires_grad=grad)


def output_size(n: int, kernel: int, stride: int) -> int:
    return (n - kernel) // stride + 1


def without_ties(inputs: dict[str, np.ndarray], fmt: NumberFormat, Hk: int, Wk: int, Hs: int,
                 Ws: int) -> dict[str, np.ndarray]:
    """Max pooling's inputs: x with the values of each channel (no window
    crosses channels) distinct on fmt's grid, equal ones moved apart by the
    fewest ULPs in index order (at 16 bits the seeded values repeat), and y,
    the FW's output for that x (a selection: exact on the grid)."""
    x = np.stack([_distinct(channel, fmt) for channel in inputs["x"]])
    y = F.max_pool2d(_t(x[None]), (Hk, Wk), (Hs, Ws)).numpy()[0]
    return dict(inputs, x=x, y=y)


def _distinct(values: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    keys = fmt.ordered(fmt.to_bits(values.ravel()))           # integers one apart per ULP
    order = np.lexsort((np.arange(keys.size), keys))
    rank = np.arange(keys.size)
    distinct = np.maximum.accumulate(keys[order] - rank) + rank   # strictly increasing, each moved up the least
    sign = np.int64(1) << (fmt.bits - 1)
    flat = np.empty(keys.size)
    flat[order] = fmt.from_bits(np.where(distinct < 0, sign | -distinct, distinct))
    return flat.reshape(values.shape)


def max_cover(n: int, kernel: int, stride: int) -> int:
    """Most windows (start o*stride, length kernel) that contain one position."""
    n_out = output_size(n, kernel, stride)
    counts = np.zeros(n, dtype=np.int64)
    for o in range(n_out):
        counts[o * stride:o * stride + kernel] += 1
    return int(counts.max())


def _avg(x: np.ndarray, dy: np.ndarray, kernel, stride):
    xt = _t(x[None], True)
    y = F.avg_pool2d(xt, kernel, stride)
    y.backward(_t(dy[None]))
    return y.detach().numpy()[0], xt.grad.numpy()[0]


def _max(x: np.ndarray, dy: np.ndarray, kernel, stride):
    xt = _t(x[None], True)
    y = F.max_pool2d(xt, kernel, stride)
    y.backward(_t(dy[None]))
    return y.detach().numpy()[0], xt.grad.numpy()[0]


def avgpool(inputs: dict[str, np.ndarray], step: str, Hk: int, Wk: int, Hs: int, Ws: int) -> dict[str, Reference]:
    """x [C x H x W], dy [C x Ho x Wo]; FW gives y, BW gives dx."""
    x, dy = inputs["x"], inputs["dy"]
    kernel, stride = (Hk, Wk), (Hs, Ws)
    y, dx = _avg(x, dy, kernel, stride)
    y_mag, dx_mag = _avg(np.abs(x), np.abs(dy), kernel, stride)
    if step == "fw":
        return {"y": Reference(y, y_mag, Hk * Wk + 1)}
    if step == "bw":
        H, W = x.shape[1:]
        cover = max_cover(H, Hk, Hs) * max_cover(W, Wk, Ws)
        return {"dx": Reference(dx, dx_mag, cover + 1)}
    raise ValueError(f"avgpool has no step {step!r}; expected fw or bw")


def maxpool(inputs: dict[str, np.ndarray], step: str, Hk: int, Wk: int, Hs: int, Ws: int) -> dict[str, Reference]:
    """x [C x H x W], dy [C x Ho x Wo]; FW gives y, BW gives dx."""
    x, dy = inputs["x"], inputs["dy"]
    kernel, stride = (Hk, Wk), (Hs, Ws)
    y, dx = _max(x, dy, kernel, stride)
    if step == "fw":
        return {"y": Reference(y, np.abs(y), 0)}
    if step == "bw":
        _, dx_mag = _max(x, np.abs(dy), kernel, stride)
        _, routed = _max(x, np.ones_like(dy), kernel, stride)
        return {"dx": Reference(dx, dx_mag, max(int(routed.max()) - 1, 0))}
    raise ValueError(f"maxpool has no step {step!r}; expected fw or bw")
