"""Greedy: a count-based cost model orders the tilings, and a method stops
after `patience` tilings in a row that do not beat its best.

The model needs no measurement: a tiled step does the same arithmetic
whatever the tiles, so what differs is the cost of each call (setting up,
splitting over the cores, the edge tiles) and the halo rows read twice. The
fewer calls, the cheaper, and among tilings with as many calls the larger
tiles first. Each method (im2col, direct, ...) is searched on its own, since
their costs differ by far more than the tiling changes them.
"""
from __future__ import annotations

from itertools import groupby


def best_passing(outcomes) -> float:
    return min((o.latency for o in outcomes if o.passed), default=float("inf"))


class Greedy:
    name = "greedy"

    def __init__(self, patience: int = 2):
        self.patience = patience

    def search(self, tilings, evaluate) -> None:
        by_method = sorted(tilings, key=lambda t: t.method.label)
        for _, group in groupby(by_method, key=lambda t: t.method.label):
            best, misses = float("inf"), 0
            for tiling in sorted(group, key=lambda t: (t.calls, -t.l1_bytes)):
                cost = best_passing(evaluate(tiling))
                if cost < best:
                    best, misses = cost, 0
                else:
                    misses += 1
                    if misses >= self.patience:
                        break
