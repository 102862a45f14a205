"""References for the RNN layer (harness/runtime/runner/ops_rnn.c), from the
formulas of shared/TRAINLIB_API_MORE.md ("RNN"), in float64 torch on inputs
already on the FP32 grid.

FW: y = tanh(z), z = X Wx + S Ws. The device sums the K + M products of an
element (K + M roundings of each term, one more for the stored z) and takes
tanh_prll of the rounded z. tanh is 1-Lipschitz, so z's rounding error
passes to y at most unchanged: magnitude |X||Wx| + |S||Ws|, reduction
K + M + 1. tanh_prll's documented distance from tanh (the catalogue entry
states it, with the rounding of its binary32 result included) is propagated.

BW: G = (1 - y^2) dy: three roundings, magnitude (1 + y^2)|dy|. Each
gradient is a sum of such terms times an input: dWx = X^T G and dWs = S^T G
sum N terms (N + 3 roundings per term), dX = G Wx^T sums M (M + 3).
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.lazy_torch import torch


def _t(a: np.ndarray, rows: int) -> torch.Tensor:
    return torch.tensor(a, dtype=torch.float64).reshape(rows, -1)


def forward_output(inputs: dict[str, np.ndarray], N: int, K: int, M: int) -> np.ndarray:
    """tanh(X Wx + S Ws), float64, N x M."""
    x, s, wx, ws = _t(inputs["x"], N), _t(inputs["s"], N), _t(inputs["wx"], K), _t(inputs["ws"], M)
    return torch.tanh(x @ wx + s @ ws).numpy()


def rnn(inputs: dict[str, np.ndarray], step: str, N: int, K: int, M: int, tanh_abs: float) -> dict[str, Reference]:
    x, s, wx, ws = _t(inputs["x"], N), _t(inputs["s"], N), _t(inputs["wx"], K), _t(inputs["ws"], M)
    if step == "fw":
        y = forward_output(inputs, N, K, M).ravel()
        magnitude = (x.abs() @ wx.abs() + s.abs() @ ws.abs()).numpy().ravel()
        return {"y": Reference(y, magnitude, K + M + 1, propagated=np.full_like(y, tanh_abs))}
    y, dy = _t(inputs["y"], N), _t(inputs["dy"], N)
    g = (1 - y * y) * dy
    g_mag = (1 + y * y) * dy.abs()
    return {
        "dwx": Reference((x.T @ g).numpy().ravel(), (x.abs().T @ g_mag).numpy().ravel(), N + 3),
        "dws": Reference((s.T @ g).numpy().ravel(), (s.abs().T @ g_mag).numpy().ravel(), N + 3),
        "dx": Reference((g @ wx.T).numpy().ravel(), (g_mag @ wx.abs().T).numpy().ravel(), M + 3),
    }
