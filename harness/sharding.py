"""Splitting one regression over machines: `--shard I/N` runs a
deterministic share of the selected variants, balanced by the recorded cost
of each case, and `python -m harness merge` joins the shards' reports.

A case (all the variants of one shape, dtype, step and options) is the unit:
its variants share one runner invocation, so they stay on one shard. Cases
go to shards by longest processing time first: the costliest case to the
least loaded shard, ties broken by case id, so every shard computes the
same assignment from the same selection. The cost of a case is the sum of
its variants' durations in a previous run's results.csv (`--shard-costs`);
a case without a record costs the median of the recorded ones (or its
variant count when nothing was recorded).
"""
from __future__ import annotations

import csv
import hashlib
import heapq
import statistics
from pathlib import Path


class ShardError(ValueError):
    """A malformed --shard or costs file: one line for the user."""


def parse_shard(text: str) -> tuple[int, int]:
    """'I/N' -> (I, N), 1 <= I <= N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ShardError(f"--shard wants I/N, e.g. 2/4; got {text!r}") from None
    if not 1 <= index <= count:
        raise ShardError(f"--shard {text}: I must be between 1 and N")
    return index, count


def recorded_costs(path: Path) -> dict[str, float]:
    """Seconds per case (the variant id without its kernel and core count)
    from a results.csv."""
    costs: dict[str, float] = {}
    try:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                case = row["test_id"].rsplit("-", 2)[0]
                costs[case] = costs.get(case, 0.0) + float(row.get("duration_s") or 0.0)
    except (OSError, KeyError, ValueError) as exc:
        raise ShardError(f"--shard-costs {path}: not a readable results.csv ({exc})") from None
    return costs


def assign(cases: dict[str, int], n: int, costs: dict[str, float]) -> dict[str, int]:
    """Shard (1..n) of each case, given its variant count and the recorded
    costs: longest processing time first."""
    known = [costs[c] for c in cases if c in costs]
    default = statistics.median(known) if known else None

    def cost(case: str) -> float:
        if case in costs:
            return costs[case]
        return default if default is not None else float(cases[case])

    loads = [(0.0, shard) for shard in range(1, n + 1)]
    heapq.heapify(loads)
    out = {}
    for case in sorted(cases, key=lambda c: (-cost(c), c)):
        load, shard = heapq.heappop(loads)
        out[case] = shard
        heapq.heappush(loads, (load + cost(case), shard))
    return out


def ids_digest(ids: list[str]) -> str:
    """The identity of a selection: every shard of one run records the same."""
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()
