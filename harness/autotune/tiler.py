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

Enumeration is cheap whatever the layer size: an axis of length L has about
2*sqrt(L) tile sizes worth trying (tile_sizes), and a cut counts its tiles
by shape instead of visiting each one (an axis gives at most three shapes:
full, edge, and for output rows the few tiles that reach into the padding).
A layer whose untiled step no target could hold (largest_memory) is
refused before anything is enumerated.
"""
from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, replace
from math import ceil, isqrt, prod
from typing import Callable

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
    edge tile); with multiple_of, the ones that split over the cores evenly.

    There are about 2*sqrt(length) of them: ceil(length / k) for k up to
    sqrt(length), and below that every size t that is ceil(length / k) for
    the k = ceil(length / t) it gives."""
    root = isqrt(length)
    sizes = {ceil(length / k) for k in range(1, root + 2)}
    sizes |= {t for t in range(1, ceil(length / (root + 1)) + 1) if ceil(length / ceil(length / t)) == t}
    sizes = sorted(sizes, reverse=True)
    if multiple_of > 1:
        sizes = [t for t in sizes if t % multiple_of == 0 or t == length]
    return sizes


def _segment_groups(layer: Layer, axis: str, length: int, size: int) -> list[tuple[tuple[int, int], int]] | None:
    """The segments (start, size) of an axis cut into `size`, grouped by the
    tile shape they give: (a representative segment, how many), in the order
    of their first segment. None when an output-row tile reads no input row.

    Along most axes a tile's shape is its size: full tiles and one edge
    tile. Along output rows it is also the padding the tile keeps, which
    only the first and last tiles can have: those are visited one by one,
    the interior ones counted."""
    full, edge = divmod(length, size)
    if axis != "Ho":
        return [((0, size), full)] * (full > 0) + [((full * size, edge), 1)] * (edge > 0)
    segments = full + (edge > 0)

    def segment(i: int) -> tuple[int, int]:
        return i * size, min(size, length - i * size)

    # The tiles reading no input row are at the ends; if the end ones read some, all do.
    if _piece_shape(layer, {"Ho": segment(0)}) is None or _piece_shape(layer, {"Ho": segment(segments - 1)}) is None:
        return None
    s = layer.sizes
    # Interior: a full tile whose input rows start at or after row 0 and end at or before row H-1.
    first_inside = ceil(s["U"] / (size * s["sh"]))
    last_start = (s["H"] + s["U"] - s["Hk"]) // s["sh"] - size + 1     # the last output row a full tile may start at
    inside = range(first_inside, min(last_start // size, full - 1) + 1) if last_start >= 0 else range(0)
    groups: dict[tuple, list] = {}

    def add(i: int, count: int) -> None:
        shape = tuple(_piece_shape(layer, {"Ho": segment(i)}).items())
        groups.setdefault(shape, [segment(i), 0])[1] += count

    for i in range(min(first_inside, segments)):
        add(i, 1)
    if inside:
        add(inside.start, len(inside))
    for i in range(max(first_inside, inside.stop), segments):
        add(i, 1)
    return [(seg, count) for seg, count in groups.values()]


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


def cut(layer: Layer, step: str, method: Method, dtype: str, tile: dict[str, int],
        whole_layer: bool = False) -> Tiling | None:
    """The tiling of a layer's step with these tile sizes, or None if a tile
    would be empty. With whole_layer its L1 is that of the whole layer's run
    (whole_layer_case: two sets of tile buffers), where the kind has one."""
    axes = list(tile)
    per_axis = [_segment_groups(layer, a, full_length(layer, step, a), tile[a]) for a in axes]
    if any(groups is None for groups in per_axis):
        return None
    shapes: Counter = Counter()
    # The axes change separate sizes of a tile, so a tile's shape is one group of each axis.
    for combination in itertools.product(*per_axis):
        shape = _piece_shape(layer, {a: segment for a, (segment, _) in zip(axes, combination)})
        shapes[tuple(shape.items())] += prod(count for _, count in combination)
    pieces = tuple(Piece(Case(method.entry, dtype, step, shape, method.options), count)
                   for shape, count in shapes.items())
    l1 = max(sum(p.case.footprint.values()) for p in pieces)
    tiling = Tiling(layer, step, method, tuple(tile.items()), pieces, l1)
    whole = whole_layer_case(tiling) if whole_layer else None
    return tiling if whole is None else replace(tiling, l1_bytes=sum(whole.footprint.values()))


def whole_layer_case(tiling: Tiling) -> Case | None:
    """The tiling as one run of the whole layer: the layer kind's whole-layer
    entry for its method, shaped by the layer's sizes and a tile size
    t<axis> for every axis any step cuts (the axes this step leaves whole at
    their full length). None where there is no such entry, or it does not
    take the method's options (the whole-layer pointwise is CHW only)."""
    entry = tiling.layer.kind.whole_layer.get(tiling.method.label)
    options = dict(tiling.method.options)
    if entry is None or any(options.get(name, values[0]) not in values for name, values in entry.options.items()):
        return None
    axes = dict.fromkeys(a for step_axes in tiling.layer.kind.axes.values() for a in step_axes)
    tile = {f"t{axis}": full_length(tiling.layer, tiling.step, axis) for axis in axes}
    tile.update({f"t{axis}": size for axis, size in tiling.tile})
    shape = {**tiling.layer.sizes, **tile}
    return Case(entry, tiling.pieces[0].case.dtype, tiling.step, tuple(shape.items()),
                tuple((name, options.get(name, values[0])) for name, values in entry.options.items()))


def largest_memory() -> int:
    """The most memory any target gives a layer's tensors: QEMU's RAM
    (PTL_QEMU_RAM_SIZE in harness/targets/qemu/runtime/ptl_qemu.h). GVSOC's L2 and
    the boards hold less; the host target only stands in for them."""
    from harness.targets.qemu import layout
    return layout()["PTL_QEMU_RAM_SIZE"]


class LayerTooLarge(NoFit):
    """A layer whose untiled step no target could hold."""


def check_holdable(layer: Layer, step: str, dtype: str) -> None:
    """Raises LayerTooLarge when the step's whole tensors, by the catalogue
    entry's own model (the method that needs least), exceed largest_memory()."""
    limit = largest_memory()
    need = min(sum(Case(m.entry, dtype, step, layer.sizes, m.options).footprint.values())
               for m in layer.kind.methods_for(dict(layer.flags), step))
    if need > limit:
        raise LayerTooLarge(f"{layer.describe()} {step} {dtype}: its tensors need {need:,} bytes, more than any "
                            f"target holds ({limit:,} bytes, QEMU's RAM); expected the sizes of a layer a "
                            f"microcontroller trains: check its sizes in the network file")


PROGRESS_EVERY = 2000   # candidate tilings between two progress calls


def tilings(layer: Layer, step: str, dtype: str, l1_bytes: int, max_cores: int,
            limit: int | None = None, progress: Callable[[int, int], None] | None = None,
            whole_layer: bool = False) -> list[Tiling]:
    """Every tiling of the step that fits l1_bytes, on every method, largest
    memory use first; the first `limit` of each method (the seed's
    NUM_TILING_SOLUTIONS). Raises NoFit when none fits, LayerTooLarge when no
    target could hold the layer. progress(done, total) is called every
    PROGRESS_EVERY candidates and at the end, when there are more. With
    whole_layer, a tiling fits by its whole-layer run's L1 (cut)."""
    check_holdable(layer, step, dtype)
    axes = layer.kind.axes[step]
    methods = layer.kind.methods_for(dict(layer.flags), step)
    per_axis = [tile_sizes(full_length(layer, step, a), max_cores if a == layer.kind.channel_split else 1)
                for a in axes]
    total, done = len(methods) * prod(len(sizes) for sizes in per_axis), 0
    out, smallest = [], None
    for method in methods:
        fitting = []
        for sizes in itertools.product(*per_axis):
            done += 1
            if progress and total > PROGRESS_EVERY and (done % PROGRESS_EVERY == 0 or done == total):
                progress(done, total)
            tiling = cut(layer, step, method, dtype, dict(zip(axes, sizes)), whole_layer)
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
