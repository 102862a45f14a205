"""The concurrency slice: what `--concurrency-slice N` keeps for CI's
ThreadSanitizer, AddressSanitizer and team-order passes.

A race needs two cores at work, and a build left out is never looked at.
For every entry that forks a team, in each build that runs it (fp32, and
the 16-bit one: dtypes.build_of), the slice keeps:
- the N smallest cases that give at least two cores work;
- and the smallest case of all, where most cores of the team are idle and
  the split's edges meet (a pair store on one element: the published
  vect_sum_fp16's race at size 1);
each at the smallest and the largest core count above 1 it has, every
kernel, on the whole team (not `alone`, where one core works).

"Gives two cores work" is known exactly for an entry with a CoreSplit: its
units number at least two. Without one the library's split is not
documented, so the slice prefers the cases with the fewest sizes below 2
(a split along a size of 1 leaves a single core at work). Among equals,
the smallest by footprint.

Until 2026-12-07 the slice kept only each entry's smallest case, nearly
always one element, and one dtype: the FP32 build of most entries never ran
under a sanitizer, and a shared staging row in the embedding (mutation
bench, seed 7) stayed hidden.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from harness import core_split, dtypes
from harness.cases import Case, Variant


def shortfall(case: Case) -> int:
    """0 when the case gives at least two cores of a team work; otherwise how
    far it is from that (the count of sizes below 2, or 1 for a split whose
    units are fewer than two)."""
    if isinstance(case.entry.split, core_split.CoreSplit):
        return int(case.entry.split.units(case) < 2)
    return sum(1 for size in case.shape.values() if isinstance(size, int) and size < 2)


def keep(variants: Iterable[Variant], per_group: int) -> set[Variant]:
    """The variants of the slice among `variants`: per entry and build, the
    per_group cases ranked first and the smallest case, each at its smallest
    and largest core count above 1."""
    groups: dict[tuple[str, str], dict[Case, list[Variant]]] = defaultdict(lambda: defaultdict(list))
    for variant in variants:
        case = variant.case
        if variant.cores > 1 and core_split.alone_core(case, variant.cores) is None:
            groups[case.entry.name, dtypes.build_of(case.dtype)][case].append(variant)
    kept: set[Variant] = set()
    for cases in groups.values():
        ranked = sorted(cases, key=lambda case: (shortfall(case), _size(case)))
        for case in {*ranked[:per_group], min(cases, key=_size)}:
            cores = sorted({variant.cores for variant in cases[case]})
            kept.update(variant for variant in cases[case] if variant.cores in (cores[0], cores[-1]))
    return kept


def _size(case: Case) -> tuple[int, str]:
    return sum(case.footprint.values()), case.id
