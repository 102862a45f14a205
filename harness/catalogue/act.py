"""Catalogue of the activations family: ReLU, LeakyReLU and Sigmoid, FW and BW.

Element-wise on a flat vector of n = input->dim elements; the API's wrappers
fork NUM_CORES themselves and split n in blocks of ceil(n / cores), so the
sizes sit around the core counts (1, 3, 8) and the unroll factors a library
may use (2, 4, 8, 16), with a prime and a realistic 1000-element map.
No matmul: every case has the single variant "direct" per core count.

Inputs are the entry's own (golden/act.py, edge_inputs): exact +0 and -0 for
ReLU and LeakyReLU (the gradient at x == 0 is 0, resp. s*dy), saturating
x from -87.5 to 104 for Sigmoid (golden/act.py says why not lower), and the Sigmoid BW's y is the rounded sigmoid of
x (it reads the forward output, not x).
"""
from __future__ import annotations

from golden import act
from golden.formats import format_named
from harness import core_split
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes

ACT_SHAPES = tuple(dict(n=n) for n in (
    1,                  # a single element: 2 of 3 cores and 7 of 8 get nothing
    2, 3, 4,            # fewer elements than cores; around 3 cores and an unroll of 2 or 4
    7, 8, 9,            # around 8 cores and an unroll of 8
    15, 16, 17,         # around 2 x 8 and an unroll of 16: 17 on 8 cores leaves core 5 short, 6 and 7 idle
    97,                 # prime
    1000,               # realistic: a 10-channel 10x10 map; not a multiple of 3
))

STEPS = ("fw", "bw")

# negative_slope in thousandths (the runner's params are ints, ops_act.c):
# torch's default 0.01 and a large 0.2; neither is exact in any format, so
# the slope the library receives is the rounded one (golden.act.leaky_slope).
LEAKY_SLOPES_MILLI = (10, 200)



def _inputs_of(op: str):
    names = ("x", "y", "dy") if op == "sigmoid" else ("x", "dy")
    return lambda c: {name: (c.shape["n"],) for name in names}


def _params(c) -> dict[str, int]:
    params = {"n": c.shape["n"], "step": c.step_code}
    if c.entry.name == "leakyrelu":
        params["slope_milli"] = c.options["slope_milli"]
    return params


def _footprint(c) -> dict[str, int]:
    """The buffers ops_act.c allocates for the step, as the primitive uses
    them: FW x and y; BW dy, dx and what the BW reads besides (x, or the
    forward output y for Sigmoid)."""
    size = element_bytes(c.dtype) * c.shape["n"]
    if c.step == "fw":
        return {"input": size, "output": size}
    read = "output" if c.entry.name == "sigmoid" else "input"
    return {read: size, "output_grad": size, "input_grad": size}


def _entry(name: str, reference, options=None, tolerance_scale=None) -> OpEntry:
    return OpEntry(
        name=name,
        unit="act",
        runner_op=lambda dtype: f"{name}_{build_of(dtype)}",
        steps=STEPS,
        dtypes=DTYPES,
        shapes=ACT_SHAPES,
        options=options or {},
        inputs=_inputs_of(name),
        params=_params,
        input_values=lambda c, inputs: act.edge_inputs(name, inputs, format_named(c.dtype)),
        reference=reference,
        cores=(1, 3, 8),
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
        footprint=_footprint,
        tolerance_scale=tolerance_scale or {},
    )


RELU = _entry("relu", lambda c, inputs: act.relu(inputs, c.step))

LEAKYRELU = _entry(
    "leakyrelu",
    lambda c, inputs: act.leakyrelu(inputs, c.step, act.leaky_slope(c.options["slope_milli"],
                                                                     format_named(c.dtype))),
    options={"slope_milli": LEAKY_SLOPES_MILLI},
)

