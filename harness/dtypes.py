"""The case dtypes, stated once.

A case computes in one of three formats. The runner and the library are
built twice: the FP32 build runs fp32 cases, the 16-bit build runs fp16 and
bf16 cases (which 16-bit format that build computes in is the build's fp16
format: IEEE binary16 or bfloat16). A build's name is the suffix of its op
names (linear_fp16) and the key of its kernel table.
"""
from __future__ import annotations

DTYPES = ("fp32", "fp16", "bf16")
_BUILD = {"fp32": "fp32", "fp16": "fp16", "bf16": "fp16"}


def build_of(dtype: str) -> str:
    """The build a case of this dtype runs in: "fp32" or "fp16"."""
    return _BUILD[dtype]


def element_bytes(dtype: str) -> int:
    """Bytes of one element of a tensor of this dtype."""
    return 4 if build_of(dtype) == "fp32" else 2
