"""The matmul kernel index tables of the trainlib API, read from the one copy
the harness keeps: runtime/include/ptl_kernels.def, which the runner compiles
in and describes back (harness/runner_contract.py checks the two agree)."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from harness.dtypes import build_of

KERNELS_DEF = Path(__file__).parent / "runtime" / "include" / "ptl_kernels.def"
_ENTRY = re.compile(r"^PTL_KERNEL\((\w+),\s*(\d+),\s*(\w+),\s*(api|lib_c)\)\s*$", re.MULTILINE)


@lru_cache(maxsize=None)
def kernel_tables() -> dict[str, tuple[str, ...]]:
    """{"fp32": names by index, "fp16": names by index}."""
    tables: dict[str, list[str]] = {}
    for table, index, name, _ in _entries():
        names = tables.setdefault(table, [])
        if int(index) != len(names):
            raise ValueError(f"{KERNELS_DEF}: {table} kernel {name} has index {index}, expected {len(names)}")
        names.append(name)
    return {table: tuple(names) for table, names in tables.items()}


def kernel_table(dtype: str) -> tuple[str, ...]:
    """The kernel names a dtype's mm_manager indexes (bf16 uses the FP16 table)."""
    return kernel_tables()[build_of(dtype)]


@lru_cache(maxsize=None)
def own_kernels() -> tuple[tuple[str, int, str], ...]:
    """(table, index, name) of lib_c's own kernels (origin lib_c in the .def):
    a library under test may lack them; the build looks for each by name, and
    the variants of one it lacks are reported `absent` (not run)."""
    return tuple((table, int(index), name) for table, index, name, origin in _entries() if origin == "lib_c")


def api_kernels(dtype: str) -> tuple[int, ...]:
    """The indices of a dtype's table that the published API has (origin api)."""
    table = build_of(dtype)
    own = {index for t, index, _ in own_kernels() if t == table}
    return tuple(k for k in range(len(kernel_table(dtype))) if k not in own)


def _entries() -> list[tuple[str, str, str, str]]:
    text = KERNELS_DEF.read_text()
    entries = _ENTRY.findall(text)
    written = sum(line.startswith("PTL_KERNEL(") for line in text.splitlines())
    if written != len(entries):
        raise ValueError(f"{KERNELS_DEF}: {written - len(entries)} PTL_KERNEL line(s) not of the form "
                         f"PTL_KERNEL(table, index, name, api|lib_c)")
    return entries
