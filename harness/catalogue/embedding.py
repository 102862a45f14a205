"""Catalogue of the FP16 embedding lookup (embedding_fw_tiled_fp16, the
API's only embedding: FP16, forward), in IEEE fp16 and bfloat16, rows over
the cores the runner forks.

Shapes: one row, rows around the core counts (3, 8, 9, 17) and past them,
embedding widths 1 .. 64 and vocabularies of 1 to 200 rows (ids up to 199:
exact in both 16-bit formats). The ids travel as exact integers in the
tensor's format; the runner converts them to the int array of the call.
"""
from __future__ import annotations

from golden import embedding
from harness import core_split
from harness.cases import OpEntry

SHAPES = tuple(dict(rows=r, embed_dim=e, vocab=v) for r, e, v in (
    (1, 1, 1), (3, 7, 5), (8, 16, 10), (9, 8, 200), (17, 3, 4), (64, 64, 32)))

EMBEDDING = OpEntry(
    name="embedding",
    unit="embedding",
    runner_op=lambda dtype: "embedding_fp16",
    steps=("fw",),
    dtypes=("fp16", "bf16"),
    shapes=SHAPES,
    inputs=lambda c: {"ids": (c.shape["rows"],), "embeds": (c.shape["vocab"] * c.shape["embed_dim"],)},
    params=lambda c: dict(c.shape),
    input_values=lambda c, inputs: embedding.ids_and_table(inputs, c.shape["vocab"]),
    reference=lambda c, inputs: embedding.embedding(inputs, c.shape["embed_dim"]),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=lambda c: {"ids": 4 * c.shape["rows"], "embeds": 2 * c.shape["vocab"] * c.shape["embed_dim"],
                         "out": 2 * c.shape["rows"] * c.shape["embed_dim"], "BUFF": 2 * 8 * c.shape["embed_dim"]},
    split=core_split.rows("rows", "embed_dim", ("out",)),   # out row i for i < dim, rows over the cores
)

ENTRIES = [EMBEDDING]
