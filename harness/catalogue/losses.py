"""Catalogue of the losses (MSE, L1, berHu, CrossEntropy; FW and BW) and of
the optimizer (plain gradient descent, "sgd").

Losses: single core (the API runs them on one core), so cores (1,) only.
Vectors of N elements: 1, sizes around the unroll factors a library may use
(2, 3, 7, 8, 9, 16, 17), realistic 10- and 12-class cross-entropies and a
1000-element MSE. Inputs are the entry's own where the uniform [-1, 1) ones
lack the values that matter (golden/losses.py, edge_inputs; a flag in the
shape names the pattern): large logits past expf's overflow (the max
subtraction), all-equal logits, soft targets, targets summing to 0 (S -> 1),
berHu ties d == c and o == t everywhere (c == 0).

Optimizer: a per-core body that the runner forks (cores 1, 3, 8) over
weight counts around the core counts and a realistic 1000 + 32 layer.
learning rate and lambda travel as millionths (ops_optim.c).

No matmul: every case has the single variant "direct" per core count.
"""
from __future__ import annotations

import numpy as np

from golden import losses
from golden.bundle import Reference
from golden.formats import format_named
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes

STEPS = ("fw", "bw")

_SIZES = tuple(dict(N=n) for n in (1, 2, 3, 7, 8, 9, 16, 17))

MSE_SHAPES = _SIZES + (
    dict(N=17, equal=1),        # o == t: loss and gradient exactly 0
    dict(N=1000),               # realistic: a 10x10x10 map (fp32 and fp16 only, see _applies)
)
L1_SHAPES = _SIZES + (
    dict(N=9, equal=1),         # o == t everywhere: sign 0, gradient exactly 0
    dict(N=17, ties=1),         # o == t at some elements among others
)
BERHU_SHAPES = _SIZES + (
    dict(N=9, equal=1),         # c == 0: loss and gradient 0
    dict(N=17, ties=1),         # d == c exactly for alpha 0.5 and 1 (dyadic d)
)
CE_SHAPES = _SIZES + (
    dict(N=10), dict(N=12),     # realistic 10- and 12-class heads, one-hot targets
    dict(N=10, large_logits=1),  # |o| up to 100: needs the max subtraction
    dict(N=12, equal_logits=1),  # softmax exactly 1/N
    dict(N=10, soft_target=1),
    dict(N=10, zero_target=1),   # S = 0 -> 1
    dict(N=12, zero_sum_target=1),  # +-1/2: S exactly 0 -> 1
    # Every term alive (issue 25): S = sum t neither 0 nor 1, so that the
    # gradient's factor S shows; the maximum first, in the middle and last.
    dict(N=10, heavy_target=1),  # S about 2.5
    dict(N=7, signed_target=1),  # S of either sign
    dict(N=9, max_first=1), dict(N=9, max_middle=1), dict(N=9, max_last=1),
    dict(N=16, heavy_target=1, max_last=1),
)

# berHu's alpha in thousandths (ops_losses.c): the usual 0.2 (not exact in
# any format), and 0.5 and 1 for the ties.
BERHU_ALPHAS_MILLI = (200, 500, 1000)

# (nw, nb): weights and biases of a layer.
SGD_SHAPES = tuple(dict(nw=nw, nb=nb) for nw, nb in (
    (1, 1),         # one element: 2 of 3 cores and 7 of 8 get nothing
    (7, 3),         # fewer weights than 8 cores
    (8, 8),         # a multiple of 8, not of 3
    (17, 5),        # b = ceil(17/8) = 3: core 5 short, 6 and 7 idle
    (1000, 32),     # realistic: a 32x31 linear layer (minus 8) and its bias
))
SGD_OPTIONS = {
    "use_biases": (0, 1),
    "lr_micro": (10000, 500000),        # 0.01 (not exact in any format) and 0.5
    "lambda_micro": (0, 1000, 100000),  # no decay, a realistic 0.001, a strong 0.1
}




def _loss_inputs(c) -> dict[str, tuple[int, ...]]:
    return {"o": (c.shape["N"],), "t": (c.shape["N"],)}


def _loss_params(c) -> dict[str, int]:
    params = {"N": c.shape["N"], "step": c.step_code}
    if c.entry.name == "berhu_loss":
        params["alpha_milli"] = c.options["alpha_milli"]
    return params


def _loss_footprint(c) -> dict[str, int]:
    """The buffers ops_losses.c allocates, as the primitive uses them: o and
    t; FW the one-element loss, BW the gradient."""
    size, n = element_bytes(c.dtype), c.shape["N"]
    out = {"output": n * size, "target": n * size}
    if c.step == "fw":
        out["loss"] = size
    else:
        out["output_grad"] = n * size
    return out


def _applies(c) -> bool:
    # bfloat16 sums of more than ~100 terms have no useful error bound
    # (README, "Not supported"): the 1000-element MSE runs in fp32 and fp16.
    return not (c.dtype == "bf16" and c.shape["N"] > 100)


