"""Catalogue of the normalizations: InstanceNorm FW (running statistics
computed, or frozen and read), WG, IG and BW, FP32, FP16 and bf16.

Channels are split over the cores (blocks of ceil(C / cores)), so C sits
around the core counts 1, 3, 8; D = H*W runs from 1 (zero variance in every
channel) through small primes to a realistic 16 x 8 x 8 map. `constant`
shapes make their first channels constant (zero variance, sigma = 1e-5; see
golden/norm.py for why their bound stays tight). Channels come at three
scales (x1, x2, x4). The statistics the backward steps read are consistent
with x; the FW's are not x's own, so that a frozen FW must read them and an
unfrozen one must overwrite them (golden/norm.py, edge_inputs).

BatchNorm (self-forked over channels), LayerNorm (rows over the cores the
runner forks) and RMSNorm (self-forked partial sums; its bodies
sum_of_squares_fp32_cl and weighted_scaling_fp32_cl also on their own): FP32
FW, epsilon 1e-5, and 0.1 on one shape each (`eps_micro`), so that a
library that ignores eps[0] fails. NoNorm (rows over the cores): FW in fp32, fp16 and bf16
(pulp_nonorm_fp16_fw_cl, Nonorm_args_fp16, in the published headers). The
published headers also declare FP16 RMSNorm and interpolation, which are not
covered: the API does not say in which precision their sums and source
coordinates are computed.

InstanceNorm runs in fp32, fp16 and bf16. Two limits of the formats:
- IEEE fp16 cannot hold EPSILON = 1e-10 (it rounds to 0), so a zero-variance
  channel's variance is 0 wherever the FP16 twin computes or stores it in
  the format, and y divides 0 by 0. The page does not say in which precision
  the twin computes (lib_c uses binary32, so it would pass), so in fp16 those
  channels (D = 1, `constant` shapes) are not run at all.
- bfloat16: with 8 bits the bound of a channel sum over D > 16 values
  exceeds 10% and could not catch a wrong factor: those shapes run in fp32
  and fp16.
- The `offset` shape (channels with mean 4 and spread 1 to 4, so the
  documented E[x^2] - mu^2 cancels by up to ~50x): in fp32 its bound on
  sigma stays near 1e-4 relative; at fp16's or bf16's unit roundoff the
  error of the terms (~16 u D) exceeds the variance itself, so the formula
  guarantees nothing there and those cases are not generated.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from golden import norm
from golden.bundle import Reference
from golden.formats import format_named
from harness import core_split
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes

STEPS = ("fw", "wg", "ig", "bw")
SHAPES = (
    dict(C=1, H=1, W=1), dict(C=2, H=1, W=1),     # D = 1: every channel has zero variance
    dict(C=3, H=2, W=2), dict(C=7, H=3, W=3),
    dict(C=8, H=4, W=4), dict(C=9, H=4, W=4),     # around 8 cores: 9 leaves cores 5-7 without a channel
    dict(C=3, H=5, W=7),                          # prime sides, D = 35 not a power of two
    dict(C=8, H=4, W=4, constant=2),              # two zero-variance channels among others
    dict(C=3, H=8, W=8, constant=1),
    dict(C=16, H=8, W=8),                         # realistic
    dict(C=3, H=4, W=4, offset=4),                # mean 4: E[x^2] - mu^2 cancels ~6-50x (fp32 only)
    dict(C=3, H=4, W=4, stored=1),                # WG, IG, BW given statistics not x's own (edge_inputs)
)


def _inputs(c) -> dict[str, tuple[int, ...]]:
    s = c.shape
    return {"x": (s["C"], s["H"], s["W"]), "coeff": (2 * s["C"],), "dy": (s["C"], s["H"], s["W"]),
            "mean": (s["C"],), "var": (s["C"],), "stdev": (s["C"],)}


def _params(c) -> dict[str, int]:
    s = c.shape
    return {"C": s["C"], "H": s["H"], "W": s["W"], "step": c.step_code, **c.options}


def _footprint(c) -> dict[str, int]:
    """x and y (or dy and dx), gamma and beta (and their gradients), and the
    three running arrays."""
    s = c.shape
    size = element_bytes(c.dtype)
    n, nc = size * s["C"] * s["H"] * s["W"], size * s["C"]
    out = {"input": n, "coeff": 2 * nc, "running_stats": 3 * nc}
    if c.step == "fw":
        out["output"] = n
    else:
        out.update(output_grad=n, coeff_grad=2 * nc if c.step in ("wg", "bw") else 0,
                   input_grad=n if c.step in ("ig", "bw") else 0)
    return out


def _zero_variance(c) -> bool:
    return c.shape["H"] * c.shape["W"] == 1 or bool(c.shape.get("constant"))


def _applies(c) -> bool:
    if c.step == "fw" and c.shape.get("stored"):
        return False                    # the FW's statistics are never x's own (edge_inputs)
    if c.step != "fw" and c.options["frozen"]:
        return False                    # only the FW reads the flag
    if c.shape.get("offset") and c.dtype != "fp32":
        return False                    # 16-bit formats: the cancelling variance has no useful bound (below)
    if c.dtype == "fp16" and _zero_variance(c):
        return False                    # EPSILON is 0 in fp16 (above)
    return not (c.dtype == "bf16" and c.shape["H"] * c.shape["W"] > 16)


INSTNORM = OpEntry(
    name="instnorm",
    unit="norm",
    runner_op=lambda dtype: f"instnorm_{build_of(dtype)}",
    steps=STEPS,
    dtypes=DTYPES,
    shapes=SHAPES,
    options={"frozen": (0, 1)},
    applies=_applies,
    inputs=_inputs,
    params=_params,
    input_values=lambda c, inputs: norm.edge_inputs(inputs, c.shape["C"], c.shape.get("constant", 0), c.step,
                                                    format_named(c.dtype), c.shape.get("offset", 0),
                                                    foreign=bool(c.shape.get("stored"))),
    reference=lambda c, inputs: norm.instnorm(inputs, c.step, c.options["frozen"], c.shape["C"],
                                              format_named(c.dtype)),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=_footprint,
)

# InstanceNorm's BW with one half skipped ("`_bw_cl` = WG then IG unless
# skipped"): skip_wg_grad (skip 1) or skip_in_grad (skip 2) set, the
# skipped gradient given as a finite copy (dcoeff0, dx0) that must come
# back bit for bit, the other computed as in the BW.
SKIPPED = {1: "dcoeff", 2: "dx"}   # ops_norm.c's IN_SKIP_WG, IN_SKIP_IG


def _skip_reference(c, inputs):
    out = norm.instnorm(inputs, "bw", 0, c.shape["C"], format_named(c.dtype))
    name = SKIPPED[c.options["skip"]]
    start = inputs[f"{name}0"].reshape(out[name].value.shape)
    return {**out, name: Reference(start, np.abs(start), 0)}


INSTNORM_SKIP = replace(
    INSTNORM, name="instnorm_skip", runner_op=lambda dtype: f"instnorm_skip_{build_of(dtype)}", steps=("bw",),
    shapes=(dict(C=3, H=2, W=2), dict(C=9, H=4, W=4)), options={"frozen": (0,), "skip": tuple(SKIPPED)},
    inputs=lambda c: {**_inputs(c), "dcoeff0": (2 * c.shape["C"],), "dx0": (c.shape["C"], c.shape["H"], c.shape["W"])},
    reference=_skip_reference)


EPS_MICRO = 10      # 1e-5; a shape may give its own eps_micro
STRONG_EPS = dict(eps_micro=100000)   # 0.1: against a variance near 1/3, a hard-coded 1e-5 is 15% off


def _eps(c) -> float:
    """The case's epsilon, as the runner makes it: (float)eps_micro / 1e6f in binary32."""
    return float(np.float32(c.shape.get("eps_micro", EPS_MICRO)) / np.float32(1e6))


