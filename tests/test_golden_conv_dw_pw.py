"""golden/conv_dw_pw.py: the pointwise, depthwise and transposed-convolution
references, checked against plain loops written from the definitions in the
library headers and against torch's own padding arguments."""
import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from golden import conv_dw_pw

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.uniform(-1, 1, shape)


def depthwise_loops(x, w, stride, pads):
    """out[c][ho][wo] = sum w[c][kh][kw] x[c][ho*sh - U + kh][wo*sw - L + kw], zero outside x."""
    (sh, sw), (L, R, U, D) = stride, pads
    C, H, W = x.shape
    _, Hk, Wk = w.shape
    Ho, Wo = (H + U + D - Hk) // sh + 1, (W + L + R - Wk) // sw + 1
    out = np.zeros((C, Ho, Wo))
    for c, ho, wo, kh, kw in itertools.product(range(C), range(Ho), range(Wo), range(Hk), range(Wk)):
        h, v = ho * sh - U + kh, wo * sw - L + kw
        if 0 <= h < H and 0 <= v < W:
            out[c, ho, wo] += w[c, kh, kw] * x[c, h, v]
    return out


def transposed_loops(x, w, stride, pads):
    """full[co][i*sh + kh][j*sw + kw] += x[ci][i][j] w[ci][co][kh][kw], then rows
    U..Hf-D and columns L..Wf-R of it (zero where that reaches past it)."""
    (sh, sw), (L, R, U, D) = stride, pads
    Ci, H, W = x.shape
    _, Co, Hk, Wk = w.shape
    Ho, Wo = (H - 1) * sh + Hk - U - D, (W - 1) * sw + Wk - L - R
    out = np.zeros((Co, Ho, Wo))
    for ci, co, i, j, kh, kw in itertools.product(range(Ci), range(Co), range(H), range(W), range(Hk), range(Wk)):
        y, v = i * sh + kh - U, j * sw + kw - L
        if 0 <= y < Ho and 0 <= v < Wo:
            out[co, y, v] += x[ci, i, j] * w[ci, co, kh, kw]
    return out


DW_GEOMETRIES = [((1, 1), (1, 1, 1, 1)), ((2, 1), (2, 0, 0, 1)), ((3, 2), (0, 3, 2, 0)), ((1, 2), (3, 3, 0, 0))]


@pytest.mark.parametrize("stride,pads", DW_GEOMETRIES)
def test_depthwise_forward_matches_the_definition_for_asymmetric_pads_and_strides(stride, pads):
    x, w = rand(3, 7, 6), rand(3, 3, 2)
    expected = depthwise_loops(x, w, stride, pads)
    ref = conv_dw_pw.depthwise({"x": x, "W": w, "dy": np.zeros(expected.shape)}, "fw", 0, stride, pads)["y"]
    np.testing.assert_allclose(ref.value, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ref.magnitude, depthwise_loops(abs(x), abs(w), stride, pads), rtol=0, atol=1e-12)
    assert ref.reduction == 3 * 2


