"""References for Conv2D and its unrollings (im2col, im2row, block transpose).

Tensors arrive in the layout the runner hands the library (see
`tensor_shapes`): CHW (input C x H x W, weights Co x Ci x Hk x Wk, output
Co x Ho x Wo) or HWC (H x W x C, Co x Hk x Wk x Ci, Ho x Wo x Co). The
convolution itself is torch's, in float64 on NCHW: the asymmetric zero
padding is an explicit F.pad, the gradients come from autograd, and the
magnitudes are the same maps on |inputs| (every output element is a sum of
products of one element per input, as in golden/linalg.py).

The unrollings are built from torch's F.unfold, independently of the C code,
following the API's contract (TRAINLIB_API.md, "Contract details"; the
element formulas are in lib_c/include/pulp_im2col_fp32.h):
  mod 0: unfold of the padded input with the layer's strides;
  mod 1: stride-1 unfold of dOut with a zero border of Hk-1 rows on top and
         Wk-1 columns on the left, into H x W windows; every pad and stride
         field is ignored, so this is the input-gradient unrolling only of a
         stride-1, unpadded layer.
They are copies, so their reduction length is 0: the device must match
them bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from golden.bundle import Reference
from golden.lazy_torch import F, torch


@dataclass(frozen=True)
class ConvGeometry:
    """One Conv2D layer: input Ci x H x W, Co kernels of Hk x Wk, strides
    (sh, sw), zero padding Left, Right, Up, Down."""

    Ci: int
    H: int
    W: int
    Co: int
    Hk: int
    Wk: int
    sh: int = 1
    sw: int = 1
    L: int = 0
    R: int = 0
    U: int = 0
    D: int = 0

    @property
    def Ho(self) -> int:
        return (self.H + self.U + self.D - self.Hk) // self.sh + 1

    @property
    def Wo(self) -> int:
        return (self.W + self.L + self.R - self.Wk) // self.sw + 1

    def params(self) -> dict[str, int]:
        """The runner's geometry params, by the names the runner ops describe
        them with (ops_conv2d.c: the Conv2D_args field names); HWC is not a
        geometry field and is added by the caller."""
        return {"Ci": self.Ci, "H": self.H, "W": self.W, "Co": self.Co, "Hk": self.Hk, "Wk": self.Wk,
                "stride_h": self.sh, "stride_w": self.sw,
                "Lpad": self.L, "Rpad": self.R, "Upad": self.U, "Dpad": self.D}


def tensor_shapes(g: ConvGeometry, hwc: int) -> dict[str, tuple[int, ...]]:
    """Shapes of x, W, b, dy in the layout the library gets them."""
    if hwc:
        return {"x": (g.H, g.W, g.Ci), "W": (g.Co, g.Hk, g.Wk, g.Ci), "b": (g.Co,), "dy": (g.Ho, g.Wo, g.Co)}
    return {"x": (g.Ci, g.H, g.W), "W": (g.Co, g.Ci, g.Hk, g.Wk), "b": (g.Co,), "dy": (g.Co, g.Ho, g.Wo)}


# Layout permutations: from the library's layout to torch's and back.
_TO_CHW = {"x": (2, 0, 1), "W": (0, 3, 1, 2), "dy": (2, 0, 1), "b": (0,)}
_FROM_CHW = {"x": (1, 2, 0), "W": (0, 2, 3, 1), "dy": (1, 2, 0), "b": (0,)}


def _chw(name: str, array: np.ndarray, hwc: int) -> torch.Tensor:
    array = array.transpose(_TO_CHW[name]) if hwc else array
    return torch.tensor(np.ascontiguousarray(array), dtype=torch.float64)


def _layout(name: str, tensor: torch.Tensor, hwc: int) -> np.ndarray:
    array = tensor.detach().numpy()
    return np.ascontiguousarray(array.transpose(_FROM_CHW[name]) if hwc else array)


def _conv_grads(inputs: dict[str, np.ndarray], g: ConvGeometry, hwc: int, use_bias: int) -> dict[str, np.ndarray]:
    x, w, b, dy = (_chw(k, inputs[k], hwc) for k in ("x", "W", "b", "dy"))
    for t in (x, w, b):
        t.requires_grad_(True)
    padded = F.pad(x[None], (g.L, g.R, g.U, g.D))
    y = F.conv2d(padded, w, b if use_bias else None, stride=(g.sh, g.sw))[0]
    y.backward(dy)
    return {"y": _layout("dy", y, hwc), "dW": _layout("W", w.grad, hwc), "dx": _layout("x", x.grad, hwc),
            "db": b.grad.numpy() if use_bias else np.zeros(g.Co)}


def conv2d(inputs: dict[str, np.ndarray], g: ConvGeometry, step: str, hwc: int, use_bias: int) -> dict[str, Reference]:
    """Conv2D y = W * x (+ b) and its gradients, each in the library's layout.

    Reduction lengths: FW sums Ci*Hk*Wk products (+1 for the bias); WG sums
    Ho*Wo products per weight and Ho*Wo terms per bias; IG sums Co*Hk*Wk
    products (the im2col path's matmul reduction; the direct path sums a
    subset of them)."""
    exact = _conv_grads(inputs, g, hwc, use_bias)
    mags = _conv_grads({k: np.abs(v) for k, v in inputs.items()}, g, hwc, use_bias)
    reductions = {"fw": {"y": g.Ci * g.Hk * g.Wk + use_bias},
                  "wg": {"dW": g.Ho * g.Wo, **({"db": g.Ho * g.Wo} if use_bias else {})},
                  "ig": {"dx": g.Co * g.Hk * g.Wk}}
    # bw: both gradients of one pulp_conv2d_*_bw_cl call
    reductions["bw"] = {**reductions["wg"], **reductions["ig"]}
    if step not in reductions:
        raise ValueError(f"conv2d has no step {step!r}; expected fw, wg, ig or bw")
    return {name: Reference(exact[name], mags[name], n) for name, n in reductions[step].items()}


def unrolled_matrix(source: np.ndarray, g: ConvGeometry, hwc: int, mod: int) -> np.ndarray:
    """X of pulp_im2col_fp32.h, T x P: mod 0 unrolls the input x, mod 1 the
    output gradient dy (each given in the library's layout). Layouts: CHW
    taps [c][hk][wk], HWC taps [hk][wk][c]; windows row-major."""
    src = _chw("x" if mod == 0 else "dy", source, hwc)
    if mod == 0:
        padded = F.pad(src[None], (g.L, g.R, g.U, g.D))
        X = F.unfold(padded, (g.Hk, g.Wk), stride=(g.sh, g.sw))[0]
        channels = g.Ci
    elif mod == 1:
        # H + Hk - 1 rows make H windows: below dOut H - Ho rows (a negative pad crops).
        top, left = g.Hk - 1, g.Wk - 1
        X = F.unfold(F.pad(src[None], (left, g.W - g.Wo, top, g.H - g.Ho)), (g.Hk, g.Wk))[0]
        channels = g.Co
    else:
        raise ValueError(f"im2col has no mod {mod!r}; expected 0 (FW/WG) or 1 (IG)")
    if hwc:  # taps (c, kh, kw) -> (kh, kw, c)
        X = X.reshape(channels, g.Hk, g.Wk, -1).permute(1, 2, 0, 3).reshape(channels * g.Hk * g.Wk, -1)
    return X.numpy()


def block_transposed(weights: np.ndarray, hwc: int) -> np.ndarray:
    """BT of pulp_blocktransp_fp32: channels swapped, kernels turned by 180
    degrees. CHW: Co x Ci x Hk x Wk -> Ci x Co x Hk x Wk; HWC: Co x Hk x Wk x Ci
    -> Ci x Hk x Wk x Co."""
    if hwc:
        return np.ascontiguousarray(weights[:, ::-1, ::-1, :].transpose(3, 1, 2, 0))
    return np.ascontiguousarray(weights[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))


def _copy(value: np.ndarray) -> dict[str, Reference]:
    return {"X": Reference(value, np.abs(value), 0)}


def im2col(inputs: dict[str, np.ndarray], g: ConvGeometry, hwc: int, mod: int) -> dict[str, Reference]:
    """pulp_im2col: X, T x P."""
    return _copy(unrolled_matrix(inputs["x" if mod == 0 else "dy"], g, hwc, mod))


def im2row(inputs: dict[str, np.ndarray], g: ConvGeometry, hwc: int, mod: int) -> dict[str, Reference]:
    """pulp_im2row: X^T, P x T."""
    return _copy(np.ascontiguousarray(unrolled_matrix(inputs["x" if mod == 0 else "dy"], g, hwc, mod).T))


def blocktransp(inputs: dict[str, np.ndarray], hwc: int) -> dict[str, Reference]:
    """pulp_blocktransp: the block-transposed weights."""
    value = block_transposed(inputs["W"], hwc)
    return {"BT": Reference(value, np.abs(value), 0)}