def _fw_entry(name: str, shapes, inputs, params, reference, cores=(1, 3, 8), split=None, unit="norm",
              dtypes=("fp32",)) -> OpEntry:
    return OpEntry(
        name=name,
        unit=unit,
        runner_op=lambda dtype: f"{name}_{build_of(dtype)}",
        steps=("fw",),
        dtypes=dtypes,
        shapes=shapes,
        inputs=inputs,
        params=params,
        reference=reference,
        cores=cores,
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
        footprint=lambda c: {"tensors": 2 * element_bytes(c.dtype) * sum(int(np.prod(t)) for t in inputs(c).values())},
        split=split,
    )


BATCHNORM = _fw_entry(
    "batchnorm", tuple(dict(B=b, C=c, H=h, W=w) for b, c, h, w in (
        (1, 1, 1, 1), (2, 3, 2, 2), (4, 8, 3, 3), (1, 9, 4, 4), (3, 2, 5, 7))) + (dict(B=2, C=3, H=2, W=2, **STRONG_EPS),),
    lambda c: {"x": (c.shape["B"] * c.shape["C"] * c.shape["H"] * c.shape["W"],), "coeff": (2 * c.shape["C"],)},
    lambda c: {"eps_micro": EPS_MICRO, **c.shape},
    lambda c, inputs: norm.batchnorm(inputs, c.shape["B"], c.shape["C"], format_named(c.dtype), _eps(c)))

