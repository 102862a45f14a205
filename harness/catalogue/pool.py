"""Catalogue of the pooling family: average and max pooling, FW and BW.

Layout CHW only: pool_args has no HWC flag, so HWC is not part of the API for
pooling. No padding either: the API has no padding fields, Ho = (H - Hk)/Hs + 1.
Pooling has no matmul, so every case has the single variant "direct" per core
count.
"""
from __future__ import annotations

from golden import pool
from golden.formats import format_named
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes

# (C, H, W, Hk, Wk, Hs, Ws)
POOL_SHAPES = tuple(dict(C=c, H=h, W=w, Hk=hk, Wk=wk, Hs=hs, Ws=ws) for c, h, w, hk, wk, hs, ws in (
    (1, 1, 1, 1, 1, 1, 1),      # 1x1 image, 1 channel, 1x1 window
    (5, 7, 6, 1, 1, 2, 3),      # 1x1 window subsampling: rows/columns no window reads
    (7, 7, 5, 7, 5, 1, 1),      # window as large as the input (global pooling), prime C
    (3, 9, 11, 3, 3, 2, 2),     # stride 2 on odd sizes, overlapping windows
    (2, 7, 9, 2, 2, 2, 2),      # stride 2 on odd sizes, last row and column unused
    (3, 9, 8, 3, 2, 2, 1),      # Hk != Wk and Hs != Ws, overlapping on both axes
    (2, 8, 8, 4, 4, 1, 1),      # heavy overlap: up to 16 windows per element
    (11, 5, 12, 2, 3, 1, 3),    # overlap along H only, prime C
    (13, 6, 6, 2, 2, 2, 2),     # prime channel count (not a multiple of 3 or 8)
    (16, 16, 16, 2, 2, 2, 2),   # realistic TinyML layer: 2x2/2 pool, 16 ch of 16x16
))

STEPS = ("fw", "bw")



def _out_shape(c) -> tuple[int, int, int]:
    s = c.shape
    return s["C"], pool.output_size(s["H"], s["Hk"], s["Hs"]), pool.output_size(s["W"], s["Wk"], s["Ws"])


def _inputs(c) -> dict[str, tuple[int, ...]]:
    s = c.shape
    return {"x": (s["C"], s["H"], s["W"]), "dy": _out_shape(c)}


def _max_inputs(c) -> dict[str, tuple[int, ...]]:
    return {**_inputs(c), "y": _out_shape(c)}     # the FW's y, which max BW is given


def _params(c) -> dict[str, int]:
    s = c.shape
    return {"C": s["C"], "H": s["H"], "W": s["W"], "Hker": s["Hk"], "Wker": s["Wk"],
            "Hstride": s["Hs"], "Wstride": s["Ws"], "step": c.step_code}


def _footprint(c, reads_x_in_bw: bool) -> dict[str, int]:
    """The buffers ops_pool.c allocates for the step, as the primitive uses them."""
    size = element_bytes(c.dtype)
    C, Ho, Wo = _out_shape(c)
    n_in, n_out = C * c.shape["H"] * c.shape["W"], C * Ho * Wo
    if c.step == "fw":
        return {"input": n_in * size, "output": n_out * size}
    buffers = {"output_grad": n_out * size, "input_grad": n_in * size}
    if reads_x_in_bw:  # max pool finds the selected element of each window, given x and y
        buffers.update(input=n_in * size, output=n_out * size)
    return buffers


def _entry(name: str, reference, reads_x_in_bw: bool, inputs=_inputs, input_values=None) -> OpEntry:
    return OpEntry(
        name=name,
        unit="pool",
        runner_op=lambda dtype: f"{name}_{build_of(dtype)}",
        steps=STEPS,
        dtypes=DTYPES,
        shapes=POOL_SHAPES,
        inputs=inputs,
        input_values=input_values,
        params=_params,
        reference=lambda c, inputs: reference(inputs, c.step, *(c.shape[k] for k in ("Hk", "Wk", "Hs", "Ws"))),
        cores=(1, 3, 8),
        kernels=lambda dtype, step: (0,),
        kernel_names=lambda dtype: ("direct",),
        footprint=lambda c: _footprint(c, reads_x_in_bw),
    )


AVGPOOL = _entry("avgpool", pool.avgpool, reads_x_in_bw=False)
MAXPOOL = _entry("maxpool", pool.maxpool, reads_x_in_bw=True, inputs=_max_inputs,
                 input_values=lambda c, inputs: pool.without_ties(
                     inputs, format_named(c.dtype), *(c.shape[k] for k in ("Hk", "Wk", "Hs", "Ws"))))

ENTRIES = [AVGPOOL, MAXPOOL]
