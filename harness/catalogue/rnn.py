"""Catalogue of the RNN layer (pulp_rnn_fp32_{fw,bw}_cl, FP32, the API's
only dtype): N steps of K inputs, M hidden units, forked inside the
primitive over rows.

Shapes: one step of one unit, step counts and sizes around the core counts
(1, 3, 8) and past them, and a realistic 16-step layer of 32 inputs and 16
units. The BW reads y as the rounded forward output of its own x, s and
weights (golden/rnn.py).

tanh_prll approximates tanh (shared/TRAINLIB_API_MORE.md: y within 3e-5 of
tanh, absolute): the reference is the exact tanh, and that bound is
propagated into the FW tolerance.
"""
from __future__ import annotations

from golden import rnn
from golden.formats import format_named
from harness.cases import OpEntry
from harness.catalogue.act import TANH_ABS

SHAPES = tuple(dict(N=n, K=k, M=m) for n, k, m in (
    (1, 1, 1), (3, 5, 4), (8, 8, 8), (9, 17, 7), (2, 3, 9), (16, 32, 16)))


def _inputs(c) -> dict[str, tuple[int, ...]]:
    N, K, M = c.shape["N"], c.shape["K"], c.shape["M"]
    # every step gets every input; the op copies only those its step reads
    return {"x": (N * K,), "s": (N * M,), "wx": (K * M,), "ws": (M * M,), "y": (N * M,), "dy": (N * M,)}


def _values(c, inputs):
    y = rnn.forward_output(inputs, c.shape["N"], c.shape["K"], c.shape["M"])
    return dict(inputs, y=format_named(c.dtype).round(y.ravel()))


def _footprint(c) -> dict[str, int]:
    N, K, M = c.shape["N"], c.shape["K"], c.shape["M"]
    tensors = {"input": N * K, "state": N * M, "output": N * M, "coeff_x": K * M, "coeff_s": M * M,
               "temp_buffer": max(N * K, N * M, K * M), "grad_buffer": N * M}
    if c.step == "bw":       # the diffs of input, output and both weights
        tensors.update(input_diff=N * K, output_diff=N * M, coeff_x_diff=K * M, coeff_s_diff=M * M)
    return {name: 4 * n for name, n in tensors.items()}


RNN = OpEntry(
    name="rnn",
    unit="rnn",
    runner_op=lambda dtype: "rnn_fp32",
    steps=("fw", "bw"),
    dtypes=("fp32",),
    shapes=SHAPES,
    inputs=_inputs,
    params=lambda c: {**c.shape, "step": c.step_code},
    input_values=_values,
    reference=lambda c, inputs: rnn.rnn(inputs, c.step, c.shape["N"], c.shape["K"], c.shape["M"],
                                        c.entry.approximations["tanh_abs"]),
    cores=(1, 3, 8),
    kernels=lambda dtype, step: (0,),
    kernel_names=lambda dtype: ("direct",),
    footprint=_footprint,
    approximations={"tanh_abs": TANH_ABS},
)

ENTRIES = [RNN]
