"""Catalogue of the training runs: a small CNN trained on the device for 20
steps with the library's own primitives (harness/runtime/runner/ops_train_*.c),
checked after every step against PyTorch in float64; then, the same way, a
depthwise-separable block, a transformer block and a recurrent network
trained through time (ops_train_rnn.c), each in its section below; last, a
whole training step of DS-CNN with every pass tiled through far memory
(ops_train_ds_cnn.c), judged pass by pass (golden/ds_cnn_step.py).

  x [2 x 8 x 8] -> conv2d 3x3, pad 1, 4 channels -> ReLU -> maxpool 2x2/2
  -> linear 64 -> 3 -> CrossEntropy; gradient descent, lr 1/16

Four samples, one per step in turn, with one-hot labels. Each step is judged
teacher-forced: recomputed in float64 from the device's weights after the
step before, with the propagated bound of golden/training.py (which also says
how the distance to the free-running float64 run grows with the steps, and
why that distance is reported, as the loss plot, rather than asserted).
A failure's worst elements are indexed (step, element).

Sparse updates: frozen 1 keeps the conv fixed (no weight gradient, no
update), frozen 2 the linear layer, whose input gradient must still reach
the conv. A frozen layer's weights must stay bit-identical.

dtypes: fp32 and IEEE fp16. Not bf16: the conv's weight gradient sums
H*W = 64 products, and gamma(64) at bfloat16's u = 2^-8 is 0.33, a bound
that says nothing.
"""
from __future__ import annotations

import math
import re
import tomllib
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from golden import ds_cnn_step, training
from golden.bundle import Reference
from golden.formats import format_named
from golden.losses import micro_value
from harness.cases import ChainedCheck, OpEntry
from harness.dtypes import build_of, element_bytes
from harness.lineplot import line_plot_svg
from harness.catalogue.losses import CROSSENTROPY
from harness.catalogue.mhsa import MHSA
from harness.catalogue.rnn import RNN

CNN_SHAPES = (dict(Ci=2, H=8, W=8, Co=4, K=3, S=4, N=20),)
LR_MICRO = 62500     # 1/16, exact in every format
OUTPUTS = ("loss", "g1", "g2", "w1s", "w2s")


