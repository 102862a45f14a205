"""Catalogue of the casts between FP32 and the FP16 formats (fp16 = IEEE
binary16, bf16 = bfloat16; the case's dtype is the fp16 side, the other
tensor travels as FP32). Per-core bodies forked by the runner, cores 1, 3, 8.
"""
from __future__ import annotations

from golden import cast
from golden.formats import FP32, format_named
from harness import core_split
from harness.cases import OpEntry

SIZES = tuple(dict(n=n) for n in (1, 8, 9, 17, 96, 1000))


def _entry(direction: str) -> OpEntry:
    to_fp16 = direction == "to_fp16"
    return OpEntry(
        name=f"cast_{direction}",
        unit="cast",
        runner_op=lambda dtype: f"cast_{direction}_fp16",
        steps=("fw",),
        dtypes=("fp16", "bf16"),
        shapes=SIZES,
        inputs=lambda c: {"x": (c.shape["n"],)},
        params=lambda c: dict(c.shape),
        input_values=(lambda c, inputs: cast.edge_inputs(inputs, format_named(c.dtype))) if to_fp16 else None,
        reference=lambda c, inputs: cast.cast(inputs, format_named(c.dtype) if to_fp16 else FP32),
        cores=(1, 3, 8),
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
        footprint=lambda c: {"source": (4 if to_fp16 else 2) * c.shape["n"],
                             "destination": (2 if to_fp16 else 4) * c.shape["n"]},
        tensor_dtypes={"x": "fp32"} if to_fp16 else {"y": "fp32"},
        split=core_split.flat(),
    )


CAST_TO_FP16 = _entry("to_fp16")
CAST_TO_FP32 = _entry("to_fp32")

ENTRIES = [CAST_TO_FP16, CAST_TO_FP32]
