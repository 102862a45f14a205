"""References for the casts between FP32 and the FP16 formats
(harness/runtime/runner/ops_cast.c): one correctly rounded conversion (RNE,
overflow to infinity, subnormals kept), so bit exact; the other way exact.

Edge inputs for the FP32 -> FP16 direction: exact ties between two
neighbours of the target format (ties to even), one FP32 ulp either side of
them, the target's subnormals and the tie below its smallest subnormal, its
largest finite value and the values that overflow, and +-0.
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.formats import FP32, NumberFormat


def edge_inputs(inputs: dict[str, np.ndarray], to_fmt: NumberFormat) -> dict[str, np.ndarray]:
    x = inputs["x"]
    n = x.size
    v = to_fmt.round(x * 4)                                   # target-format values
    _, e = np.frexp(v)
    quantum = np.ldexp(1.0, np.maximum(e - 1, to_fmt.min_exponent) - to_fmt.mantissa_bits)
    ties = v + quantum / 2
    ulp32 = np.ldexp(1.0, np.maximum(np.frexp(ties)[1] - 1, FP32.min_exponent) - FP32.mantissa_bits)
    tiny = to_fmt.smallest_subnormal
    specials = np.array([0.0, -0.0, tiny, tiny / 2, 3 * tiny / 2, -5 * tiny, to_fmt.max_finite,
                         -to_fmt.max_finite, to_fmt.max_finite * (1 + 2.0 ** -(to_fmt.mantissa_bits + 1)),
                         FP32.max_finite, -FP32.max_finite, 2.0 ** to_fmt.min_exponent * 0.75])
    i = np.arange(n)
    picked = np.select([i % 4 == 0, i % 4 == 1, i % 4 == 2], [ties, ties + ulp32, ties - ulp32],
                       specials[(i // 4) % len(specials)])
    return dict(inputs, x=FP32.round(picked))


def cast(inputs: dict[str, np.ndarray], to_fmt: NumberFormat) -> dict[str, Reference]:
    y = to_fmt.round(inputs["x"])
    return {"y": Reference(y, np.abs(y), 0)}
