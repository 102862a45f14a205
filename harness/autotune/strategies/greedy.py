"""Greedy: a count-based cost model orders the tilings, and a method stops
after `patience` tilings in a row that do not beat its best.

The model needs no measurement. A tiled step does the same arithmetic
whatever the tiles, so what differs is what each call costs besides it:
setting up, splitting over the cores, the halo rows read twice, and the edge
tiles, whose odd shapes split badly. So: the fewer calls the better, then
the fewer distinct tile shapes (edge tiles), then the larger tiles. Each
method (im2col, direct, ...) is searched on its own, since their costs
differ by far more than the tiling changes them.

On the 20 layer shapes of bench/autotune.py (every step, 16 tilings per
method, QEMU), patience 3 finds exhaustive's optimum on every step with 29%
of its target runs; patience 2 misses one step by 1.1%, and the seed's
order (memory use, largest first) with patience 3 misses eight.
"""
from __future__ import annotations

from itertools import groupby


def best_passing(outcomes) -> float:
    return min((o.latency for o in outcomes if o.passed), default=float("inf"))


def model_order(tiling) -> tuple:
    return (tiling.calls, len(tiling.pieces), -tiling.l1_bytes)


class Greedy:
    name = "greedy"

    def __init__(self, patience: int = 3):
        self.patience = patience

    def search(self, tilings, evaluate) -> None:
        by_method = sorted(tilings, key=lambda t: t.method.label)
        for _, group in groupby(by_method, key=lambda t: t.method.label):
            best, misses = float("inf"), 0
            for tiling in sorted(group, key=model_order):
                cost = best_passing(evaluate(tiling))
                if cost < best:
                    best, misses = cost, 0
                else:
                    misses += 1
                    if misses >= self.patience:
                        break
