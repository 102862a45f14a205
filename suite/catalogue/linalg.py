"""Catalogue of the linear-algebra family: the raw matmul kernels and the
linear layer."""
from __future__ import annotations

from golden import linalg
from harness.cases import OpEntry

# (N, M, K): each of N, M and K takes 1, values just below, at and just above
# the unroll factors 2, 4 and 8, primes, and the 64x64x64 reference size.
MATMUL_SHAPES = tuple(dict(N=n, M=m, K=k) for n, m, k in (
    (1, 1, 1), (1, 9, 5), (9, 1, 5), (5, 7, 1), (2, 3, 4), (3, 2, 3), (4, 5, 2),
    (7, 8, 9), (8, 9, 7), (9, 4, 8), (15, 17, 16), (17, 16, 15), (13, 11, 7), (64, 64, 64),
))

LINEAR_SHAPES = tuple(dict(inp=i, out=o) for i, o in (
    (1, 1), (5, 3), (8, 17), (37, 19), (64, 32),
))


def _suffix(dtype: str) -> str:
    return "fp32" if dtype == "fp32" else "fp16"


MATMUL = OpEntry(
    name="matmul",
    runner_op=lambda dtype: f"matmul_{_suffix(dtype)}",
    steps=("fw",),
    dtypes=("fp32", "fp16", "bf16"),
    shapes=MATMUL_SHAPES,
    options={"trans_B": (0, 1)},
    inputs=lambda c: {"A": (c.shape["N"], c.shape["K"]),
                      "B": (c.shape["M"], c.shape["K"]) if c.options["trans_B"] else (c.shape["K"], c.shape["M"])},
    params=lambda c: [c.shape["N"], c.shape["M"], c.shape["K"], c.options["trans_B"]],
    reference=lambda c, inputs: linalg.matmul(inputs, c.options["trans_B"]),
)

LINEAR = OpEntry(
    name="linear",
    runner_op=lambda dtype: f"linear_{_suffix(dtype)}",
    steps=("fw", "wg", "ig"),
    dtypes=("fp32", "fp16", "bf16"),
    shapes=LINEAR_SHAPES,
    options={"bias": (0, 1)},
    applies=lambda c: not (c.step == "ig" and c.options["bias"]),  # IG does not read the bias
    inputs=lambda c: {"x": (c.shape["inp"],), "W": (c.shape["out"], c.shape["inp"]),
                      "b": (c.shape["out"],), "dy": (c.shape["out"],)},
    params=lambda c: [c.shape["inp"], c.shape["out"], c.options["bias"], ("fw", "wg", "ig").index(c.step)],
    reference=lambda c, inputs: linalg.linear(inputs, c.step, c.options["bias"]),
    cores=(1, 3, 8),
)

ENTRIES = [MATMUL, LINEAR]
