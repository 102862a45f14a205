"""References for the activations family: ReLU, LeakyReLU and Sigmoid, FW and BW.

Every tensor is a flat vector of n elements. Values come from float64 torch
on inputs already on the device's grid, with the formulas of the API page
(shared/TRAINLIB_API_MORE.md, "Activations"):

- ReLU:      y = x > 0 ? x : 0,      dx = x > 0 ? dy : 0 (so 0 at x == 0)
- LeakyReLU: y = x > 0 ? x : s*x,    dx = x > 0 ? dy : s*dy
- Sigmoid:   y = 1/(1 + e^-x),       dx = dy * y * (1 - y), y read from the
             forward output (the input tensor "y"), not recomputed from x.

Reduction lengths count the rounded operations behind one element, as the
library performs them (lib_c/include/pulp_act_fp32.h):

- ReLU FW and BW: selections and copies, exact (0).
- LeakyReLU: one rounded product s*x (s*dy) where x <= 0; where x > 0 the
  element is a copy, so its magnitude is 0 and the bound there is below half
  the smallest subnormal, i.e. bit exact. Reduction 1.
- Sigmoid FW: exp, add and divide (3), in every format: the API page does
  not say that the FP16 twin computes in binary32, so a library may round
  each step to fp16/bf16 (expf's own error beyond half an ulp is the
  catalogue entry's tolerance_scale, where it needs one). Magnitude |y|:
  each rounding is relative to the value it produces, and the argument in
  harness/catalogue/act.py shows the result stays within that of |y|.
- Sigmoid BW: 1 - y, y*(1-y) and dy*(...), each rounded once relative to
  its own exact value: 3, magnitude |dx|.

Inputs: the seeded uniform tensors in [-1, 1) do not contain the values that
matter here, so `edge_inputs` maps them (deterministically, staying on the
grid) to the entry's own: exact +0 and -0 among negatives and positives for
ReLU/LeakyReLU, saturating x in [-87.5, 104] for Sigmoid, and the Sigmoid BW's y
as the rounded sigmoid of x (so y is in [0, 1], exactly 1 where saturated).
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat
from golden.lazy_torch import torch

# Sigmoid inputs placed at every third element: saturation on both sides
# (+90 and +104 give exactly 1), results that are binary32 subnormals
# (x < -87.3), and 0. Not below -87.5: there the API's documented
# 1/(1+expf(-x)) overflows expf to inf and returns 0 where the true value is
# a subnormal (2.9e-39 at -88.75). The error model, rightly strict about
# subnormals, would call that documented behaviour wrong; it is no bug a
# training run can see. lib_c's form (expf(-|x|)) has no such overflow.
SIGMOID_EDGES = (-80.0, 90.0, -20.0, 20.0, -87.25, 0.0, -60.0, 104.0, -87.5, 17.0)


def _t(array: np.ndarray) -> torch.Tensor:
    return torch.tensor(array, dtype=torch.float64)


def edge_inputs(op: str, inputs: dict[str, np.ndarray], fmt: NumberFormat) -> dict[str, np.ndarray]:
    """The entry's inputs from the seeded uniform ones (on `fmt`'s grid, in
    [-1, 1)); every returned tensor is on the grid too."""
    out = dict(inputs)
    x = inputs["x"]
    i = np.arange(x.size).reshape(x.shape)
    if op in ("relu", "leakyrelu"):
        # x4 is exact (a power of two); +0 and -0 at fixed places, where the
        # gradient must be 0 (ReLU) or s*dy (LeakyReLU) although dy is not.
        x = np.where(i % 5 == 1, 0.0, np.where(i % 5 == 3, -0.0, 4.0 * x))
        out["x"] = x
    elif op == "sigmoid":
        edges = np.array(SIGMOID_EDGES)[(i // 3) % len(SIGMOID_EDGES)]
        x = np.where(i % 3 == 2, fmt.round(edges), fmt.round(8.0 * x))
        out["x"] = x
        out["y"] = fmt.round(torch.sigmoid(_t(x)).numpy())
    else:
        raise ValueError(f"no edge inputs for activation {op!r}; expected relu, leakyrelu or sigmoid")
    return out


def leaky_slope(slope_milli: int, fmt: NumberFormat) -> float:
    """negative_slope as the runner makes it (ops_act.c): the binary32 quotient
    slope_milli / 1000, rounded once more to fmt for fp16/bf16."""
    s32 = float(np.float32(slope_milli) / np.float32(1000.0))
    return s32 if fmt.bits == 32 else float(fmt.round(np.array(s32)))


def relu(inputs: dict[str, np.ndarray], step: str) -> dict[str, Reference]:
    """x, dy [n]; FW gives y, BW gives dx."""
    x, dy = _t(inputs["x"]), _t(inputs["dy"])
    positive = x > 0
    if step == "fw":
        y = torch.where(positive, x, torch.zeros_like(x)).numpy()
        return {"y": Reference(y, np.abs(y), 0)}
    if step == "bw":
        dx = torch.where(positive, dy, torch.zeros_like(dy)).numpy()
        return {"dx": Reference(dx, np.abs(dx), 0)}
    raise ValueError(f"relu has no step {step!r}; expected fw or bw")


def leakyrelu(inputs: dict[str, np.ndarray], step: str, slope: float) -> dict[str, Reference]:
    """x, dy [n], slope already on the format's grid; FW gives y, BW gives dx."""
    x, dy = _t(inputs["x"]), _t(inputs["dy"])
    positive = x > 0
    if step not in ("fw", "bw"):
        raise ValueError(f"leakyrelu has no step {step!r}; expected fw or bw")
    passed = x if step == "fw" else dy          # the tensor copied or scaled
    value = torch.where(positive, passed, slope * passed).numpy()
    magnitude = torch.where(positive, torch.zeros_like(passed), (slope * passed).abs()).numpy()
    return {("y" if step == "fw" else "dx"): Reference(value, magnitude, 1)}


