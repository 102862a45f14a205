"""The tiler: the ways to cut one layer's step into calls that fit the L1.

A tiling gives each tile axis of the step (layers.py) a tile size. Cutting
the layer with it gives pieces: full tiles and edge tiles, of a few distinct
shapes, each occurring some number of times. Each distinct shape is one
case of the catalogue (measured once, for every kernel and core count in one
run), and the cost of the tiling is the sum over its shapes of the measured
cost times how often the shape occurs.

The L1 a tiling needs is its largest piece's footprint, by the catalogue
entry's own model (im2col and transpose buffers included). Tilings that do
not fit are never run. The rest are listed by memory use, the largest
first, as the seed's tiler lists them.
"""
from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from math import ceil

from harness.autotune.layers import Layer, Method
from harness.cases import Case


@dataclass(frozen=True)
class Piece:
    case: Case
    count: int


@dataclass(frozen=True)
class Tiling:
    layer: Layer
    step: str
    method: Method
    tile: tuple[tuple[str, int], ...]     # axis -> tile size
    pieces: tuple[Piece, ...]
    l1_bytes: int                         # the largest piece's footprint

    @property
    def label(self) -> str:
        """Method and tile sizes, e.g. "im2col Co32 Ho13" ("whole" when nothing is cut)."""
        cuts = [f"{axis}{size}" for axis, size in self.tile if size < full_length(self.layer, self.step, axis)]
        return f"{self.method.label} " + (" ".join(cuts) or "whole")

    @property
    def calls(self) -> int:
        return sum(p.count for p in self.pieces)


class NoFit(Exception):
    """No tiling of a layer's step fits the L1; the message gives the smallest footprint."""


def full_length(layer: Layer, step: str, axis: str) -> int:
    s = layer.sizes
    if axis == "Ho":
        return (s["H"] + s["U"] + s["D"] - s["Hk"]) // s["sh"] + 1
    return s[axis]


def tile_sizes(length: int, multiple_of: int = 1) -> list[int]:
    """The tile sizes worth trying on an axis: ceil(length / k) for every k,
    largest first (other sizes give the same number of tiles, with a smaller
    edge tile); with multiple_of, the ones that split over the cores evenly."""
    sizes = sorted({ceil(length / k) for k in range(1, length + 1)}, reverse=True)
    if multiple_of > 1:
        sizes = [t for t in sizes if t % multiple_of == 0 or t == length]
    return sizes


def _segments(length: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(size, length - start)) for start in range(0, length, size)]


def _piece_shape(layer: Layer, cut: dict[str, tuple[int, int]]) -> dict[str, int] | None:
    """The layer's sizes for one tile; None when an output-row tile reads no input row."""
    shape = layer.sizes
    for axis, (start, size) in cut.items():
        if axis != "Ho":
            shape[axis] = size
            continue
        # Output rows [start, start + size) read input rows first..last of the
        # padded input; what falls outside the real rows becomes the tile's padding.
        first = start * shape["sh"] - layer.sizes["U"]
        last = (start + size - 1) * shape["sh"] - layer.sizes["U"] + shape["Hk"] - 1
        rows = min(last, shape["H"] - 1) - max(first, 0) + 1
        if rows <= 0:
            return None
        shape["U"], shape["D"], shape["H"] = max(0, -first), max(0, last - (layer.sizes["H"] - 1)), rows
    return shape


def cut(layer: Layer, step: str, method: Method, dtype: str, tile: dict[str, int]) -> Tiling | None:
    """The tiling of a layer's step with these tile sizes, or None if a tile would be empty."""
    axes = list(tile)
    shapes: Counter = Counter()
    for segments in itertools.product(*(_segments(full_length(layer, step, a), tile[a]) for a in axes)):
        shape = _piece_shape(layer, dict(zip(axes, segments)))
        if shape is None:
            return None
        shapes[tuple(shape.items())] += 1
    pieces = tuple(Piece(Case(method.entry, dtype, step, shape, method.options), count)
                   for shape, count in shapes.items())
    l1 = max(sum(p.case.footprint.values()) for p in pieces)
    return Tiling(layer, step, method, tuple(tile.items()), pieces, l1)


def tilings(layer: Layer, step: str, dtype: str, l1_bytes: int, max_cores: int,
            limit: int | None = None) -> list[Tiling]:
    """Every tiling of the step that fits l1_bytes, on every method, largest
    memory use first; the first `limit` of each method (the seed's
    NUM_TILING_SOLUTIONS). Raises NoFit when none fits."""
    axes = layer.kind.axes[step]
    out, smallest = [], None
    for method in layer.kind.methods_for(dict(layer.flags), step):
        fitting = []
        per_axis = [tile_sizes(full_length(layer, step, a), max_cores if a == layer.kind.channel_split else 1)
                    for a in axes]
        for sizes in itertools.product(*per_axis):
            tiling = cut(layer, step, method, dtype, dict(zip(axes, sizes)))
            if tiling is None:
                continue
            if tiling.l1_bytes <= l1_bytes:
                fitting.append(tiling)
            elif smallest is None or tiling.l1_bytes < smallest.l1_bytes:
                smallest = tiling
        fitting.sort(key=lambda t: (-t.l1_bytes, t.calls))
        out += fitting[:limit]
    if not out:
        if smallest is None:
            raise NoFit(f"{layer.describe()} {step}: every tiling has a tile that reads only padding")
        largest = max(smallest.pieces, key=lambda p: sum(p.case.footprint.values())).case.footprint
        raise NoFit(f"{layer.describe()} {step} {dtype}: no tiling fits {l1_bytes} bytes of L1; the smallest "
                    f"({smallest.label}) needs {smallest.l1_bytes} ("
                    + ", ".join(f"{k} {v}" for k, v in largest.items()) + ")")
    out.sort(key=lambda t: (-t.l1_bytes, t.calls))
    return out
