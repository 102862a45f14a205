"""Catalogue of the interpolation (pulp_{nearest_neighbour,bilinear}_
interpolation_fp32_cl, FP32, the API's only dtype): a C x Hi x Wi tensor
resampled to Ho x Wo, channels over the cores.

Shapes: one pixel, 2x up and down, odd factors mixing up in one axis and
down in the other, channels around the core counts (1, 3, 8, 9). The flags
run each on its own and together; a flag that is off must leave its output
as it was (golden/interp.py). Bilinear's reference is torch's
interpolate(align_corners=False) in float64; its bound carries the binary32
source coordinate (derived in golden/interp.py).
"""
from __future__ import annotations

from golden import interp
from harness.cases import OpEntry

SHAPES = tuple(dict(C=c, Hi=hi, Wi=wi, Ho=ho, Wo=wo) for c, hi, wi, ho, wo in (
    (1, 1, 1, 1, 1), (3, 4, 4, 8, 8), (8, 8, 8, 4, 4), (9, 5, 7, 3, 11), (2, 3, 3, 7, 5), (16, 8, 8, 16, 16)))
# (interpolate_data, interpolate_gradient)
FLAGS = ((1, 1), (1, 0), (0, 1))


def _sizes(c) -> tuple[int, int]:
    s = c.shape
    return s["C"] * s["Hi"] * s["Wi"], s["C"] * s["Ho"] * s["Wo"]


def _inputs(c) -> dict[str, tuple[int]]:
    n_in, n_out = _sizes(c)
    return {"x": (n_in,), "g": (n_in,), "y0": (n_out,), "g0": (n_out,)}


INTERPOLATION = OpEntry(
    name="interpolation",
    unit="interp",
    runner_op=lambda dtype: "interpolation_fp32",
    steps=("fw",),
    dtypes=("fp32",),
    shapes=SHAPES,
    options={"bilinear": (0, 1), "flags": tuple(range(len(FLAGS)))},
    inputs=_inputs,
    params=lambda c: {**c.shape, "mode": c.options["bilinear"], "data": FLAGS[c.options["flags"]][0],
                      "grad": FLAGS[c.options["flags"]][1]},
    reference=lambda c, inputs: interp.interpolation(inputs, **c.shape, bilinear=bool(c.options["bilinear"]),
                                                     data=FLAGS[c.options["flags"]][0],
                                                     grad=FLAGS[c.options["flags"]][1]),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"input": 8 * _sizes(c)[0], "output": 8 * _sizes(c)[1]},
)

ENTRIES = [INTERPOLATION]