def sigmoid(inputs: dict[str, np.ndarray], step: str, dtype: str) -> dict[str, Reference]:
    """FW: x [n] gives y. BW: y (the forward output) and dy [n] give dx."""
    if step == "fw":
        y = torch.sigmoid(_t(inputs["x"])).numpy()
        return {"y": Reference(y, np.abs(y), 3)}
    if step == "bw":
        y, dy = _t(inputs["y"]), _t(inputs["dy"])
        dx = (dy * y * (1.0 - y)).numpy()
        return {"dx": Reference(dx, np.abs(dx), 3)}
    raise ValueError(f"sigmoid has no step {step!r}; expected fw or bw")


# ---- GELU, tanh, SwiGLU (forward only; per-core bodies the caller forks) ----
#
# GELU: the API page gives the formula (a rational tanh, constants and
# clamp); the reference is that formula in float64, with the roundings of an
# evaluation in the case's format (GELU_ROUNDINGS). tanh: the API documents
# an approximation through a fast exponential whose bits are not portable;
# the reference is the exact tanh in float64, and the entry's documented
# bound is inherited by every element (Reference.propagated). SwiGLU is
# exact math with expf: in fp32 expf (one ulp: 2u), 1 + e, the
# reciprocal's quotient and two products: 6 roundings relative to |out|
# (each is relative to its own result, and 1 + e adds positive terms); in
# fp16/bf16 one rounding of a binary32 result whose error is below the
# format's u: 2.

GELU_EDGES = (0.0, 3.7924, -3.7924, 50.0, -50.0, 0.5, -0.5)   # 3.79: where the approximation is worst
TANH_EDGES = (0.0, 20.0, -20.0, 50.0, -50.0, 0.25, -0.25)


def gelu_edge_inputs(inputs: dict[str, np.ndarray], op: str, fmt: NumberFormat) -> dict[str, np.ndarray]:
    """x spread over [-8, 8) with the op's edge values at every third element;
    SwiGLU's gate b stays uniform."""
    x = inputs["x"]
    i = np.arange(x.size).reshape(x.shape)
    edges = {"gelu": GELU_EDGES, "tanh": TANH_EDGES, "swiglu": (0.0, 4.0, -4.0)}[op]
    chosen = np.array(edges)[(i // 3) % len(edges)]
    return dict(inputs, x=np.where(i % 3 == 2, fmt.round(chosen), fmt.round(8.0 * x)))


# GELU evaluated step by step in the case's format (the API page gives
# pulp_gelu_fp16_fw_cl the FP32 formula and does not say it computes in
# binary32; a compiler may contract a product and a sum into one fused
# operation, which rounds once where two are counted here). Roundings along
# the longest chain, each constant rounded to the format once more:
# u = 0.7978(x + 0.044715 x^3): x^3 2, the constant and its product 2, the
# sum 1, 0.7978 and its product 2: 7, relative (x and 0.044715 x^3 have one
# sign). The numerator u (135135 + 17325 u^2 + 378 u^4
# + u^6), powers taken as plain products (u^6: 5), constant and product 2,
# three sums of positive terms 3, the product by u 1: 11; the denominator
# 10; the quotient 1. t's sensitivity to u, |d ln t / d ln u|, is at most 1
# (at most 0.99999999977 on (0, 4.97], found on a 2e6-point grid; beyond,
# t is clamped to 1, which only moves it less), so t is within g(7 + 11 +
# 10 + 1) = g(29) of the formula's value, relative. y = 0.5 x t + 0.5 x: a
# product and a sum, 2 more, on magnitude 0.5 |x| (|t| + 1) <= |x|. So
# reduction 31 on magnitude |x| (loose where y is small: 1 - |t| cancels).
# A library that computes the FP16 twin in binary32 and rounds once is far
# inside it. The reference is the formula itself, not tanh-GELU: the page
# gives its constants, and a bound of 2e-4 off tanh-GELU (the formula's own
# distance, 1.82e-4 at x = 3.79) would hide a wrong constant, e.g. 3150 read
# as 3151 (bench/mutation_score.py seed 4, 1.87e-4 off tanh-GELU). In FP32
# the tolerance is 31 u |x|: 1.5e-5 at |x| = 8.
GELU_ROUNDINGS = 31


def gelu(inputs: dict[str, np.ndarray]) -> dict[str, Reference]:
    """The page's own formula in float64, clamp included."""
    x = inputs["x"].astype(np.float64)
    u = 0.7978 * (x + 0.044715 * x ** 3)
    u2 = u * u
    t = u * (135135 + 17325 * u2 + 378 * u2 ** 2 + u2 ** 3) / (135135 + 62370 * u2 + 3150 * u2 ** 2 + 28 * u2 ** 3)
    y = 0.5 * x * np.clip(t, -1.0, 1.0) + 0.5 * x
    return {"y": Reference(y, np.abs(x), GELU_ROUNDINGS)}


def tanh(inputs: dict[str, np.ndarray], bound: float) -> dict[str, Reference]:
    y = torch.tanh(_t(inputs["x"])).numpy()
    return {"y": Reference(y, np.abs(y), 0, propagated=np.full_like(y, bound))}


def swiglu(inputs: dict[str, np.ndarray], fmt: NumberFormat) -> dict[str, Reference]:
    a, b = _t(inputs["x"]), _t(inputs["b"])
    out = (a * torch.sigmoid(a) * b).numpy()
    return {"y": Reference(out, np.abs(out), 6 if fmt.bits == 32 else 2)}