@pytest.mark.parametrize("stride,pads", DW_GEOMETRIES)
def test_depthwise_gradients_are_the_adjoints_of_the_forward(stride, pads):
    """<fw(x, W), dy> = <x, dx> = <W, dW>: the gradients belong to the very forward tested above."""
    x, w = rand(3, 7, 6), rand(3, 3, 2)
    dy = rand(*depthwise_loops(x, w, stride, pads).shape)
    inputs = {"x": x, "W": w, "dy": dy}
    dx = conv_dw_pw.depthwise(inputs, "ig", 0, stride, pads)["dx"]
    dw = conv_dw_pw.depthwise(inputs, "wg", 0, stride, pads)["dW"]
    energy = np.sum(depthwise_loops(x, w, stride, pads) * dy)
    assert np.sum(x * dx.value) == pytest.approx(energy) and np.sum(w * dw.value) == pytest.approx(energy)
    assert dw.reduction == dy.shape[1] * dy.shape[2]
    assert dx.reduction == -(-3 // stride[0]) * -(-2 // stride[1])


def test_depthwise_hwc_is_the_chw_result_with_the_channel_last():
    x, w, stride, pads = rand(4, 5, 6), rand(4, 3, 3), (2, 1), (1, 0, 0, 2)
    dy = rand(*depthwise_loops(x, w, stride, pads).shape)
    chw = {"x": x, "W": w, "dy": dy}
    hwc = {"x": x.transpose(1, 2, 0), "W": w.transpose(1, 2, 0), "dy": dy.transpose(1, 2, 0)}
    for step, name in (("fw", "y"), ("wg", "dW"), ("ig", "dx")):
        a = conv_dw_pw.depthwise(chw, step, 0, stride, pads)[name].value
        b = conv_dw_pw.depthwise(hwc, step, 1, stride, pads)[name].value
        np.testing.assert_array_equal(b, a.transpose(1, 2, 0))


TC_GEOMETRIES = [((2, 2), (1, 1, 1, 1)), ((1, 2), (0, 1, 2, 0)), ((3, 3), (0, 0, 0, 0)), ((2, 2), (0, -1, 0, -1)),
                 ((2, 1), (2, 0, 3, 2))]


@pytest.mark.parametrize("stride,pads", TC_GEOMETRIES)
def test_transposed_forward_crops_the_full_output_on_each_side_as_its_pad_says(stride, pads):
    x, w, b = rand(2, 3, 4), rand(2, 3, 3, 2), rand(3)
    expected = transposed_loops(x, w, stride, pads)
    inputs = {"x": x, "W": w, "b": b, "dy": np.zeros(expected.shape)}
    ref = conv_dw_pw.transposed(inputs, "fw", 0, stride, pads, use_bias=0)["y"]
    np.testing.assert_allclose(ref.value, expected, rtol=0, atol=1e-12)
    with_bias = conv_dw_pw.transposed(inputs, "fw", 0, stride, pads, use_bias=1)["y"]
    np.testing.assert_allclose(with_bias.value, expected + b[:, None, None], rtol=0, atol=1e-12)
    sh, sw = stride
    assert with_bias.reduction == 2 * -(-3 // sh) * -(-2 // sw) + 1


@pytest.mark.parametrize("padding,output_padding", [((1, 1), (0, 0)), ((1, 2), (1, 0)), ((0, 0), (1, 1))])
def test_transposed_pads_map_to_torch_padding_and_output_padding(padding, output_padding):
    """inUpad = ph, inDpad = ph - oh, inLpad = pw, inRpad = pw - ow (the header's mapping)."""
    x, w, b = rand(3, 4, 5), rand(3, 2, 3, 3), rand(2)
    (ph, pw), (oh, ow) = padding, output_padding
    torch_out = F.conv_transpose2d(torch.tensor(x)[None], torch.tensor(w), torch.tensor(b), stride=2,
                                   padding=padding, output_padding=output_padding)[0].numpy()
    inputs = {"x": x, "W": w, "b": b, "dy": np.zeros(torch_out.shape)}
    ref = conv_dw_pw.transposed(inputs, "fw", 0, (2, 2), (pw, pw - ow, ph, ph - oh), use_bias=1)["y"]
    np.testing.assert_allclose(ref.value, torch_out, rtol=0, atol=1e-12)


@pytest.mark.parametrize("stride,pads", TC_GEOMETRIES)
def test_transposed_gradients_are_the_adjoints_of_the_forward(stride, pads):
    x, w, b = rand(2, 3, 4), rand(2, 3, 3, 2), rand(3)
    y = transposed_loops(x, w, stride, pads)
    dy = rand(*y.shape)
    inputs = {"x": x, "W": w, "b": b, "dy": dy}
    dx = conv_dw_pw.transposed(inputs, "ig", 0, stride, pads, use_bias=0)["dx"]
    wg = conv_dw_pw.transposed(inputs, "wg", 0, stride, pads, use_bias=1)
    assert list(wg) == ["dW", "db"]
    energy = np.sum(y * dy)
    assert np.sum(x * dx.value) == pytest.approx(energy) and np.sum(w * wg["dW"].value) == pytest.approx(energy)
    np.testing.assert_allclose(wg["db"].value, dy.sum(axis=(1, 2)), rtol=0, atol=1e-12)
    assert (dx.reduction, wg["dW"].reduction, wg["db"].reduction) == (3 * 3 * 2, 3 * 4, y.shape[1] * y.shape[2])


def test_transposed_hwc_uses_weights_ci_hk_wk_co():
    x, w, b, stride, pads = rand(2, 3, 4), rand(2, 3, 3, 2), rand(3), (2, 1), (1, 0, 0, 1)
    dy = rand(*transposed_loops(x, w, stride, pads).shape)
    chw = {"x": x, "W": w, "b": b, "dy": dy}
    hwc = {"x": x.transpose(1, 2, 0), "W": w.transpose(0, 2, 3, 1), "b": b, "dy": dy.transpose(1, 2, 0)}
    for step, name, back in (("fw", "y", (1, 2, 0)), ("wg", "dW", (0, 2, 3, 1)), ("ig", "dx", (1, 2, 0))):
        a = conv_dw_pw.transposed(chw, step, 0, stride, pads, use_bias=1)[name].value
        b_ = conv_dw_pw.transposed(hwc, step, 1, stride, pads, use_bias=1)[name].value
        np.testing.assert_allclose(b_, a.transpose(back), rtol=0, atol=1e-12)


@pytest.mark.parametrize("hwc", [0, 1])
def test_pointwise_is_a_matmul_over_the_pixels_with_weights_co_ci_in_chw_and_ci_co_in_hwc(hwc):
    x, w, dy = rand(3, 2, 5), rand(4, 3), rand(4, 2, 5)
    y = np.einsum("oc,chw->ohw", w, x)
    lay = (lambda t: t.transpose(1, 2, 0)) if hwc else (lambda t: t)
    w_lay = (lambda t: t.T) if hwc else (lambda t: t)
    inputs = {"x": lay(x), "W": w_lay(w), "dy": lay(dy)}
    fw = conv_dw_pw.pointwise(inputs, "fw", hwc)["y"]
    wg = conv_dw_pw.pointwise(inputs, "wg", hwc)["dW"]
    ig = conv_dw_pw.pointwise(inputs, "ig", hwc)["dx"]
    np.testing.assert_allclose(fw.value, lay(y), rtol=0, atol=1e-12)
    np.testing.assert_allclose(wg.value, w_lay(np.einsum("ohw,chw->oc", dy, x)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ig.value, lay(np.einsum("oc,ohw->chw", w, dy)), rtol=0, atol=1e-12)
    assert (fw.reduction, wg.reduction, ig.reduction) == (3, 10, 4)


def test_every_reference_rejects_an_unknown_step():
    inputs = {"x": rand(1, 1, 1), "W": rand(1, 1), "dy": rand(1, 1, 1)}
    with pytest.raises(ValueError, match="'bwd'"):
        conv_dw_pw.pointwise(inputs, "bwd", 0)


@pytest.mark.parametrize("hwc", [0, 1])
def test_bw_is_both_gradients_of_wg_and_ig(hwc):
    """Step bw (one _bw_cl call) has WG's outputs and IG's, each as that step gives it."""
    inputs = {"x": rand(2, 3, 3), "W": rand(2, 2, 2, 2), "b": rand(2), "dy": rand(2, 4, 4)}   # Ci = Co = 2, 2x2
    if hwc:
        inputs = {"x": inputs["x"].transpose(1, 2, 0), "W": inputs["W"].transpose(0, 2, 3, 1), "b": inputs["b"],
                  "dy": inputs["dy"].transpose(1, 2, 0)}
    args = (hwc, (1, 1), (0, 0, 0, 0), 1)
    bw = conv_dw_pw.transposed(inputs, "bw", *args)
    one_by_one = {**conv_dw_pw.transposed(inputs, "wg", *args), **conv_dw_pw.transposed(inputs, "ig", *args)}
    assert sorted(bw) == sorted(one_by_one) == ["dW", "db", "dx"]
    for name, ref in bw.items():
        np.testing.assert_array_equal(ref.value, one_by_one[name].value)
        assert ref.reduction == one_by_one[name].reduction
