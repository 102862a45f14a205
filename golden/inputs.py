"""Seeded, deterministic input tensors on a number format's grid."""
from __future__ import annotations

import hashlib

import numpy as np

from golden.formats import NumberFormat


def seed_for(*parts) -> int:
    """A stable 64-bit seed from the parts that name a tensor (not Python's
    hash(), which changes between processes)."""
    text = "/".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def uniform_inputs(shapes: dict[str, tuple[int, ...]], fmt: NumberFormat, seed: int) -> dict[str, np.ndarray]:
    """Uniform values in [-1, 1), rounded to `fmt`, one generator per tensor
    name so adding a tensor does not change the others."""
    tensors = {}
    for name, shape in shapes.items():
        rng = np.random.default_rng(seed_for(seed, name))
        tensors[name] = fmt.round(rng.uniform(-1.0, 1.0, size=shape))
    return tensors
