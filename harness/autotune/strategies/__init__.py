"""Search strategies: each one module with one class, behind one interface;
the modules of this package are found by scanning it.

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

import importlib
import pkgutil


def _found() -> dict[str, type]:
    """Every module of this package is a strategy: the classes it defines that
    have a `name` and a `search` (a new strategy is one new module)."""
    found = {}
    for module in pkgutil.iter_modules(__path__):
        loaded = importlib.import_module(f"{__name__}.{module.name}")
        for value in vars(loaded).values():
            if isinstance(value, type) and value.__module__ == loaded.__name__ and hasattr(value, "search") \
                    and isinstance(getattr(value, "name", None), str):
                found[value.name] = value
    return dict(sorted(found.items()))


STRATEGIES = _found()


def make_strategy(name: str):
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    return STRATEGIES[name]()
