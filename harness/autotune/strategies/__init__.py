"""Search strategies: each one module with one class, behind one interface.

    class Strategy:
        name: str
        def search(self, tilings: list[Tiling], evaluate) -> None

`tilings` are the candidates of one layer and step, largest memory use
first; `evaluate(tiling)` measures every kernel and core count of it (one
target run per distinct tile shape not already in the results database)
and returns their outcomes. A strategy only decides which tilings to
evaluate and in which order; the tuner picks the fastest correct outcome
among everything evaluated, so no strategy can choose a wrong kernel.
"""
from __future__ import annotations

from harness.autotune.strategies.exhaustive import Exhaustive
from harness.autotune.strategies.greedy import Greedy

STRATEGIES = {cls.name: cls for cls in (Exhaustive, Greedy)}


def make_strategy(name: str):
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    return STRATEGIES[name]()
