"""References for the residual connection (harness/runtime/runner/ops_residual.c).

  FW        y = skip + lout             one rounding, magnitude |skip| + |lout|
  sum node  dskip_new = dskip + dy      one rounding (skip_in_grad 0);
                                        dskip unchanged, exactly (1)
  BW        dlout = dy                  a copy, exact
A call whose blobs differ in size writes nothing: every output is then the
value it held before (old, dskip), exactly. mismatch 2 on the FW shortens
the output blob and its buffer: y then has n - 1 elements, old's first.
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference


def _sum(a: np.ndarray, b: np.ndarray) -> Reference:
    return Reference(a + b, np.abs(a) + np.abs(b), 1)


def _exact(a: np.ndarray) -> Reference:
    return Reference(a.copy(), np.abs(a), 0)


def residual(inputs: dict[str, np.ndarray], step: str, skip_in_grad: int, mismatch: int) -> dict[str, Reference]:
    if step == "fw":
        if mismatch == 2:   # the output blob one short: its buffer too
            return {"y": _exact(inputs["old"][:-1])}
        return {"y": _exact(inputs["old"]) if mismatch else _sum(inputs["skip"], inputs["lout"])}
    if step == "sumnode_bw":
        untouched = mismatch or skip_in_grad
        return {"dskip_new": _exact(inputs["dskip"]) if untouched else _sum(inputs["dskip"], inputs["dy"])}
    if step == "bw":
        return {"dlout": _exact(inputs["old"] if mismatch else inputs["dy"])}
    raise ValueError(f"residual has no step {step!r}; expected fw, sumnode_bw or bw")
