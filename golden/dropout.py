"""References for dropout and the library's random numbers
(harness/runtime/runner/ops_dropout.c), from an independent model of the
generator the API documents (pulp_random.h): MT19937's twist and tempering
on a 16-word state with M = 10, seeded by mt[i] = 6069 mt[i-1].

The random numbers are bit exact (reduction 0). Dropout: a dropped element
is exactly 0, a kept one x / (1 - p) with 1 - p and the quotient rounded
(reduction 2, relative to |x / (1 - p)|; FP16 rounds a binary32 result once
more, still within 2 of its roundings), a masked one x * mask (1).
"""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat

N, M = 16, 10
UPPER, LOWER, MATRIX_A = 0x80000000, 0x7FFFFFFF, 0x9908B0DF


def _seeded(seed: int) -> list[int]:
    mt = [seed & 0xFFFFFFFF]
    for _ in range(1, N):
        mt.append((6069 * mt[-1]) & 0xFFFFFFFF)
    return mt


def _twist(mt: list[int]) -> None:
    for k in range(N):
        y = (mt[k] & UPPER) | (mt[(k + 1) % N] & LOWER)
        mt[k] = mt[(k + M) % N] ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)


def _temper(y: int) -> int:
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    return y ^ (y >> 18)


def float_seed(seed: int) -> np.float32:
    """pulp_generate_float_seed(seed): the first genRandFloat after seedRand."""
    mt = _seeded(seed)
    _twist(mt)
    return np.float32(np.float32(_temper(mt[0])) / np.float32(4294967296.0))


def stream(seed: int, n: int, index: int = N) -> list[int]:
    """n genRandLong draws of one generator: seedRand(seed), its index set to
    `index` (16 as seeded; 17 or more, or negative: the first draw reseeds
    with 4357), a twist every 16 draws."""
    mt = _seeded(seed)
    if index > N or index < 0:
        mt, index = _seeded(4357), N
    out = []
    for _ in range(n):
        if index >= N:
            _twist(mt)
            index = 0
        out.append(_temper(mt[index]))
        index += 1
    return out


def random_stream(n: int, seed: int, index: int) -> dict[str, Reference]:
    """The runner's random_stream: each genRandLong draw as its 16-bit halves,
    and genRandFloat = (float)y / 2^32 of a second generator seeded alike
    (binary32 rounding of y, then an exact power-of-two division). Bit exact."""
    y = np.array(stream(seed, n, index), dtype=np.uint64)
    hi, lo = (y >> 16).astype(np.float64), (y & 0xFFFF).astype(np.float64)
    f = (y.astype(np.float64).astype(np.float32) / np.float32(4294967296.0)).astype(np.float64)
    return {"hi": Reference(hi, hi.copy(), 0), "lo": Reference(lo, lo.copy(), 0), "f": Reference(f, f.copy(), 0)}


def random_double(n: int, seed: int) -> dict[str, Reference]:
    """The runner's random_double: genRand = y / 4294967295.0 in binary64
    (one correctly rounded division) of a freshly seeded stream, carried as
    two binary32 numbers: hi = the double rounded, lo = the rest rounded
    (d - hi is exact in binary64). Bit exact."""
    d = np.array(stream(seed, n), dtype=np.float64) / 4294967295.0
    hi = d.astype(np.float32).astype(np.float64)
    lo = (d - hi).astype(np.float32).astype(np.float64)
    return {"hi": Reference(hi, np.abs(hi), 0), "lo": Reference(lo, np.abs(lo), 0)}


def probability(p_milli: int) -> np.float32:
    """The probability as ops_dropout.c makes it: p_milli / 1000 in binary32."""
    return np.float32(p_milli) / np.float32(1000.0)


def kept(n: int, seed: int, p: np.float32) -> np.ndarray:
    """Which elements the seeded generator keeps: r > p."""
    return np.array([float_seed(seed + i) > p for i in range(n)])


def random_bernoulli(n: int, seed: int, p_milli: int) -> dict[str, Reference]:
    """pulp_random_bernoulli for seeds seed .. seed + n - 1: 0 where r > p, else 1."""
    b = np.where(kept(n, seed, probability(p_milli)), 0.0, 1.0)
    return {"b": Reference(b, b.copy(), 0)}


def random_float(n: int, seed: int) -> dict[str, Reference]:
    r = np.array([float_seed(seed + i) for i in range(n)], dtype=np.float64)
    return {"r": Reference(r, r, 0)}


def dropout(inputs: dict[str, np.ndarray], p_milli: int, use_mask: int, seed: int,
            fmt: NumberFormat) -> dict[str, Reference]:
    """p as the library holds it: the args' probability is an fp16 in the
    FP16 twin (the published pulp_dropout_fp16.h), so p_milli / 1000 rounded
    to the format decides what is kept and scales it."""
    x = inputs["x"]
    p = np.float32(fmt.round(probability(p_milli)))
    if p_milli == 0:
        return {"y": Reference(x.copy(), np.abs(x), 0)}
    if use_mask:
        y = x * inputs["mask"]
        return {"y": Reference(y, np.abs(y), 1)}
    scale = 1.0 / (1.0 - float(p))
    y = np.where(kept(x.size, seed, p), x * scale, 0.0)
    return {"y": Reference(y, np.abs(y), 2)}
