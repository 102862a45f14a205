"""The matmul kernel index tables of the trainlib API, read from the one copy
the harness keeps: runtime/include/ptl_kernels.def, which the runner compiles
in and describes back (harness/runner_contract.py checks the two agree)."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from harness.dtypes import build_of

KERNELS_DEF = Path(__file__).parent / "runtime" / "include" / "ptl_kernels.def"
_ENTRY = re.compile(r"^PTL_KERNEL\((\w+),\s*(\d+),\s*(\w+)\)\s*$", re.MULTILINE)


@lru_cache(maxsize=None)
def kernel_tables() -> dict[str, tuple[str, ...]]:
    """{"fp32": names by index, "fp16": names by index}."""
    tables: dict[str, list[str]] = {}
    for table, index, name in _ENTRY.findall(KERNELS_DEF.read_text()):
        names = tables.setdefault(table, [])
        if int(index) != len(names):
            raise ValueError(f"{KERNELS_DEF}: {table} kernel {name} has index {index}, expected {len(names)}")
        names.append(name)
    return {table: tuple(names) for table, names in tables.items()}


def kernel_table(dtype: str) -> tuple[str, ...]:
    """The kernel names a dtype's mm_manager indexes (bf16 uses the FP16 table)."""
    return kernel_tables()[build_of(dtype)]