LAYERNORM = _fw_entry(
    "layernorm", tuple(dict(rows=r, n=n) for r, n in ((1, 1), (3, 8), (8, 7), (9, 16), (16, 64)))
    + (dict(rows=3, n=8, **STRONG_EPS),),
    lambda c: {"x": (c.shape["rows"] * c.shape["n"],), "coeff": (2 * c.shape["n"],)},
    lambda c: {"eps_micro": EPS_MICRO, **c.shape},
    lambda c, inputs: norm.layernorm(inputs, c.shape["rows"], format_named(c.dtype), _eps(c)),
    split=core_split.rows())   # size / step_size rows over the cores

RMSNORM = _fw_entry(
    "rmsnorm", tuple(dict(n=n) for n in (1, 7, 8, 17, 1000)),
    lambda c: {"x": (c.shape["n"],), "coeff": (c.shape["n"],)}, lambda c: dict(c.shape),
    lambda c, inputs: norm.rmsnorm(inputs))

NONORM = _fw_entry(
    "nonorm", tuple(dict(rows=r, n=n) for r, n in ((1, 1), (3, 8), (9, 17), (16, 64))),
    lambda c: {"x": (c.shape["rows"] * c.shape["n"],), "coeff": (2 * c.shape["n"],)}, lambda c: dict(c.shape),
    lambda c, inputs: norm.nonorm(inputs, c.shape["rows"]), split=core_split.rows(),   # input->H rows
    unit="nonorm", dtypes=DTYPES)

# RMSNorm's per-core bodies, forked by the runner; sizes below, at and above
# the core counts. The partials of sum_of_squares are checked by their sum
# (ops_norm.c): the API fixes which core writes which slot, not the split.
RMS_BODY_SHAPES = tuple(dict(n=n) for n in (1, 2, 7, 8, 9, 17, 1000))

SUM_OF_SQUARES = _fw_entry(
    "sum_of_squares", RMS_BODY_SHAPES, lambda c: {"x": (c.shape["n"],)}, lambda c: dict(c.shape),
    lambda c, inputs: norm.sum_of_squares(inputs))

WEIGHTED_SCALING = _fw_entry(
    "weighted_scaling", RMS_BODY_SHAPES, lambda c: {"x": (c.shape["n"],), "coeff": (c.shape["n"] + 1,)},
    lambda c: dict(c.shape), lambda c, inputs: norm.weighted_scaling(inputs))

ENTRIES = [INSTNORM, INSTNORM_SKIP, BATCHNORM, LAYERNORM, RMSNORM, NONORM, SUM_OF_SQUARES, WEIGHTED_SCALING]
