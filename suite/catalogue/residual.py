"""Catalogue of the residual connection: the forward sum (fw), the sum node's
backward (sumnode_bw: skip->diff += output->diff, unless skip_in_grad) and
the residual backward (bw: lout->diff = output->diff).

Flat vectors of n elements, forked inside the primitive over blocks of
ceil(n / cores): sizes around the core counts (1, 3, 8) and unroll factors,
a prime and a realistic 1000-element map. n >= 2, since `mismatch` makes a
blob one element short: then the call must print and write nothing, and
every output must hold exactly what it held before.
"""
from __future__ import annotations

from golden import residual
from harness.cases import OpEntry

STEPS = ("fw", "sumnode_bw", "bw")
SHAPES = tuple(dict(n=n) for n in (2, 3, 7, 8, 9, 17, 1000))


def _inputs(c) -> dict[str, tuple[int, ...]]:
    n = (c.shape["n"],)
    return {"skip": n, "lout": n, "dy": n, "dskip": n, "old": n}


def _params(c) -> dict[str, int]:
    return {"n": c.shape["n"], "step": STEPS.index(c.step), **c.options}


def _applies(c) -> bool:
    return c.step == "sumnode_bw" or c.options["skip_in_grad"] == 0   # the flag is the sum node's


def _footprint(c) -> dict[str, int]:
    """The blobs the step touches: FW skip, lout, output; BW output->diff and
    the gradient it writes or adds to."""
    size = (4 if c.dtype == "fp32" else 2) * c.shape["n"]
    if c.step == "fw":
        return {"skip": size, "lout": size, "output": size}
    return {"output_grad": size, ("skip_grad" if c.step == "sumnode_bw" else "lout_grad"): size}


RESIDUAL = OpEntry(
    name="residual",
    unit="residual",
    runner_op=lambda dtype: "residual_fp32" if dtype == "fp32" else "residual_fp16",
    steps=STEPS,
    dtypes=("fp32", "fp16", "bf16"),
    shapes=SHAPES,
    options={"skip_in_grad": (0, 1), "mismatch": (0, 1)},
    applies=_applies,
    inputs=_inputs,
    params=_params,
    reference=lambda c, inputs: residual.residual(inputs, c.step, c.options["skip_in_grad"],
                                                  c.options["mismatch"]),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=_footprint,
)

ENTRIES = [RESIDUAL]
