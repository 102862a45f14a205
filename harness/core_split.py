"""One core alone: the check of the split the API documents for its per-core
bodies.

shared/TRAINLIB_API_MORE.md ("caller") says how a per-core body that its
caller forks splits the work: core id takes the units [id*b, (id+1)*b) of
n, clipped to n, with b = ceil(n / NUM_CORES). Forked on the whole team,
any split that covers every unit once computes the same outputs, so the
ordinary run cannot tell the documented split from another; a caller that
forks a body on part of its team, or reads one core's part, can.

A catalogue entry that declares its CoreSplit gets the option `alone`
(enum ptl_alone in ptl_runner.h: 0 the team, 1 the first core, 2 the last):
the runner forks the variant's whole team, and only that core runs the body
(op_frame_fork). The elements of that core's units are then judged against
the reference like any output; every other element must still hold the
runner's sentinel, bit for bit; for a body that works in place, the
input's value it started from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat
from harness import c_header

OPTION = c_header.string("ptl_runner.h", "PTL_ALONE_PARAM")
ALONE = c_header.prefixed("ptl_runner.h", "PTL_ALONE_")          # TEAM, FIRST, LAST -> the param's value
SENTINEL = c_header.prefixed("ptl_runner.h", "PTL_SENTINEL_")    # F32, F16 -> bit pattern
SHOWN = 5


@dataclass(frozen=True)
class CoreSplit:
    """How a per-core body's units map to its outputs' elements."""

    units: Callable[[object], int]                       # case -> n, the count the API splits
    unit_of: Callable[[object], dict[str, np.ndarray]]   # case -> output name -> the unit of each element
    # In place: output name -> the input it starts as a copy of (elsewhere the sentinel).
    starts_from: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelSplit:
    """A per-core body whose split depends on the matmul kernel the variant
    runs: `of` maps the kernel's name to its CoreSplit (mm_manager: the mm*
    kernels split rows, the mm_M* ones columns, TRAINLIB_API.md)."""

    of: Callable[[str], CoreSplit]


def split_of(case, kernel: int) -> CoreSplit:
    """The CoreSplit a variant of the case runs under (its entry's, or its kernel's)."""
    split = case.entry.split
    return split.of(case.entry.kernel_names(case.dtype)[kernel]) if isinstance(split, KernelSplit) else split


def flat(size: str = "n", outputs: tuple[str, ...] = ("y",), starts_from: dict[str, str] | None = None) -> CoreSplit:
    """A body over a flat vector of shape[size] elements: element i is unit i."""
    return CoreSplit(lambda case: case.shape[size],
                     lambda case: {name: np.arange(case.shape[size]) for name in outputs}, starts_from or {})


def rows(rows: str = "rows", width: str = "n", outputs: tuple[str, ...] = ("y",)) -> CoreSplit:
    """A body over shape[rows] rows of shape[width] elements: a row is a unit."""
    return CoreSplit(lambda case: case.shape[rows],
                     lambda case: {name: np.repeat(np.arange(case.shape[rows]), case.shape[width])
                                   for name in outputs})


def columns(rows: str, width: str, outputs: tuple[str, ...]) -> CoreSplit:
    """A body over the shape[width] columns of a row-major shape[rows] x
    shape[width] output: a column is a unit."""
    return CoreSplit(lambda case: case.shape[width],
                     lambda case: {name: np.tile(np.arange(case.shape[width]), case.shape[rows]) for name in outputs})


def block(n: int, cores: int, core: int) -> tuple[int, int]:
    """The units [first, last) the API gives `core` of a team of `cores`."""
    b = -(-n // cores)
    return min(core * b, n), min((core + 1) * b, n)


def alone_core(case, cores: int) -> int | None:
    """The core that ran the body by itself in this variant, or None for the team."""
    alone = case.options.get(OPTION, ALONE["TEAM"]) if case.entry.split else ALONE["TEAM"]
    return None if alone == ALONE["TEAM"] else 0 if alone == ALONE["FIRST"] else cores - 1


def runs_at(case, cores: int) -> bool:
    """Whether the case has a variant at this core count: on one core, the
    first and the last core alone are the team itself, the same run as
    alone 0, so only the team's variant is kept there."""
    return cores > 1 or alone_core(case, cores) is None


def judge(case, kernel: int, cores: int, core: int, bits: dict[str, np.ndarray], references: dict[str, Reference],
          formats: dict[str, NumberFormat], inputs: dict[str, np.ndarray]) -> tuple[list[str], dict[str, np.ndarray]]:
    """Reports of the elements outside `core`'s block that are not what
    the output started as (the sentinel, or the input of an in-place body),
    and the outputs' bits with every element outside the block
    replaced by the reference's, so that the ordinary comparison judges the
    block alone (its unwritten elements still read as the sentinel, a NaN)."""
    split = split_of(case, kernel)
    n = split.units(case)
    first, last = block(n, cores, core)
    head = (f"alone: core {core} of {cores} ran the per-core body by itself; the API's split "
            f"(TRAINLIB_API_MORE.md, caller: b = ceil(n / cores)) gives it units [{first}, {last}) of n = {n}")
    reports, judged = [], dict(bits)
    for name, unit in split.unit_of(case).items():
        fmt, actual = formats[name], bits[name].reshape(-1)
        if actual.size != unit.size:
            continue   # the ordinary comparison reports the size
        mine = (unit >= first) & (unit < last)
        sentinel = SENTINEL["F16" if fmt.bits == 16 else "F32"]
        source = split.starts_from.get(name)
        start = fmt.to_bits(inputs[source].reshape(-1)).astype(actual.dtype) if source else sentinel
        written = np.flatnonzero(~mine & (actual != start))
        if written.size:
            shown = ", ".join(f"{int(i)} = {fmt.from_bits(actual[i:i + 1])[0]:.7g} "
                              f"(0x{int(actual[i]):0{fmt.bits // 4}x}, unit {int(unit[i])})"
                              for i in written[:SHOWN])
            reports.append(f"{head}\ntensor {name}: {written.size} of {int((~mine).sum())} elements outside "
                           f"that block changed from {f'the input {source}' if source else 'the sentinel'}, "
                           f"though no other core ran: {shown}")
        unwritten = 0 if source else int((mine & (actual == sentinel)).sum())   # in place: the reference tells
        if unwritten:
            reports.append(f"{head}\ntensor {name}: {unwritten} of {int(mine.sum())} elements of that block "
                           f"still hold the runner's sentinel (never written)")
        expected = fmt.to_bits(references[name].value.reshape(-1)).astype(actual.dtype)
        judged[name] = np.where(mine, actual, expected).reshape(bits[name].shape)
    return reports, judged
