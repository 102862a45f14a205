"""Number formats the device computes in, and how a value is rounded to each.

A format knows its unit roundoff (half the distance from 1.0 to the next
value), how to round float64 values to it with round-to-nearest-even, and how
to move between values and the 16- or 32-bit patterns the device sends back.
The ULP distance between two patterns is measured on the format's ordered
integer line, so +0 and -0 are 0 ULP apart and neighbours are 1 apart.

numpy alone: every run compares through this module, and torch's import
(about 1.1 s) is left to the processes that compute a golden model.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NumberFormat:
    name: str            # "fp32", "fp16" (IEEE binary16) or "bf16" (bfloat16)
    container: str       # the numpy float type whose pattern starts with this format's: "float32" or "float16"
    bits: int            # width of one element on the wire
    mantissa_bits: int   # explicit fraction bits
    min_exponent: int    # exponent of the smallest normal value
    max_exponent: int    # exponent of the largest finite value

    @property
    def unit_roundoff(self) -> float:
        return 2.0 ** -(self.mantissa_bits + 1)

    @property
    def smallest_subnormal(self) -> float:
        return 2.0 ** (self.min_exponent - self.mantissa_bits)

    @property
    def wire_dtype(self) -> np.dtype:
        return np.dtype(np.uint16 if self.bits == 16 else np.uint32)

    @property
    def max_finite(self) -> float:
        return (2.0 - 2.0 ** -self.mantissa_bits) * 2.0 ** self.max_exponent

    def round(self, values) -> np.ndarray:
        """float64 values (an array, a list, a CPU tensor) rounded (RNE) to
        this format, returned as float64.

        One rounding, straight from float64: torch's own conversion goes
        through float32 and rounds twice. Scaling by a power of two is exact,
        so rounding x / quantum to an integer (numpy rounds half to even) and
        scaling back is exactly round-to-nearest-even at x's exponent."""
        x = np.asarray(values, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            _, exponent = np.frexp(x)
            exponent = np.maximum(exponent - 1, self.min_exponent)
            quantum = np.ldexp(1.0, exponent - self.mantissa_bits)
            rounded = np.where(np.isfinite(x), np.round(x / quantum) * quantum, x)
            rounded = np.where(np.abs(rounded) > self.max_finite, np.copysign(np.inf, x), rounded)
        return rounded

    def to_bits(self, values: np.ndarray) -> np.ndarray:
        """Bit patterns of float64 values after rounding to this format."""
        # On the grid, so the cast to the container is exact; bfloat16 is the
        # upper half of the float32 pattern. A NaN keeps its sign: 0x7FC0 or
        # 0xFFC0 (torch's float64 -> bfloat16 made 0xFFFF of both).
        patterns = self.round(values).astype(self.container).view(self._container_bits)
        shift = patterns.dtype.itemsize * 8 - self.bits
        return (patterns >> shift).astype(self.wire_dtype)

    def from_bits(self, bits: np.ndarray) -> np.ndarray:
        """float64 values of bit patterns in this format."""
        patterns = np.ascontiguousarray(bits, dtype=self.wire_dtype).astype(self._container_bits)
        shift = patterns.dtype.itemsize * 8 - self.bits
        with np.errstate(invalid="ignore"):   # a signalling NaN arrives quiet, as from any cast
            return (patterns << shift).view(self.container).astype(np.float64)

    @property
    def _container_bits(self) -> np.dtype:
        return np.dtype(np.uint32 if np.dtype(self.container).itemsize == 4 else np.uint16)

    def ordered(self, bits: np.ndarray) -> np.ndarray:
        """Map patterns to integers whose difference is the distance in ULP."""
        b = np.asarray(bits, dtype=np.int64)
        sign = np.int64(1) << (self.bits - 1)
        magnitude = b & (sign - 1)
        return np.where(b & sign, -magnitude, magnitude)

    def ulp_distance(self, actual_bits: np.ndarray, expected_bits: np.ndarray) -> np.ndarray:
        return np.abs(self.ordered(actual_bits) - self.ordered(expected_bits))


FP32 = NumberFormat("fp32", "float32", 32, 23, -126, 127)
FP16 = NumberFormat("fp16", "float16", 16, 10, -14, 15)
BF16 = NumberFormat("bf16", "float32", 16, 7, -126, 127)

FORMATS = {f.name: f for f in (FP32, FP16, BF16)}


def format_named(name: str) -> NumberFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}; expected one of {sorted(FORMATS)}") from None
