"""Catalogue of dropout (the seeded generator and the mask paths) and of
the library's random numbers (pulp_generate_float_seed).

Dropout is a per-core body the runner forks (cores 1, 3, 8) over sizes
around the core counts, a prime and 1000 elements; probabilities 0 (no
change), 0.1, 0.5 and 0.9; seeds 0 and 12345. The mask path multiplies by
the entry's mask (a 0/1 pattern scaled by 2, exact). Every element is
checked against an independent model of the generator (golden/dropout.py),
so the device's mask is the documented one bit for bit; tests/
test_golden_dropout.py checks that model's statistics.
"""
from __future__ import annotations

import numpy as np

from golden import dropout
from golden.formats import format_named
from harness import core_split
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes

# 4096: a long mask, so that a generator bug that only some seeds reach (one
# element per seed: seed + i) shows; each element's draw is the first of its
# own generator, as the API documents.
SIZES = tuple(dict(n=n) for n in (1, 3, 8, 9, 17, 97, 1000, 4096))


def _mask_values(c, inputs: dict) -> dict:
    """A mask of exact 0s and 2s (x * mask is exact then, but the op still
    has to multiply the right element)."""
    n = c.shape["n"]
    return dict(inputs, mask=np.where(np.arange(n) % 3 == 1, 0.0, 2.0))


DROPOUT = OpEntry(
    name="dropout",
    unit="dropout",
    runner_op=lambda dtype: f"dropout_{build_of(dtype)}",
    steps=("fw",),
    dtypes=DTYPES,
    shapes=SIZES,
    options={"p_milli": (0, 100, 500, 900), "use_mask": (0, 1), "seed": (0, 12345)},
    applies=lambda c: not (c.options["use_mask"] and c.options["seed"]),   # the mask path reads no seed
    inputs=lambda c: {"x": (c.shape["n"],), "mask": (c.shape["n"],)},
    params=lambda c: {"n": c.shape["n"], **c.options},
    input_values=_mask_values,
    reference=lambda c, inputs: dropout.dropout(inputs, c.options["p_milli"], c.options["use_mask"],
                                                c.options["seed"], format_named(c.dtype)),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"input": element_bytes(c.dtype) * c.shape["n"] * 2},
    split=core_split.flat(starts_from={"y": "x"}),   # in place
)

RANDOM_FLOAT = OpEntry(
    name="random_float",
    unit="dropout",
    runner_op=lambda dtype: "random_float_fp32",
    steps=("fw",),
    dtypes=("fp32",),
    shapes=(dict(n=64),),
    options={"seed": (0, 1, 42, 2147483000)},
    inputs=lambda c: {},
    params=lambda c: {"n": c.shape["n"], "seed": c.options["seed"]},
    reference=lambda c, inputs: dropout.random_float(c.shape["n"], c.options["seed"]),
    cores=(1,),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"output": 4 * c.shape["n"]},
)

# The int output of pulp_random_bernoulli travels as a float (0 or 1) from
# the runner; the draws are exact (golden/dropout.py models the generator).
RANDOM_BERNOULLI = OpEntry(
    name="random_bernoulli",
    unit="dropout",
    runner_op=lambda dtype: "random_bernoulli_fp32",
    steps=("fw",),
    dtypes=("fp32",),
    shapes=(dict(n=64),),
    options={"seed": (0, 42, 2147483000), "p_milli": (0, 300, 1000)},
    inputs=lambda c: {},
    params=lambda c: {"n": c.shape["n"], **c.options},
    reference=lambda c, inputs: dropout.random_bernoulli(c.shape["n"], c.options["seed"], c.options["p_milli"]),
    cores=(1,),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"output": 4 * c.shape["n"]},
)

# Streams, not first draws (issue 25): every path above takes the first
# number of a freshly seeded generator, which reads only words 0, 1 and 10
# of the seeded state. The public genRandLong / genRandFloat stream reads
# every word and every twist: 4000 draws (250 twists) of one generator per
# seed, bit exact against the model; index 17 takes the documented reseed
# with 4357 on the first draw; index 0 and 9 are states a caller set
# (pulp_random.h: no twist below 16), whose first draws read mt[0] and mt[9]
# of the seeded state as they are.
RANDOM_STREAM = OpEntry(
    name="random_stream",
    unit="dropout",
    runner_op=lambda dtype: "random_stream_fp32",
    steps=("fw",),
    dtypes=("fp32",),
    shapes=(dict(n=4000),),
    options={"seed": (0, 1, 5489, 2147483647), "index": (16, 17, 0, 9)},
    # the reseed ignores the seed; one seed shows a caller's index
    applies=lambda c: c.options["index"] == 16 or c.options["seed"] == 1,
    inputs=lambda c: {},
    params=lambda c: {"n": c.shape["n"], **c.options},
    reference=lambda c, inputs: dropout.random_stream(c.shape["n"], c.options["seed"], c.options["index"]),
    cores=(1,),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"output": 3 * 4 * c.shape["n"]},
)

# genRand, the API's double draw (y / 4294967295.0): 1000 draws (62
# twists) of a freshly seeded generator; each double travels as two
# binary32 numbers, bit exact (golden.dropout.random_double).
RANDOM_DOUBLE = OpEntry(
    name="random_double",
    unit="dropout",
    runner_op=lambda dtype: "random_double_fp32",
    steps=("fw",),
    dtypes=("fp32",),
    shapes=(dict(n=1000),),
    options={"seed": (0, 5489)},
    inputs=lambda c: {},
    params=lambda c: {"n": c.shape["n"], **c.options},
    reference=lambda c, inputs: dropout.random_double(c.shape["n"], c.options["seed"]),
    cores=(1,),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"output": 2 * 4 * c.shape["n"]},
)

ENTRIES = [DROPOUT, RANDOM_FLOAT, RANDOM_BERNOULLI, RANDOM_STREAM, RANDOM_DOUBLE]
