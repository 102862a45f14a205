"""Exhaustive: every candidate tiling, every kernel, every core count."""
from __future__ import annotations


class Exhaustive:
    name = "exhaustive"

    def search(self, tilings, evaluate) -> None:
        for tiling in tilings:
            evaluate(tiling)