def _sizes(c) -> dict[str, int]:
    s = c.shape
    n_p = s["Co"] * (s["H"] // 2) * (s["W"] // 2)
    return dict(n_w1=s["Co"] * s["Ci"] * 9, n_w2=s["K"] * n_p)


def _inputs(c) -> dict[str, tuple[int, ...]]:
    s = c.shape
    n_p = s["Co"] * (s["H"] // 2) * (s["W"] // 2)
    return {"x": (s["S"], s["Ci"], s["H"], s["W"]), "t": (s["S"], s["K"]),
            "w1": (s["Co"], s["Ci"], 3, 3), "w2": (s["K"], n_p)}


def _input_values(c, inputs: dict) -> dict:
    """One-hot labels (sample i has class i mod K) and initial weights scaled
    by powers of two, so they stay on the grid: conv 1/2, linear 1/4 (a
    fan-in of 18 and 64)."""
    s = c.shape
    t = np.zeros((s["S"], s["K"]))
    t[np.arange(s["S"]), np.arange(s["S"]) % s["K"]] = 1.0
    return dict(inputs, t=t, w1=inputs["w1"] / 2, w2=inputs["w2"] / 4)


def _params(c) -> dict[str, int]:
    return {**c.shape, "lr_micro": LR_MICRO, "frozen": c.options["frozen"]}


def _lr(c) -> float:
    return micro_value(LR_MICRO, format_named(c.dtype))


def _reference(c, inputs) -> dict[str, Reference]:
    """The float64 trajectory; the judged references are the chained ones."""
    run = training.trajectory(inputs, c.shape["N"], _lr(c), c.options["frozen"])
    return {name: Reference(run[name], np.abs(run[name]), 0) for name in OUTPUTS}


def _judged(title: str, steps: dict, device_loss, free_loss) -> ChainedCheck:
    """The teacher-forced (value, bound) of each output as references, and
    the loss plot of the device against the free-running float64 run."""
    references = {name: Reference(value, np.zeros_like(value), 0, propagated=bound)
                  for name, (value, bound) in steps.items()}
    plot = line_plot_svg(title, "step", "cross-entropy loss",
                         {"device": list(device_loss), "PyTorch float64": list(free_loss)},
                         dashed=("PyTorch float64",))
    return ChainedCheck(references, {"loss.svg": plot})


def _chained(c, inputs: dict, outputs: dict) -> ChainedCheck:
    fmt = format_named(c.dtype)
    steps = training.teacher_forced(inputs, outputs, _lr(c), c.options["frozen"], fmt,
                                    CROSSENTROPY.tolerance_scale.get(c.dtype, 1.0))
    free = training.trajectory(inputs, c.shape["N"], _lr(c), c.options["frozen"])
    return _judged(f"CNN training, {c.dtype}, frozen={c.options['frozen']}: loss per step", steps,
                   outputs["loss"], free["loss"])


def _footprint(c) -> dict[str, int]:
    """What ops_train_cnn.c keeps in L1 at once: data set, weights and their
    gradients, activations and their gradients, the im2col buffer."""
    s, z = c.shape, _sizes(c)
    size = element_bytes(c.dtype)
    n_z1 = s["Co"] * s["H"] * s["W"]
    n_p = n_z1 // 4
    return {"data": size * s["S"] * (s["Ci"] * s["H"] * s["W"] + s["K"]),
            "weights": size * 2 * (z["n_w1"] + z["n_w2"]),
            "activations": size * 2 * (2 * n_z1 + n_p + s["K"]),
            "im2col": size * s["Ci"] * 9 * s["H"] * s["W"]}


CNN = OpEntry(
    name="train_cnn",
    unit="train_cnn",
    runner_op=lambda dtype: f"train_cnn_{build_of(dtype)}",
    steps=("train",),
    dtypes=("fp32", "fp16"),
    shapes=CNN_SHAPES,
    options={"frozen": (0, training.FROZEN_CONV, training.FROZEN_LINEAR)},
    inputs=_inputs,
    params=_params,
    input_values=_input_values,
    reference=_reference,
    chained=_chained,
    cores=(1, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("mm",),
    footprint=_footprint,
)

def _fp32_run(name: str, unit: str, shapes, inputs, input_values, reference, chained, footprint) -> OpEntry:
    """A training run in FP32 whose params are its shape and the learning
    rate; one kernel (mm), cores 1 and 8."""
    return OpEntry(name=name, unit=unit, runner_op=lambda dtype: f"{name}_fp32", steps=("train",), dtypes=("fp32",),
                   shapes=shapes, inputs=inputs, params=lambda c: {**c.shape, "lr_micro": LR_MICRO},
                   input_values=input_values, reference=reference, chained=chained, cores=(1, 8),
                   kernels=lambda dtype, step: (0,), kernel_names=lambda dtype: ("mm",), footprint=footprint)


# ---- the depthwise-separable block with InstanceNorm and a residual (FP32) ----

DS_SHAPES = (dict(C=4, H=8, W=8, K=3, S=4, N=20),)
DS_OUTPUTS = ("loss", "grads", "weights", "dx")


def _ds_sizes(s) -> tuple[int, int]:
    n_p = s["C"] * (s["H"] // 2) * (s["W"] // 2)
    return n_p, 9 * s["C"] + s["C"] * s["C"] + 2 * s["C"] + s["K"] * n_p


def _ds_inputs(c) -> dict[str, tuple[int, ...]]:
    s = c.shape
    return {"x": (s["S"], s["C"], s["H"], s["W"]), "t": (s["S"], s["K"]), "params": (_ds_sizes(s)[1],)}


def _ds_input_values(c, inputs: dict) -> dict:
    """One-hot labels; depthwise and pointwise weights scaled by 1/2, gamma
    around 1 (1 + u/4, rounded), beta and the linear weights by 1/4."""
    s = c.shape
    C, K = s["C"], s["K"]
    t = np.zeros((s["S"], K))
    t[np.arange(s["S"]), np.arange(s["S"]) % K] = 1.0
    p = inputs["params"].copy()
    o_in = 9 * C + C * C
    p[:o_in] /= 2
    p[o_in:o_in + C] = format_named(c.dtype).round(1 + p[o_in:o_in + C] / 4)
    p[o_in + C:] /= 4
    return dict(inputs, t=t, params=p)


def _ds_reference(c, inputs) -> dict[str, Reference]:
    run = training.dsblock_trajectory(inputs, c.shape["N"], _lr(c), c.shape["C"], c.shape["K"])
    return {name: Reference(run[name], np.abs(run[name]), 0) for name in DS_OUTPUTS}


def _ds_chained(c, inputs: dict, outputs: dict) -> ChainedCheck:
    steps = training.dsblock_teacher_forced(inputs, outputs, _lr(c), c.shape["C"], c.shape["K"],
                                            format_named(c.dtype), CROSSENTROPY.tolerance_scale.get(c.dtype, 1.0))
    free = training.dsblock_trajectory(inputs, c.shape["N"], _lr(c), c.shape["C"], c.shape["K"])
    return _judged(f"Depthwise-separable block training, {c.dtype}: loss per step", steps, outputs["loss"],
                   free["loss"])


def _ds_footprint(c) -> dict[str, int]:
    s = c.shape
    n_x = s["C"] * s["H"] * s["W"]
    n_p, n_params = _ds_sizes(s)
    return {"data": 4 * s["S"] * (n_x + s["K"]), "parameters": 4 * 2 * n_params,
            "activations": 4 * 2 * (6 * n_x + n_p + s["K"]), "work": 4 * (s["C"] * s["C"] + 3 * s["C"] + 1)}


DSBLOCK = _fp32_run("train_dsblock", "train_dsblock", DS_SHAPES, _ds_inputs, _ds_input_values, _ds_reference, _ds_chained,
                    _ds_footprint)


# ---- a transformer block (FP32): LayerNorm -> attention -> residual -> linear -> CE ----

TF_SHAPES = (dict(L=8, E=8, F=8, heads=2, K=4, S=4, N=20),)
SGD_OUTPUTS = ("loss", "grads", "weights")   # the runs whose parameters are one vector
TF_LN_EPS = float(np.float32(1e-5))      # the LayerNorm's eps[0], as ops_train_transformer.c passes it


def _tf_sizes(s) -> tuple[int, int]:
    """(parameters: wq, wk, wv, wo [E x F each] and the linear [K x E*L];
    fixed: LayerNorm weight and bias [E each], bq, bk, bv [F each])."""
    return 4 * s["E"] * s["F"] + s["K"] * s["L"] * s["E"], 2 * s["E"] + 3 * s["F"]


def _tf_inputs(c) -> dict[str, tuple[int, ...]]:
    s = c.shape
    n_params, n_fixed = _tf_sizes(s)
    return {"x": (s["S"], s["L"], s["E"]), "t": (s["S"], s["K"]), "params": (n_params,), "fixed": (n_fixed,)}


def _tf_input_values(c, inputs: dict) -> dict:
    """One-hot labels; attention weights / 2, the linear's / 8 (a fan-in of
    E*L = 64); the LayerNorm weight around 1 and its bias, and the fixed
    attention biases, / 4."""
    s = c.shape
    t = np.zeros((s["S"], s["K"]))
    t[np.arange(s["S"]), np.arange(s["S"]) % s["K"]] = 1.0
    n_att = 4 * s["E"] * s["F"]
    p = inputs["params"].copy()
    p[:n_att] /= 2
    p[n_att:] /= 8
    fixed = inputs["fixed"] / 4
    fixed[:s["E"]] = format_named(c.dtype).round(1 + fixed[:s["E"]])
    return dict(inputs, t=t, params=p, fixed=fixed)


def _tf_reference(c, inputs) -> dict[str, Reference]:
    run = training.transformer_trajectory(inputs, c.shape["N"], _lr(c), c.shape, TF_LN_EPS)
    return {name: Reference(run[name], np.abs(run[name]), 0) for name in SGD_OUTPUTS}


def _tf_chained(c, inputs: dict, outputs: dict) -> ChainedCheck:
    ap = MHSA.approximations
    steps = training.transformer_teacher_forced(inputs, outputs, _lr(c), c.shape, format_named(c.dtype), TF_LN_EPS,
                                                CROSSENTROPY.tolerance_scale.get(c.dtype, 1.0),
                                                ap["fastexp_gist_rel"], ap["q_rsqrt_rel"])
    free = training.transformer_trajectory(inputs, c.shape["N"], _lr(c), c.shape, TF_LN_EPS)
    return _judged(f"Transformer block training, {c.dtype}: loss per step", steps, outputs["loss"], free["loss"])


def _tf_footprint(c) -> dict[str, int]:
    """What ops_train_transformer.c keeps in L1 at once (4-byte elements)."""
    s = c.shape
    L, E, F, heads, K = s["L"], s["E"], s["F"], s["heads"], s["K"]
    n_params, n_fixed = _tf_sizes(s)
    n_x = L * E
    return {"data": 4 * s["S"] * (n_x + K), "parameters": 4 * (2 * n_params + 3 * E * F + n_fixed),
            "activations": 4 * (7 * n_x + 2 * K),
            "attention": 4 * (8 * F * L + 4 * heads * L * L + L * L + max(E * F, F * L, L * L) + 2 * L)}


TRANSFORMER = _fp32_run("train_transformer", "train_transformer", TF_SHAPES, _tf_inputs, _tf_input_values, _tf_reference,
                        _tf_chained, _tf_footprint)


# ---- a recurrent network (FP32): the RNN chained over a sequence -> linear -> CE ----

RNN_SHAPES = (dict(T=6, K=4, M=8, C=4, S=4, N=20),)


def _rnn_sizes(s) -> tuple[int, int]:
    """(the stacked RNN weights [Wx; Ws], (K+M) x M; the linear, C x M)."""
    return (s["K"] + s["M"]) * s["M"], s["C"] * s["M"]


def _rnn_inputs(c) -> dict[str, tuple[int, ...]]:
    s = c.shape
    return {"x": (s["S"], s["T"], s["K"]), "t": (s["S"], s["C"]), "params": (sum(_rnn_sizes(s)),)}


def _rnn_input_values(c, inputs: dict) -> dict:
    """One-hot labels; the RNN weights / 4 (a fan-in of K + M = 12, so the
    states stay off tanh's flat tails), the linear's / 2 (a fan-in of 8)."""
    s = c.shape
    t = np.zeros((s["S"], s["C"]))
    t[np.arange(s["S"]), np.arange(s["S"]) % s["C"]] = 1.0
    n_w, _ = _rnn_sizes(s)
    p = inputs["params"].copy()
    p[:n_w] /= 4
    p[n_w:] /= 2
    return dict(inputs, t=t, params=p)


def _rnn_reference(c, inputs) -> dict[str, Reference]:
    run = training.rnn_trajectory(inputs, c.shape["N"], _lr(c), c.shape)
    return {name: Reference(run[name], np.abs(run[name]), 0) for name in SGD_OUTPUTS}


def _rnn_chained(c, inputs: dict, outputs: dict) -> ChainedCheck:
    steps = training.rnn_teacher_forced(inputs, outputs, _lr(c), c.shape, format_named(c.dtype),
                                        CROSSENTROPY.tolerance_scale.get(c.dtype, 1.0),
                                        RNN.approximations["tanh_abs"])
    free = training.rnn_trajectory(inputs, c.shape["N"], _lr(c), c.shape)
    return _judged(f"RNN sequence training (BPTT), {c.dtype}: loss per step", steps, outputs["loss"], free["loss"])


def _rnn_footprint(c) -> dict[str, int]:
    """What ops_train_rnn.c keeps in L1 at once (4-byte elements)."""
    s = c.shape
    T, K, M, C = s["T"], s["K"], s["M"], s["C"]
    n_w, n_l = _rnn_sizes(s)
    return {"data": 4 * s["S"] * (T * K + C), "parameters": 4 * 2 * (n_w + n_l),
            "sequence": 4 * (T * (K + M) + T * M + (K + M) + M + 2 * C + (K + M) * M + M),
            "step gradients": 4 * (n_w + M * M)}


RNN_SEQUENCE = _fp32_run("train_rnn", "train_rnn", RNN_SHAPES, _rnn_inputs, _rnn_input_values, _rnn_reference,
                         _rnn_chained, _rnn_footprint)



# ---- a whole training step of DS-CNN (FP32), every pass tiled through far memory ----
#
# ops_train_ds_cnn.c runs networks/ds_cnn.toml's layers (with a ReLU after
# each conv) as a deployment runs them: tensors in far memory, each pass cut
# into tiles that the DMA moves through a near arena of NEAR_BYTES. The
# passes that go through a matmul kernel take their kernel and tiles from the
# case's config (one row per pass, in the order of ds_cnn_passes.def).

DS_CNN_NETWORK = Path(__file__).resolve().parents[2] / "networks" / "ds_cnn.toml"
DS_CNN_PASSES_DEF = Path(__file__).resolve().parents[2] / "harness" / "runtime" / "runner" / "ds_cnn_passes.def"
DS_CNN_LAYOUT = ("conv2d",) + ("conv_dw", "conv_pw") * ds_cnn_step.BLOCKS + ("avgpool", "linear")
NEAR_BYTES = 48 * 1024   # under GVSOC's 51,440 bytes of L1 heap, with room for the guards
_PASS = re.compile(r"^DS_CNN_PASS\((\w+),\s*(\w+),\s*(\w+),\s*(\w+)\)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Pass:
    layer: str
    step: str
    axes: tuple[str, ...]     # the tile axes of its config row, in order


def ds_cnn_passes() -> tuple[Pass, ...]:
    """The config rows' passes, read from the one list the C op compiles."""
    return tuple(Pass(layer, step, tuple(a for a in (a, b) if a != "_"))
                 for layer, step, a, b in _PASS.findall(DS_CNN_PASSES_DEF.read_text()))


@dataclass(frozen=True)
class StepConfig:
    """Per pass (ds_cnn_passes order), its kernel index and its tiles by axis
    (an axis left out: the largest tile that fits)."""
    label: str
    rows: tuple[tuple[int, tuple[tuple[str, int], ...]], ...]

    @property
    def id(self) -> int:
        """The case option that names it: a digest of the rows (so a case id means one config)."""
        return zlib.crc32(repr(self.rows).encode()) & 0x7FFFFFFF

    def tensor(self) -> np.ndarray:
        out = []
        for p, (kernel, tiles) in zip(ds_cnn_passes(), self.rows):
            tile = dict(tiles)
            out.append([kernel] + [tile.get(axis, 0) for axis in p.axes] + [0] * (2 - len(p.axes)))
        return np.array(out, dtype=np.float64)

    def describe(self) -> str:
        return "; ".join(f"{p.layer}.{p.step} k{kernel}" + "".join(f" t{a}={v}" for a, v in tiles)
                         for p, (kernel, tiles) in zip(ds_cnn_passes(), self.rows))


def ds_cnn_config(label: str, choose) -> StepConfig:
    """choose(pass) -> (kernel index, {axis: tile}) for every pass."""
    rows = []
    for p in ds_cnn_passes():
        kernel, tiles = choose(p)
        unknown = set(tiles) - set(p.axes)
        if unknown:
            raise ValueError(f"DS-CNN config {label}: {p.layer}.{p.step} has no tile axis {sorted(unknown)}")
        rows.append((kernel, tuple(sorted(tiles.items()))))
    return StepConfig(label, tuple(rows))


def _ds_cnn_shape() -> dict[str, int]:
    """The network's sizes as the op's params name them, from networks/ds_cnn.toml:
    one training step (L2 on GVSOC holds one step's tensors at this width and
    little more)."""
    layers = tomllib.loads(DS_CNN_NETWORK.read_text())["layer"]
    types = tuple(layer["type"] for layer in layers)
    if types != DS_CNN_LAYOUT:
        raise ValueError(f"{DS_CNN_NETWORK}: train_ds_cnn runs the layers {DS_CNN_LAYOUT}, the file has {types}")
    conv, fc = layers[0], layers[-1]
    C = conv["Co"]
    Ho, Wo = (conv["H"] + conv["U"] + conv["D"] - conv["Hk"]) // conv["sh"] + 1, \
        (conv["W"] + conv["L"] + conv["R"] - conv["Wk"]) // conv["sw"] + 1
    # What ops_train_ds_cnn.c builds in: one input channel, 3x3 depthwise with pad 1, square pointwise, a pool
    # over the whole map, a linear layer with its bias.
    fixed = {"conv2d": dict(Ci=1), "conv_dw": dict(C=C, H=Ho, W=Wo, Hk=3, Wk=3, L=1, R=1, U=1, D=1),
             "conv_pw": dict(Ci=C, Co=C, H=Ho, W=Wo), "avgpool": dict(C=C, H=Ho, W=Wo, Hk=Ho, Wk=Wo),
             "linear": dict(inp=C, bias=1)}
    for layer in layers:
        wrong = {k: layer.get(k) for k, v in fixed[layer["type"]].items() if layer.get(k) != v}
        if wrong:
            raise ValueError(f"{DS_CNN_NETWORK}: train_ds_cnn builds in {fixed[layer['type']]} for a "
                             f"{layer['type']} layer; {layer['name']} has {wrong}")
    return dict(H=conv["H"], W=conv["W"], C=conv["Co"], Hk=conv["Hk"], Wk=conv["Wk"], sh=conv["sh"], sw=conv["sw"],
                U=conv["U"], D=conv["D"], L=conv["L"], R=conv["R"], K=fc["out"], S=1, N=1)


def _mm_largest(p: Pass):
    return 0, {}


# A mix of the API's FP32 kernels, one per pass, with tiles that leave edge
# tiles on every cut axis at both widths (C 64 and 8; Ho 25, K 12).
_MIXED_KERNELS = (1, 3, 5, 8, 10, 12, 15, 18, 20, 22, 23, 2, 4, 6, 9, 11, 13)
_MIXED_TILES = {("conv1", "fw"): {"Co": 3}, ("conv1", "wg"): {"Co": 5},
                ("fw",): {"Co": 3, "H": 8}, ("wg",): {"Co": 5, "Ci": 3}, ("ig",): {"Ci": 5, "H": 7},
                ("fc", "fw"): {"out": 5}, ("fc", "wg"): {"out": 5, "inp": 3}, ("fc", "ig"): {"inp": 3}}
# The same network 8 channels wide, 3 steps: the whole-step bounds are tight
# at this width (golden/ds_cnn_step.py), so the chaining of steps is judged too.
DS_CNN_NARROW = dict(C=8, S=2, N=3)


def _mixed(p: Pass):
    index = ds_cnn_passes().index(p)
    tiles = _MIXED_TILES.get((p.layer, p.step), _MIXED_TILES.get((p.step,)))
    return _MIXED_KERNELS[index % len(_MIXED_KERNELS)], tiles


def _ds_cnn_inputs(c) -> dict[str, tuple[int, ...]]:
    s = c.shape
    return {"x": (s["S"], s["H"], s["W"]), "t": (s["S"], s["K"]), "params": (ds_cnn_step.param_count(s),),
            "config": (len(ds_cnn_passes()), 3)}


DS_CNN_SHAPE = _ds_cnn_shape()
DS_CNN_SHAPES = (DS_CNN_SHAPE, {**DS_CNN_SHAPE, **DS_CNN_NARROW})


def ds_cnn_step_entry(configs: tuple[StepConfig, ...], shapes: tuple[dict, ...] = DS_CNN_SHAPES) -> OpEntry:
    """The training step's entry for these configs (option `config`:
    StepConfig.id), at the DS-CNN width and 8 channels wide."""
    by_id = {config.id: config for config in configs}

    def input_values(c, inputs: dict) -> dict:
        return {**ds_cnn_step.initial_values(inputs, c.shape), "config": by_id[c.options["config"]].tensor()}

    def reference(c, inputs) -> dict[str, Reference]:
        run = ds_cnn_step.trajectory(inputs, c.shape["N"], _lr(c), c.shape)
        # The last step's intermediates: their shapes only here; chained judges them pass by pass.
        shapes = {"acts": (2 * ds_cnn_step.BLOCKS + 1, c.shape["C"] * math.prod(ds_cnn_step.out_size(c.shape)))}
        shapes.update(grad_maps=shapes["acts"], heads=(2 * (c.shape["C"] + c.shape["K"]),))
        return {**{name: Reference(run[name], np.abs(run[name]), 0) for name in SGD_OUTPUTS},
                **{name: Reference(np.zeros(shape), np.zeros(shape), 0) for name, shape in shapes.items()}}

    def chained(c, inputs: dict, outputs: dict) -> ChainedCheck:
        fmt, ce_scale = format_named(c.dtype), CROSSENTROPY.tolerance_scale.get(c.dtype, 1.0)
        steps = ds_cnn_step.teacher_forced(inputs, outputs, _lr(c), c.shape, fmt, ce_scale)
        # Each pass of the last step judged on the device's own inputs to it:
        # at C = 64 the whole-step bound outgrows the values (golden/ds_cnn_step.py),
        # a pass's own bound does not. The last step's gradients are judged so too.
        passes = ds_cnn_step.pass_checks(inputs, outputs, c.shape, fmt, ce_scale)
        grads, bounds = (np.array(a) for a in steps["grads"])
        grads[-1], bounds[-1] = passes.pop("grads_last")
        steps = {**steps, "grads": (grads, bounds), **passes}
        free = ds_cnn_step.trajectory(inputs, c.shape["N"], _lr(c), c.shape)
        return _judged(f"DS-CNN training step ({by_id[c.options['config']].label}), {c.dtype}: loss per step",
                       steps, outputs["loss"], free["loss"])

    return OpEntry(name="train_ds_cnn", unit="train_ds_cnn", runner_op=lambda dtype: "train_ds_cnn_fp32", steps=("train",),
                   dtypes=("fp32",), shapes=shapes, options={"config": tuple(by_id)},
                   inputs=_ds_cnn_inputs,
                   params=lambda c: {**c.shape, "lr_micro": LR_MICRO, "near_bytes": NEAR_BYTES},
                   input_values=input_values, reference=reference, chained=chained, cores=(1, 8),
                   kernels=lambda dtype, step: (0,), kernel_names=lambda dtype: ("config",),
                   footprint=lambda c: {"near arena": NEAR_BYTES})


DS_CNN_CONFIGS = (ds_cnn_config("mm, the largest tiles", _mm_largest), ds_cnn_config("mixed kernels and tiles", _mixed))
DS_CNN_STEP = ds_cnn_step_entry(DS_CNN_CONFIGS)

ENTRIES = [CNN, DSBLOCK, TRANSFORMER, RNN_SEQUENCE, DS_CNN_STEP]
