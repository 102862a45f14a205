"""Catalogue of the residual connection: the forward sum (fw), the sum node's
backward (sumnode_bw: skip->diff += output->diff, unless skip_in_grad) and
the residual backward (bw: lout->diff = output->diff).

Flat vectors of n elements, forked inside the primitive over blocks of
ceil(n / cores): sizes around the core counts (1, 3, 8) and unroll factors,
a prime and a realistic 1000-element map. n >= 2, since `mismatch` makes a
blob one element short: then the call must print and write nothing, and
every output must hold exactly what it held before.

Every size check the API names is exercised on its own, inputs and outputs
alike (issue 25): `mismatch` 1 shortens the blob the step combines with the
output (FW and BW: lout; sum node: skip), 2 the output blob, 3 skip (FW,
which checks all three). A short FW output is also a short, guarded buffer:
a call that sums over another blob's dim breaks its guard words. The API
says such a call prints and returns: each variant's run must print a line
(`prints`).
"""
from __future__ import annotations

from golden import residual
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes

STEPS = ("fw", "sumnode_bw", "bw")
SHAPES = tuple(dict(n=n) for n in (2, 3, 7, 8, 9, 17, 1000))


def _inputs(c) -> dict[str, tuple[int, ...]]:
    n = (c.shape["n"],)
    return {"skip": n, "lout": n, "dy": n, "dskip": n, "old": n}


def _params(c) -> dict[str, int]:
    return {"n": c.shape["n"], "step": c.step_code, **c.options}


MISMATCH_NONE, MISMATCH_COMBINED, MISMATCH_OUTPUT, MISMATCH_SKIP = range(4)   # ops_residual.c's mismatch


def _applies(c) -> bool:
    if c.step != "fw" and c.options["mismatch"] == MISMATCH_SKIP:
        return False   # the sum node's combined blob is skip already; the residual BW has no skip
    return c.step == "sumnode_bw" or c.options["skip_in_grad"] == 0   # the flag is the sum node's


def _footprint(c) -> dict[str, int]:
    """The blobs the step touches: FW skip, lout, output; BW output->diff and
    the gradient it writes or adds to."""
    size = element_bytes(c.dtype) * c.shape["n"]
    if c.step == "fw":
        return {"skip": size, "lout": size, "output": size}
    return {"output_grad": size, ("skip_grad" if c.step == "sumnode_bw" else "lout_grad"): size}


RESIDUAL = OpEntry(
    name="residual",
    unit="residual",
    runner_op=lambda dtype: f"residual_{build_of(dtype)}",
    steps=STEPS,
    dtypes=DTYPES,
    shapes=SHAPES,
    options={"skip_in_grad": (0, 1), "mismatch": (MISMATCH_NONE, MISMATCH_COMBINED, MISMATCH_OUTPUT, MISMATCH_SKIP)},
    applies=_applies,
    inputs=_inputs,
    params=_params,
    reference=lambda c, inputs: residual.residual(inputs, c.step, c.options["skip_in_grad"],
                                                  c.options["mismatch"]),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=_footprint,
    prints=lambda c: c.options["mismatch"] != MISMATCH_NONE and not (c.step == "sumnode_bw" and c.options["skip_in_grad"]),
)

ENTRIES = [RESIDUAL]