def _left_alone(reference):
    """The loss's references, and o and t as the call must leave them:
    "fw writes only *wr_loss, bw only overwrites output->diff"
    (TRAINLIB_API_MORE.md); reduction 0, so bit for bit."""
    def references(c, inputs):
        return {**reference(c, inputs), **{f"{name}_after": Reference(inputs[name], np.abs(inputs[name]), 0)
                                           for name in ("o", "t")}}
    return references


def _loss_entry(name: str, reference, shapes, options=None, tolerance_scale=None) -> OpEntry:
    return OpEntry(
        name=name,
        unit="losses",
        runner_op=lambda dtype: f"{name}_{build_of(dtype)}",
        steps=STEPS,
        dtypes=DTYPES,
        shapes=shapes,
        options=options or {},
        applies=_applies,
        inputs=_loss_inputs,
        params=_loss_params,
        input_values=lambda c, inputs: losses.edge_inputs(name, c.shape, inputs, format_named(c.dtype)),
        reference=_left_alone(reference),
        cores=(1,),
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
        footprint=_loss_footprint,
        tolerance_scale=tolerance_scale or {},
    )


MSE = _loss_entry("mse_loss", lambda c, inputs: losses.mse(inputs, c.step), MSE_SHAPES)
L1 = _loss_entry("l1_loss", lambda c, inputs: losses.l1(inputs, c.step), L1_SHAPES)
BERHU = _loss_entry(
    "berhu_loss",
    lambda c, inputs: losses.berhu(inputs, c.step, losses.milli_value(c.options["alpha_milli"],
                                                                      format_named(c.dtype))),
    BERHU_SHAPES,
    options={"alpha_milli": BERHU_ALPHAS_MILLI},
)
CROSSENTROPY = _loss_entry(
    "ce_loss",
    lambda c, inputs: losses.crossentropy(inputs, c.step, format_named(c.dtype)),
    CE_SHAPES,
    # Reduction (golden/losses.py, crossentropy): FW 2N + A + 4 and BW
    # X + 2N + A + 4 binary32 roundings, X = max o - min o, A = min(X, (N-1)/e):
    # the rounded o_i - m is off by u|o_i - m| <= uX, which expf turns into a
    # relative error of expf(x_i) (so a large logit range costs X roundings
    # in the gradient, and at most (N-1)/e in the sum whose largest term is 1).
    # That count takes expf and logf as correctly rounded (half an ulp). They
    # are within one ulp, i.e. a relative 2u (measured 2026-11-24 against
    # binary64 log/exp, logf on every 251st float of [2^-10, 2^24), expf on
    # every 97th of [-104, 0] with a normal result: glibc on host logf 0.797,
    # expf 0.502 ulp; picolibc on QEMU logf 0.836, expf 0.881 ulp), one u
    # more each: FW, expf in Se (relative to LM T) and logf (relative to
    # |log Se| <= LM); BW, expf in the numerator and in Se: 2 more roundings
    # in both steps. The bound is linear in gamma(n), so the factor is
    # gamma(n + 2)/gamma(n) = ((n + 2)/n)(1 - nu)/(1 - (n + 2)u) at the
    # smallest n, 6 (N = 1, X = 0): (4/3)(1 - 6u)/(1 - 8u) < 1.334
    # (u = 2^-24); the underflow part (eta per op) is scaled alike.
    # fp16, bf16: the library computes in binary32 and rounds once; the
    # reference's reduction 2 in the format's units already holds the whole
    # binary32 error with expf/logf at one ulp (golden/losses.py, _in_format,
    # checks gamma32(n + 2) <= u of the format for every case). No factor.
    tolerance_scale={"fp32": 1.334},
)


def _sgd_inputs(c) -> dict[str, tuple[int, ...]]:
    nw, nb = c.shape["nw"], c.shape["nb"]
    return {"w": (nw,), "dw": (nw,), "b": (nb,), "db": (nb,)}


def _sgd_params(c) -> dict[str, int]:
    return {"nw": c.shape["nw"], "nb": c.shape["nb"], **c.options}


def _sgd_footprint(c) -> dict[str, int]:
    """Weights and their gradients, biases and theirs (given whole without use_biases too)."""
    size = element_bytes(c.dtype)
    return {"weights": c.shape["nw"] * size, "weight_grads": c.shape["nw"] * size,
            "biases": c.shape["nb"] * size, "bias_grads": c.shape["nb"] * size}


def _sgd_reference(c, inputs):
    fmt = format_named(c.dtype)
    o = c.options
    return losses.sgd(inputs, o["use_biases"], losses.micro_value(o["lr_micro"], fmt),
                      losses.micro_value(o["lambda_micro"], fmt))


SGD = OpEntry(
    name="sgd",
    unit="optim",
    runner_op=lambda dtype: f"sgd_{build_of(dtype)}",
    steps=("update",),
    dtypes=DTYPES,
    shapes=SGD_SHAPES,
    options=SGD_OPTIONS,
    inputs=_sgd_inputs,
    params=_sgd_params,
    reference=_sgd_reference,
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=_sgd_footprint,
)

ENTRIES = [MSE, L1, BERHU, CROSSENTROPY, SGD]
