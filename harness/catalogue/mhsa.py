"""Catalogue of multi-head self-attention (pulp_mhsa_fp32/_fp16 {fw,bw}_cl),
forked inside the primitive; every matmul kernel of the dtype, as the
step's matmul index (opt_matmul_type_fw for FW, opt_matmul_type_wg for BW).

Shapes (L sequence, E embedding, F = heads x Hd): one token; sequences below,
at and above the core counts and the unroll factors (3, 7, 8, 9, 16); head
counts 1, 2 and 4 (Hd from 2 to 16); E != F so that a transposed weight
cannot pass; and the published library's own layer test (L 64, E 512,
F 512, 4 heads, shared/TRAINLIB_API_MORE.md), which is far over a 64 KiB
L1: not_fit, with its buffers.

FW checks q, k, v, the attention map a, every head's softmax p and y; BW
reads q, k, v, a and p as the rounded FW results (golden/mhsa.py) and checks
every gradient the primitive writes, the intermediate dA, dq, dk and dv too.
Weights are uniform in [-1/4, 1/4) (a power of two keeps them on the grid),
so that the scores stay in the range real layers have.
"""
from __future__ import annotations

from golden import mhsa
from golden.formats import format_named
from harness.cases import OpEntry
from harness.dtypes import DTYPES, build_of, element_bytes
from harness.catalogue.softmax import FASTEXP_REL
from harness.catalogue.utils import Q_RSQRT_REL

SHAPES = tuple(dict(L=L, E=E, F=F, heads=h) for L, E, F, h in (
    (1, 4, 4, 1), (3, 5, 4, 2), (7, 8, 8, 4), (8, 6, 16, 1), (9, 6, 12, 2), (16, 16, 16, 4),
    (64, 512, 512, 4),
))

_WEIGHTS = ("wq", "wk", "wv", "wo")


def _inputs(c) -> dict[str, tuple[int, ...]]:
    L, E, F, heads = c.shape["L"], c.shape["E"], c.shape["F"], c.shape["heads"]
    # every step gets every input; the op copies only those its step reads
    return {"x": (E, L), **{w: (E, F) for w in _WEIGHTS}, "bq": (F,), "bk": (F,), "bv": (F,),
            "q": (F, L), "k": (F, L), "v": (F, L), "a": (F, L), "p": (heads, L, L), "dy": (E, L)}


def _values(c, inputs: dict) -> dict:
    """Weights / 4; q, k, v, a and p as the FW leaves them (rounded)."""
    out = dict(inputs, **{w: inputs[w] / 4 for w in _WEIGHTS})
    out.update(mhsa.forward_values(out, c.shape, format_named(c.dtype)))
    return out


def _footprint(c) -> dict[str, int]:
    """L1 bytes of every buffer the primitive reads or writes (the args' blobs,
    their diffs in BW, and the scratch buffers the API sizes)."""
    L, E, F, heads = c.shape["L"], c.shape["E"], c.shape["F"], c.shape["heads"]
    elements = {"input": E * L, "coeff_in_q,k,v": 3 * E * F, "coeff_out": E * F, "q,k,v": 3 * F * L,
                "attention_map": F * L, "softmax_buffer": heads * L * L, "head_buffer": heads * L * L,
                "temp_buffer": max(E * F, F * L, L * L), "grad": L * L, "maxes,sums": 2 * L}
    if c.step == "fw":
        elements.update({"bias_in_q,k,v": 3 * F, "output": E * L})
    else:
        elements.update({"output_diff": E * L, "input_diff": E * L, "coeff_diffs": 4 * E * F,
                         "q,k,v_diff": 3 * F * L, "attention_map_diff": F * L,
                         "softmax_buffer_diff": heads * L * L, "head_buffer_diff": heads * L * L})
    size = element_bytes(c.dtype)
    return {name: n * size for name, n in elements.items()}


MHSA = OpEntry(
    name="mhsa",
    unit="mhsa",
    runner_op=lambda dtype: f"mhsa_{build_of(dtype)}",
    steps=("fw", "bw"),
    dtypes=DTYPES,
    shapes=SHAPES,
    inputs=_inputs,
    params=lambda c: {**c.shape, "step": c.step_code},
    input_values=_values,
    reference=lambda c, inputs: mhsa.mhsa(inputs, c.step, c.shape, format_named(c.dtype),
                                          c.entry.approximations["fastexp_gist_rel"],
                                          c.entry.approximations["q_rsqrt_rel"]),
    cores=(1, 3, 8),
    footprint=_footprint,
    approximations={"fastexp_gist_rel": FASTEXP_REL, "q_rsqrt_rel": Q_RSQRT_REL},
)

ENTRIES = [MHSA]