SIGMOID = _entry(
    "sigmoid",
    lambda c, inputs: act.sigmoid(inputs, c.step, c.dtype),
    # The FW calls expf, which is not a correctly rounded operation. With
    # E = expf(-|x|) = e^-|x| (1 + d1), |d1| <= 2u (expf within one ulp:
    # 1 ulp <= 2u relative; measured on every 97th float of [-104, 0]: glibc
    # 0.502 ulp on host, picolibc 1.8 0.858 ulp on QEMU), the library's
    # y = N / fl(1 + E) rounded (N = 1, or E for x < 0) satisfies
    #   y / sigmoid(x) = (1 + d3) / ((1 + d2)(1 + t)),  |t| <= |d1|,
    # since d(ln sigmoid)/d(ln E) lies in [-1, 1]. So |y - sigmoid(x)| <=
    # ((1+u)/((1-u)(1-|d1|)) - 1) |y|, against the reference's gamma(3) |y|
    # (reduction 3: exp, add, divide):
    #   fp32: |d1| <= 2u, within gamma(4) |y|; gamma(4)/gamma(3) =
    #         (4/3)(1-3u)/(1-4u) < 1.334 (u = 2^-24); the underflow part,
    #         expf's <= 2 eta plus the divide's eta, is within 1.334 * 3 eta.
    #   fp16, bf16, each step rounded to the format (the API page does not
    #         say the FP16 twin computes in binary32): expf's binary32 value
    #         rounded once, |d1| <= (1 + 2u32)(1 + u) - 1, gives 0.9995
    #         gamma(3) |y| for fp16 and 0.995 for bf16. Computed in binary32
    #         and rounded once at the end: 0.333 gamma(3) |y|. No scale.
    # The factor is per dtype, so it also covers the fp32 BW (3 plain
    # roundings, needing none); it widens that bound by at most a third.
    tolerance_scale={"fp32": 1.334},
)

ENTRIES = [RELU, LEAKYRELU, SIGMOID]


# ---- GELU, tanh, SwiGLU: forward only, per-core bodies the runner forks ----

FORKED_SHAPES = tuple(dict(n=n) for n in (1, 3, 8, 9, 17, 97, 1000))

# The API's documented bound for tanh_prll (shared/TRAINLIB_API_MORE.md,
# "Activations"); checked here on every float of [-50, 50] at steps of 5e-5
# in binary32: 2.9983e-5. GELU is checked against its formula instead
# (golden/act.py, GELU_ROUNDINGS).
TANH_ABS = 3e-5     # tanh_prll's y vs tanh, absolute


def _forked_entry(name: str, reference, dtypes, approximations=None) -> OpEntry:
    gated = name == "swiglu"
    return OpEntry(
        name=name,
        unit="act",
        runner_op=lambda dtype: f"{name}_{build_of(dtype)}",
        steps=("fw",),
        dtypes=dtypes,
        shapes=FORKED_SHAPES,
        inputs=lambda c: {"x": (c.shape["n"],), **({"b": (c.shape["n"],)} if gated else {})},
        params=lambda c: {"n": c.shape["n"]},
        input_values=lambda c, inputs: act.gelu_edge_inputs(inputs, name, format_named(c.dtype)),
        reference=reference,
        cores=(1, 3, 8),
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
        footprint=lambda c: {"input": element_bytes(c.dtype) * c.shape["n"] * (2 if gated else 1),
                             "output": element_bytes(c.dtype) * c.shape["n"]},
        approximations=approximations or {},
        split=core_split.flat(),
    )


GELU = _forked_entry("gelu", lambda c, inputs: act.gelu(inputs), DTYPES)
TANH = _forked_entry("tanh", lambda c, inputs: act.tanh(inputs, c.entry.approximations["tanh_abs"]),
                     ("fp32",), {"tanh_abs": TANH_ABS})
SWIGLU = _forked_entry("swiglu", lambda c, inputs: act.swiglu(inputs, format_named(c.dtype)),
                       DTYPES)

ENTRIES = [RELU, LEAKYRELU, SIGMOID, GELU, TANH, SWIGLU]
