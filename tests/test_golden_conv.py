"""golden/conv.py: the Conv2D reference, and the unrollings as pulp_im2col_fp32.h defines them.

The unrollings are specified element by element in the header; these tests
check the F.unfold construction against that formula, and that the
unrollings really compose into the layer's three steps (so the C library,
which must match them bit for bit, computes the convolution through them).
"""
import itertools

import numpy as np
import pytest

from golden import conv
from golden.conv import ConvGeometry
from harness.catalogue.conv2d import BLOCKTRANSP_SHAPES, KERNEL_SWEEP, REALISTIC_TILE_4, SHAPE_SWEEP

GEOMETRIES = [ConvGeometry(**s) for s in SHAPE_SWEEP + KERNEL_SWEEP + REALISTIC_TILE_4]


def _ids(g: ConvGeometry) -> str:
    return "x".join(f"{k}{v}" for k, v in vars(g).items())


def _inputs(g: ConvGeometry, hwc: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {k: rng.uniform(-1, 1, s) for k, s in conv.tensor_shapes(g, hwc).items()}


def _chw(x, hwc):
    return x.transpose(2, 0, 1) if hwc else x


def test_output_size_follows_the_api_formula_with_asymmetric_padding_and_strides():
    g = ConvGeometry(Ci=1, H=9, W=8, Co=1, Hk=1, Wk=5, sh=2, sw=3, L=0, R=3, U=4, D=0)
    assert (g.Ho, g.Wo) == ((9 + 4 + 0 - 1) // 2 + 1, (8 + 0 + 3 - 5) // 3 + 1) == (7, 3)


def test_forward_of_a_hand_computed_2x2_kernel_with_left_padding():
    # x 1x2x2 = [[1, 2], [3, 4]], W 1x1x2x2 = [[1, 0], [0, -1]], L = 1:
    # padded rows [0 1 2], [0 3 4]; windows at columns 0, 1: 0 - 3 = -3 and 1 - 4 = -3
    g = ConvGeometry(Ci=1, H=2, W=2, Co=1, Hk=2, Wk=2, L=1)
    inputs = {"x": np.array([[[1.0, 2.0], [3.0, 4.0]]]), "W": np.array([[[[1.0, 0.0], [0.0, -1.0]]]]),
              "b": np.array([0.5]), "dy": np.ones((1, 1, 2))}
    ref = conv.conv2d(inputs, g, "fw", hwc=0, use_bias=1)["y"]
    np.testing.assert_array_equal(ref.value, [[[-2.5, -2.5]]])
    np.testing.assert_array_equal(ref.magnitude, [[[3.5, 5.5]]])
    assert ref.reduction == 1 * 2 * 2 + 1


@pytest.mark.parametrize("hwc", [0, 1])
def test_reduction_lengths_per_step(hwc):
    g = ConvGeometry(Ci=3, H=5, W=7, Co=4, Hk=3, Wk=2, L=1, D=2)
    inputs = _inputs(g, hwc)
    assert conv.conv2d(inputs, g, "fw", hwc, 0)["y"].reduction == 3 * 3 * 2
    wg = conv.conv2d(inputs, g, "wg", hwc, 1)
    assert (wg["dW"].reduction, wg["db"].reduction) == (g.Ho * g.Wo, g.Ho * g.Wo)
    assert conv.conv2d(inputs, g, "ig", hwc, 0)["dx"].reduction == 4 * 3 * 2
    bw = conv.conv2d(inputs, g, "bw", hwc, 1)   # one _bw_cl call: WG's outputs and IG's
    assert {name: ref.reduction for name, ref in bw.items()} == {"dW": g.Ho * g.Wo, "db": g.Ho * g.Wo,
                                                                 "dx": 4 * 3 * 2}
    with pytest.raises(ValueError, match="no step"):
        conv.conv2d(inputs, g, "bwd", hwc, 0)


@pytest.mark.parametrize("g", GEOMETRIES, ids=_ids)
def test_hwc_references_are_the_chw_ones_transposed(g):
    chw = _inputs(g, 0)
    hwc = {"x": chw["x"].transpose(1, 2, 0), "W": chw["W"].transpose(0, 2, 3, 1), "b": chw["b"],
           "dy": chw["dy"].transpose(1, 2, 0)}
    for step in ("fw", "wg", "ig"):
        a, b = conv.conv2d(chw, g, step, 0, 1 if step != "ig" else 0), conv.conv2d(hwc, g, step, 1, 1 if step != "ig" else 0)
        back = {"y": (2, 0, 1), "dW": (0, 3, 1, 2), "dx": (2, 0, 1), "db": (0,)}
        for name in a:
            np.testing.assert_allclose(b[name].value.transpose(back[name]), a[name].value, rtol=1e-12, atol=1e-12)


def _unrolled_by_formula(src_chw: np.ndarray, g: ConvGeometry, hwc: int, mod: int) -> np.ndarray:
    """X[t][p] element by element, as the header states it."""
    if mod == 0:
        C, OH, OW = g.Ci, g.Ho, g.Wo
    else:
        C, OH, OW = g.Co, g.H, g.W
    X = np.zeros((C * g.Hk * g.Wk, OH * OW))
    for c, kh, kw, oy, ox in itertools.product(range(C), range(g.Hk), range(g.Wk), range(OH), range(OW)):
        t = (kh * g.Wk + kw) * C + c if hwc else (c * g.Hk + kh) * g.Wk + kw
        if mod == 0:
            y, x = oy * g.sh + kh - g.U, ox * g.sw + kw - g.L
            inside = 0 <= y < g.H and 0 <= x < g.W
        else:  # every pad and stride field ignored
            y, x = oy + kh - (g.Hk - 1), ox + kw - (g.Wk - 1)
            inside = 0 <= y < g.Ho and 0 <= x < g.Wo
        X[t, oy * OW + ox] = src_chw[c, y, x] if inside else 0.0
    return X


@pytest.mark.parametrize("mod", [0, 1])
@pytest.mark.parametrize("hwc", [0, 1])
@pytest.mark.parametrize("g", GEOMETRIES, ids=_ids)
def test_unfold_construction_matches_the_header_formula(g, hwc, mod):
    inputs = _inputs(g, hwc)
    name = "x" if mod == 0 else "dy"
    expected = _unrolled_by_formula(_chw(inputs[name], hwc), g, hwc, mod)
    np.testing.assert_array_equal(conv.unrolled_matrix(inputs[name], g, hwc, mod), expected)
    np.testing.assert_array_equal(conv.im2col(inputs, g, hwc, mod)["X"].value, expected)
    np.testing.assert_array_equal(conv.im2row(inputs, g, hwc, mod)["X"].value, expected.T)
    assert conv.im2col(inputs, g, hwc, mod)["X"].reduction == 0


def _stride1_unpadded(g: ConvGeometry) -> bool:
    return g.sh == g.sw == 1 and g.L == g.R == g.U == g.D == 0


@pytest.mark.parametrize("hwc", [0, 1])
@pytest.mark.parametrize("g", GEOMETRIES, ids=_ids)
def test_the_unrollings_compose_into_the_three_steps(g, hwc):
    """FW = W . X0 and WG = dOut . X0^T on every geometry, and IG = BT . X1
    where mod 1 is the IG unrolling (stride 1, no padding), in the products
    the library runs for each layout (pulp_conv2d_fp32.h)."""
    inputs = _inputs(g, hwc, seed=1)
    P = g.Ho * g.Wo
    X0 = conv.unrolled_matrix(inputs["x"], g, hwc, 0)
    X1 = conv.unrolled_matrix(inputs["dy"], g, hwc, 1)
    Wm = inputs["W"].reshape(g.Co, -1)
    BT = conv.block_transposed(inputs["W"], hwc).reshape(g.Ci, -1)
    if hwc:
        y, dW, dx = X0.T @ Wm.T, (X0 @ inputs["dy"].reshape(P, g.Co)).T, X1.T @ BT.T
    else:
        y, dW, dx = Wm @ X0, inputs["dy"].reshape(g.Co, P) @ X0.T, BT @ X1
    steps = (("y", y, "fw"), ("dW", dW, "wg")) + ((("dx", dx, "ig"),) if _stride1_unpadded(g) else ())
    for name, value, step in steps:
        ref = conv.conv2d(inputs, g, step, hwc, 0)[name].value
        np.testing.assert_allclose(value.reshape(ref.shape), ref, rtol=1e-12, atol=1e-12)


def test_the_geometries_include_stride1_unpadded_ones_for_the_ig_composition():
    assert sum(_stride1_unpadded(g) for g in GEOMETRIES) >= 2


@pytest.mark.parametrize("hwc", [0, 1])
def test_mod1_ignores_pads_and_strides(hwc):
    """The published mod 1 reads no pad or stride field. Window (1, 1), tap
    (co 0, kh 1, kw 1) reads dOut(0, 0, 0) whatever they are; the layer's
    true IG unrolling (Upad 1, stride_h 2) would put a 0 there (dilated row)."""
    g = ConvGeometry(Ci=2, H=7, W=6, Co=5, Hk=3, Wk=3, sh=2, sw=1, L=1, R=1, U=1, D=1)
    dy = _inputs(g, hwc)["dy"]
    X = conv.unrolled_matrix(dy, g, hwc, 1)
    tap = (1 * g.Wk + 1) * g.Co if hwc else 1 * g.Wk + 1
    assert X[tap, 1 * g.W + 1] == _chw(dy, hwc)[0, 0, 0] != 0


@pytest.mark.parametrize("hwc", [0, 1])
@pytest.mark.parametrize("shape", BLOCKTRANSP_SHAPES, ids=lambda s: "x".join(f"{k}{v}" for k, v in s.items()))
def test_block_transpose_swaps_channels_and_turns_each_kernel(shape, hwc):
    Ci, Co, Hk, Wk = shape["Ci"], shape["Co"], shape["Hk"], shape["Wk"]
    w = np.arange(Co * Ci * Hk * Wk, dtype=float).reshape((Co, Hk, Wk, Ci) if hwc else (Co, Ci, Hk, Wk))
    bt = conv.blocktransp({"W": w}, hwc)["BT"].value
    for co, ci, kh, kw in itertools.product(range(Co), range(Ci), range(Hk), range(Wk)):
        if hwc:
            assert bt[ci, kh, kw, co] == w[co, Hk - 1 - kh, Wk - 1 - kw, ci]
        else:
            assert bt[ci, co, kh, kw] == w[co, ci, Hk - 1 - kh, Wk - 1 - kw]


def test_an_unknown_mod_is_rejected():
    g = ConvGeometry(Ci=1, H=2, W=2, Co=1, Hk=1, Wk=1)
    with pytest.raises(ValueError, match="no mod 2"):
        conv.unrolled_matrix(np.zeros((1, 2, 2)), g, 0, 2)
