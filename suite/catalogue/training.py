"""Catalogue of the training runs: a small CNN trained on the device for 20
steps with the library's own primitives (harness/runtime/runner/ops_train_*.c),
checked after every step against PyTorch in float64; then, the same way, a
depthwise-separable block, a transformer block and a recurrent network
trained through time (ops_train_rnn.c), each in its section below.

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

import numpy as np

from golden import training
from golden.bundle import Reference
from golden.formats import format_named
from golden.losses import micro_value
from harness.cases import ChainedCheck, OpEntry
from harness.dtypes import build_of, element_bytes
from harness.lineplot import line_plot_svg
from suite.catalogue.losses import CROSSENTROPY
from suite.catalogue.mhsa import MHSA
from suite.catalogue.rnn import RNN

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
            "attention": 4 * (8 * F * L + 2 * heads * L * L + 3 * L * L + max(E * F, F * L, L * L) + 2 * L)}


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
            "sequence": 4 * (T * (K + M) + T * M + (K + M) + M + 2 * C + 2 * M),
            "step gradients": 4 * (n_w + M * M)}


RNN_SEQUENCE = _fp32_run("train_rnn", "train_rnn", RNN_SHAPES, _rnn_inputs, _rnn_input_values, _rnn_reference,
                         _rnn_chained, _rnn_footprint)

ENTRIES = [CNN, DSBLOCK, TRANSFORMER, RNN_SEQUENCE]
