"""References for the CORDIC cosine and sine (harness/runtime/runner/ops_cordic.c):
exact cos and sin of the angle in float64; the catalogue entry states the
approximation's bound, inherited by every element (Reference.propagated).

Range reduction: the angle minus 2 pi k and the fold by pi are two or three
binary32 operations on values up to |angle|, and pi itself is rounded: at
most 4 u32 |angle| of angle error, which moves cos and sin by as much
(1-Lipschitz). FP16/bf16 round the binary32 result once more: reduction 1
relative to |cos|, |sin|.
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat

U32 = 2.0 ** -24


def cordic(inputs: dict[str, np.ndarray], fmt: NumberFormat, bound: float) -> dict[str, Reference]:
    angle = inputs["angle"]
    inherited = bound + 4 * U32 * np.abs(angle)
    n = 0 if fmt.bits == 32 else 1
    out = {}
    for name, value in (("cos", np.cos(angle)), ("sin", np.sin(angle))):
        out[name] = Reference(value, np.abs(value), n, propagated=inherited)
    return out


def angles(inputs: dict[str, np.ndarray], fmt: NumberFormat) -> dict[str, np.ndarray]:
    """Angles in [-10, 10) with the edges 0, +-pi/2, +-pi, 7 (beyond pi) on the grid."""
    a = inputs["angle"]
    i = np.arange(a.size)
    edges = np.array([0.0, np.pi / 2, -np.pi / 2, np.pi, -np.pi, 7.0])
    return dict(inputs, angle=np.where(i % 3 == 2, fmt.round(edges[(i // 3) % len(edges)]), fmt.round(10 * a)))
