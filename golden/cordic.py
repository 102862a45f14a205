"""References for the CORDIC cosine and sine (harness/runtime/runner/ops_cordic.c):
exact cos and sin of the angle in float64; the catalogue entry states the
approximation's bound, inherited by every element (Reference.propagated).

Range reduction: the angle minus 2 pi k and the fold by pi are two or three
binary32 operations on values up to |angle|, and pi itself is rounded: at
most 4 u32 |angle| of angle error, which moves cos and sin by as much
(1-Lipschitz).

FP16/bf16: the API page gives the FP16 twin its rotation count and gain
but neither an error bound nor binary32 arithmetic, so the bound is that of
every step rounded to the format (unit roundoff u), added to the catalogue's
residual-angle bound:
- range reduction in the format, pi rounded: u (4 |angle| + 4 pi) of angle;
- z: 14 rounded arctangent constants (their sum is 1.75, so 1.75 u) and 14
  subtractions of values within pi/2 (22 u): 24 u of angle;
- x, y: 14 rotations, two roundings each of components within the vector's
  norm (at most 1 / K = 1.6468 before the gain), each error grown by the
  later rotations by at most 1.6468 and scaled by K = 0.6073 at the end:
  14 sqrt(2) u 1.6468 = 32.6 u, and the gain's product and constant 2 u:
  35 u.
cos and sin move by at most the angle's error (1-Lipschitz): in all
u (4 |angle| + 4 pi + 60), absolute; with u = 2^-8 (bf16) a weak check, as
weak as an FP16 CORDIC computed in its own format is.
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat

U32 = 2.0 ** -24


def cordic(inputs: dict[str, np.ndarray], fmt: NumberFormat, bound: float) -> dict[str, Reference]:
    angle = inputs["angle"]
    if fmt.bits == 32:
        inherited = bound + 4 * U32 * np.abs(angle)
    else:
        inherited = bound + fmt.unit_roundoff * (4 * np.abs(angle) + 4 * np.pi + 60)
    n = 0
    out = {}
    for name, value in (("cos", np.cos(angle)), ("sin", np.sin(angle))):
        out[name] = Reference(value, np.abs(value), n, propagated=inherited)
    return out


def angles(inputs: dict[str, np.ndarray], fmt: NumberFormat) -> dict[str, np.ndarray]:
    """The edges 0, +-pi/2, +-pi and 7 (beyond pi) at every third element; the
    others sweep the reduced angle's whole period [-pi, pi) in equal strata,
    one random angle in each, moved by -2 pi, 0 or +2 pi in turn (so the
    angles lie in [-3 pi, 3 pi)). Every part of the period is reached, not
    only where random draws fall: a fold at -pi/3 instead of -pi/2 sends
    (-1.40, -1.05) past CORDIC's convergence range of 1.74 rad, and 43
    uniform draws over [-10, 10) missed that interval (the mutation bench's
    seed 10); here, at n = 64, every interval of the period wider than two
    strata (4 pi / 43 = 0.29) holds an angle."""
    a = inputs["angle"]
    i = np.arange(a.size)
    edges = np.array([0.0, np.pi / 2, -np.pi / 2, np.pi, -np.pi, 7.0])
    swept = i - (i + 1) // 3                     # 0, 1, 2, ... over the elements that are not edges
    strata = max(1, a.size - (a.size + 1) // 3)  # how many are not
    reduced = -np.pi + 2 * np.pi * (swept + (a.reshape(-1) + 1) / 2) / strata
    turn = 2 * np.pi * (swept % 3 - 1)
    return dict(inputs, angle=np.where(i % 3 == 2, fmt.round(edges[(i // 3) % len(edges)]),
                                       fmt.round(reduced + turn)).reshape(a.shape))
