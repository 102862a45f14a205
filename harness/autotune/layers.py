"""Layer kinds and the network description.

A network is a TOML file with a list of layers and their sizes, as the
seed's Deployer lists them:

    name = "ds_cnn"
    [[layer]]
    name = "conv1"
    type = "conv2d"
    Ci = 1
    H = 49
    ...

Each layer kind names the catalogue entries that run it (its methods: the
im2col and direct conv, for example), the sizes it takes, and, for each
step, the axes along which the tiler may cut it. A tile is one call of the
primitive that produces a disjoint slice of the step's output, so a tiled
layer computes exactly what the whole layer does:
  FW  output channels, and output rows (with the input rows their windows read);
  WG  output and input channels (disjoint blocks of the weight gradient);
  IG  input channels (and pixel rows where a pixel reads no neighbour).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.cases import OpEntry
from harness.toml_input import TomlInputError, read_toml
from harness.catalogue import conv2d, conv_dw_pw, linalg, pool


@dataclass(frozen=True)
class Method:
    """One way to compute a layer: a catalogue entry and its fixed options."""

    label: str                   # "matmul", "im2col", "direct"
    entry: OpEntry
    options: tuple[tuple[str, int], ...]


@dataclass(frozen=True, eq=False)
class LayerKind:
    name: str
    fields: tuple[str, ...]              # sizes, in the catalogue's shape order
    defaults: dict[str, int]             # sizes that may be left out (strides 1, pads 0)
    flags: dict[str, tuple[int, ...]]    # options with their allowed values; the first is the default
    steps: tuple[str, ...]
    axes: dict[str, tuple[str, ...]]     # step -> tile axes: a size name, or "Ho" (output rows)
    methods: tuple[tuple[str, OpEntry, dict[str, int]], ...]  # label, entry, fixed options
    channel_split: str | None = None     # an axis the primitive splits over the cores: tiles keep
                                         # it a multiple of the core count (depthwise)
    # Method label -> the catalogue entry that runs the whole layer tiled, its
    # tensors in L2 and its tiles moved by the DMA (tiler.whole_layer_case).
    whole_layer: dict[str, OpEntry] = field(default_factory=dict)

    def methods_for(self, flags: dict[str, int], step: str) -> list[Method]:
        out = []
        for label, entry, fixed in self.methods:
            options = {**{k: v for k, v in flags.items() if k in entry.options}, **fixed}
            if step == "ig" and "bias" in options:
                options["bias"] = 0      # IG does not read the bias
            out.append(Method(label, entry, tuple((k, options[k]) for k in entry.options)))
        return out


_CONV = ("Ci", "H", "W", "Co", "Hk", "Wk", "sh", "sw", "L", "R", "U", "D")
_TRANSP = ("Ci", "Co", "H", "W", "Hk", "Wk", "sh", "sw", "L", "R", "U", "D")
_DW = ("C", "H", "W", "Hk", "Wk", "sh", "sw", "L", "R", "U", "D")
_GEOMETRY_DEFAULTS = dict(sh=1, sw=1, L=0, R=0, U=0, D=0)

KINDS = {kind.name: kind for kind in (
    LayerKind("linear", ("inp", "out"), {}, {"bias": (0, 1)}, ("fw", "wg", "ig"),
              {"fw": ("out",), "wg": ("out", "inp"), "ig": ("inp",)},
              (("matmul", linalg.LINEAR, {}),), whole_layer={"matmul": linalg.LINEAR_LAYER}),
    LayerKind("conv2d", _CONV, _GEOMETRY_DEFAULTS, {"HWC": (0, 1), "bias": (0, 1)}, ("fw", "wg", "ig"),
              {"fw": ("Co", "Ho"), "wg": ("Co", "Ci"), "ig": ("Ci",)},
              (("im2col", conv2d.CONV2D_KERNEL_SWEEP, {"dma": 0, "im2col": 1}),
               ("direct", conv2d.CONV2D_DIRECT, {"dma": 0, "im2col": 0}))),
    LayerKind("conv_pw", ("Ci", "Co", "H", "W"), {}, {"HWC": (0, 1)}, ("fw", "wg", "ig"),
              {"fw": ("Co", "H"), "wg": ("Co", "Ci"), "ig": ("Ci", "H")},
              (("matmul", conv_dw_pw.CONV_PW_KERNEL_SWEEP, {}),),
              whole_layer={"matmul": conv_dw_pw.CONV_PW_LAYER}),
    LayerKind("conv_dw", _DW, _GEOMETRY_DEFAULTS, {"HWC": (0, 1)}, ("fw", "wg", "ig"),
              {"fw": ("C", "Ho"), "wg": ("C",), "ig": ("C",)},
              (("direct", conv_dw_pw.CONV_DW, {}),), channel_split="C"),
    LayerKind("transp_conv2d", _TRANSP, _GEOMETRY_DEFAULTS, {"HWC": (0, 1), "bias": (0, 1)}, ("fw", "wg", "ig"),
              {"fw": ("Co",), "wg": ("Co", "Ci"), "ig": ("Ci",)},
              (("im2col", conv_dw_pw.TRANSP_CONV2D_KERNEL_SWEEP, {"im2col": 1}),
               ("direct", conv_dw_pw.TRANSP_CONV2D_DIRECT, {"im2col": 0}))),
    LayerKind("avgpool", ("C", "H", "W", "Hk", "Wk", "Hs", "Ws"), {}, {}, ("fw", "bw"),
              {"fw": ("C",), "bw": ("C",)}, (("direct", pool.AVGPOOL, {}),)),
    LayerKind("maxpool", ("C", "H", "W", "Hk", "Wk", "Hs", "Ws"), {}, {}, ("fw", "bw"),
              {"fw": ("C",), "bw": ("C",)}, (("direct", pool.MAXPOOL, {}),)),
)}

# Every step a layer kind has, in the order the outputs list them.
STEPS = tuple(dict.fromkeys(step for kind in KINDS.values() for step in kind.steps))


@dataclass(frozen=True)
class Layer:
    name: str
    kind: LayerKind
    shape: tuple[tuple[str, int], ...]
    flags: tuple[tuple[str, int], ...]
    steps: tuple[str, ...]

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.shape)

    def describe(self) -> str:
        return f"{self.name} ({self.kind.name} " + " ".join(f"{k}={v}" for k, v in self.shape + self.flags) + ")"


@dataclass(frozen=True)
class Network:
    name: str
    layers: tuple[Layer, ...] = field(default_factory=tuple)
    source: str = ""


class NetworkError(Exception):
    """A malformed network description: the message names the file, the layer and the field."""


def load_network(path: Path) -> Network:
    path = Path(path)
    try:
        data = read_toml(path)
    except TomlInputError as exc:
        raise NetworkError(f"{path}: the network description: {exc}") from None
    unknown = set(data) - {"name", "layer"}
    if unknown:
        raise NetworkError(f"{path}: unknown top-level key(s) {sorted(unknown)}; a network has `name` and "
                           f"a list of [[layer]] tables")
    layers = data.get("layer")
    if not isinstance(layers, list) or not layers:
        raise NetworkError(f"{path}: no layers: add [[layer]] tables, each with a name, a type and its sizes")
    parsed = [parse_layer(raw, f"{path}: layer {i + 1}") for i, raw in enumerate(layers)]
    names = [layer.name for layer in parsed]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise NetworkError(f"{path}: layer names must be unique; repeated: {duplicated}")
    return Network(str(data.get("name", path.stem)), tuple(parsed), str(path))


def parse_layer(raw: dict, where: str) -> Layer:
    """One layer table, checked field by field."""
    if not isinstance(raw, dict):
        raise NetworkError(f"{where}: expected a table of sizes, got {raw!r}")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise NetworkError(f"{where}: `name` must be a non-empty line of text (the header's macros are named "
                           f"after it, harness/autotune/names.py), got {name!r}")
    where = f"{where} ({name})"
    kind = KINDS.get(raw.get("type"))
    if kind is None:
        raise NetworkError(f"{where}: unknown layer type {raw.get('type')!r}; known types: {', '.join(KINDS)}")
    allowed = {"name", "type", "steps", *kind.fields, *kind.flags}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise NetworkError(f"{where}: unknown field(s) {unknown} for a {kind.name} layer; its fields are "
                           f"{', '.join(kind.fields)}" + (f", flags {', '.join(kind.flags)}" if kind.flags else ""))
    shape = []
    for f in kind.fields:
        value = raw.get(f, kind.defaults.get(f))
        if value is None:
            raise NetworkError(f"{where}: missing field {f} (a {kind.name} layer needs {', '.join(kind.fields)})")
        minimum = 0 if f in ("L", "R", "U", "D") else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise NetworkError(f"{where}: field {f} must be an integer >= {minimum}, got {value!r}")
        shape.append((f, value))
    flags = []
    for f, allowed_values in kind.flags.items():
        value = raw.get(f, allowed_values[0])
        if value not in allowed_values or isinstance(value, bool):
            raise NetworkError(f"{where}: field {f} must be one of {list(allowed_values)}, got {value!r}")
        flags.append((f, value))
    steps = raw.get("steps", list(kind.steps))
    if not isinstance(steps, list) or not steps or any(s not in kind.steps for s in steps):
        raise NetworkError(f"{where}: `steps` must be a non-empty list of {list(kind.steps)}, got {steps!r}")
    layer = Layer(name, kind, tuple(shape), tuple(flags), tuple(steps))
    _check_geometry(layer, where)
    return layer


def _check_geometry(layer: Layer, where: str) -> None:
    s = layer.sizes
    if "Hk" in s and "sh" in s and layer.kind.name != "transp_conv2d":
        if s["H"] + s["U"] + s["D"] < s["Hk"] or s["W"] + s["L"] + s["R"] < s["Wk"]:
            raise NetworkError(f"{where}: the {s['Hk']}x{s['Wk']} kernel is larger than the padded input "
                               f"({s['H'] + s['U'] + s['D']}x{s['W'] + s['L'] + s['R']})")
    if "Hs" in s and (s["H"] < s["Hk"] or s["W"] < s["Wk"]):
        raise NetworkError(f"{where}: the {s['Hk']}x{s['Wk']} window is larger than the input {s['H']}x{s['W']}")
