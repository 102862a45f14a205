"""References for the FP16 embedding lookup (harness/runtime/runner/
ops_embedding.c): out row i = embeds row ids[i], copied unchanged (exact)."""
from __future__ import annotations

import numpy as np

from golden.bundle import Reference


def ids_and_table(inputs: dict[str, np.ndarray], vocab: int) -> dict[str, np.ndarray]:
    """ids as integers in 0 .. vocab - 1 drawn from the seeded uniform
    values (every id at most 255: exact in fp16 and in bfloat16), repeats
    and the last id included."""
    u = inputs["ids"]
    ids = np.floor((u + 1.0) / 2.0 * vocab).clip(0, vocab - 1)
    ids[-1] = vocab - 1
    return dict(inputs, ids=ids)


def embedding(inputs: dict[str, np.ndarray], embed_dim: int) -> dict[str, Reference]:
    table = inputs["embeds"].reshape(-1, embed_dim)
    out = table[inputs["ids"].astype(int)].ravel()
    return {"out": Reference(out, np.abs(out), 0)}
