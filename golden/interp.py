"""References for the interpolation (harness/runtime/runner/ops_interp.c),
from shared/TRAINLIB_API_MORE.md ("Interpolation"), in float64.

Nearest: source index min(floor(o * in / out), in - 1), in integers as the
API states it: the output is an exact copy.

Bilinear: torch's interpolate(mode="bilinear", align_corners=False). The
device's output is a weighted sum of four values, each term rounded at most
6 times (the weight 1 - l, two products, the sums): magnitude sum |w v|,
reduction 6. Its source coordinate s = (o + 0.5)(in / out) - 0.5 takes 3
binary32 roundings, so it is off by at most 4u(s + 1) (u = 2^-24). The
output is a continuous, piecewise linear function of each coordinate whose
slope is at most 2 max|v| of its channel (also across a cell boundary, where
the device may pick the neighbouring cell), so each coordinate adds
4u(s + 1) 2 max|v| to the bound, propagated. A flag that is off leaves its
output as it was (y0, g0): exact.
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.lazy_torch import torch

U32 = 2.0 ** -24


def _nearest_index(n_in: int, n_out: int) -> np.ndarray:
    return np.minimum(np.arange(n_out) * n_in // n_out, n_in - 1)


def _exact_source(n_in: int, n_out: int) -> np.ndarray:
    return np.maximum((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0.0)


def _resample(x: np.ndarray, C: int, Hi: int, Wi: int, Ho: int, Wo: int, bilinear: bool) -> Reference:
    x = x.reshape(C, Hi, Wi)
    if not bilinear:
        y = x[:, _nearest_index(Hi, Ho)][:, :, _nearest_index(Wi, Wo)]
        return Reference(y.ravel(), np.abs(y).ravel(), 0)
    t = torch.tensor(x, dtype=torch.float64)[None]
    y = torch.nn.functional.interpolate(t, size=(Ho, Wo), mode="bilinear", align_corners=False)[0].numpy()
    magnitude = torch.nn.functional.interpolate(t.abs(), size=(Ho, Wo), mode="bilinear",
                                                align_corners=False)[0].numpy()   # sum |w v|: the weights are >= 0
    slope = 2 * np.abs(x).max(axis=(1, 2))[:, None, None]
    coordinate = 4 * U32 * ((_exact_source(Hi, Ho) + 1)[None, :, None] + (_exact_source(Wi, Wo) + 1)[None, None, :])
    return Reference(y.ravel(), magnitude.ravel(), 6, propagated=(slope * coordinate).ravel())


def interpolation(inputs: dict[str, np.ndarray], C: int, Hi: int, Wi: int, Ho: int, Wo: int, bilinear: bool,
                  data: int, grad: int) -> dict[str, Reference]:
    def unchanged(old: np.ndarray) -> Reference:
        return Reference(old.copy(), np.abs(old), 0)
    return {
        "y": _resample(inputs["x"], C, Hi, Wi, Ho, Wo, bilinear) if data else unchanged(inputs["y0"]),
        "dy": _resample(inputs["g"], C, Hi, Wi, Ho, Wo, bilinear) if grad else unchanged(inputs["g0"]),
    }
