"""Catalogue of the CORDIC cosine and sine: angles sweeping the reduced
period [-pi, pi) in equal strata, moved by whole turns into [-3 pi, 3 pi),
and the edges 0, +-pi/2, +-pi and 7 (range reduction), one call per angle
(golden/cordic.py, angles).
"""
from __future__ import annotations

import math

from golden import cordic
from golden.formats import format_named
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of

# FP32, 12 rotations: within 5e-4 (shared/TRAINLIB_API_MORE.md, "Tensor
# utilities"); the residual angle after 12 rotations is below atan(2^-11) =
# 4.88e-4, measured here on 20001 angles of [-10, 10]: 4.8806e-4.
# FP16/bf16, 14 rotations: the API states no bound. The residual angle is
# below atan(2^-13) = 1.2207e-4; 14 binary32 rotations would add at most 56
# roundings of 2^-24 relative to the vector (norm 1): 3.4e-6, so 1.26e-4.
# The API does not promise binary32, so golden/cordic.py adds the roundings
# of an evaluation in the format itself.
BOUNDS = {"cordic_fp32_abs": 5e-4, "cordic_fp16_abs": math.atan(2.0 ** -13) + 3.4e-6}

CORDIC = OpEntry(
    name="cordic",
    unit="cordic",
    runner_op=lambda dtype: f"cordic_{build_of(dtype)}",
    steps=("fw",),
    dtypes=DTYPES,
    shapes=(dict(n=1), dict(n=64)),
    inputs=lambda c: {"angle": (c.shape["n"],)},
    params=lambda c: {"n": c.shape["n"]},
    input_values=lambda c, inputs: cordic.angles(inputs, format_named(c.dtype)),
    reference=lambda c, inputs: cordic.cordic(
        inputs, format_named(c.dtype),
        c.entry.approximations[f"cordic_{build_of(c.dtype)}_abs"]),
    cores=(1,),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"angle": 4 * c.shape["n"], "cos_sin": 8 * c.shape["n"]},
    approximations=BOUNDS,
)

ENTRIES = [CORDIC]
