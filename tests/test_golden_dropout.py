"""golden/dropout.py: the model of the library's generator reproduces the
documented values, and dropout's mask has the statistics it should."""
import math

import numpy as np
import pytest

from golden import dropout
from golden.formats import format_named


def test_the_generator_model_gives_the_documented_first_floats():
    assert dropout.float_seed(0) == 0.0
    assert dropout.float_seed(1) == np.float32(0.70285904)
    assert dropout.float_seed(42) == np.float32(0.80048698)


@pytest.mark.parametrize("p_milli", [100, 500, 900])
def test_the_kept_fraction_is_one_minus_p_within_five_standard_deviations(p_milli):
    """4096 consecutive seeds from 12345 (the same every run). For a true
    Bernoulli(1 - p) mask the kept count is off by more than 5 standard
    deviations with probability below 6e-7, so this fails only for a
    generator or a comparison that is really biased."""
    n = 4096
    p = float(dropout.probability(p_milli))
    count = int(dropout.kept(n, 12345, dropout.probability(p_milli)).sum())
    sigma = math.sqrt(n * p * (1 - p))
    assert abs(count - n * (1 - p)) <= 5 * sigma, (count, n * (1 - p), sigma)


def test_kept_elements_are_scaled_by_one_over_one_minus_p_and_dropped_ones_are_zero():
    x = np.linspace(-1, 1, 64)
    out = dropout.dropout({"x": x, "mask": np.ones(64)}, 500, 0, 7, format_named("fp32"))["y"].value
    keep = dropout.kept(64, 7, dropout.probability(500))
    assert 0 < keep.sum() < 64
    np.testing.assert_array_equal(out[~keep], 0.0)
    np.testing.assert_allclose(out[keep], x[keep] / 0.5, rtol=0, atol=0)


def test_the_fp16_twin_keeps_and_scales_with_the_probability_rounded_to_its_format():
    """dropout_args_fp16.probability is an fp16: 0.9 is 0.8984375 in
    bfloat16, so the elements whose draw falls between the two are kept,
    and the kept ones are scaled by 1 / (1 - 0.8984375)."""
    bf16 = format_named("bf16")
    x = np.ones(4096)
    out = dropout.dropout({"x": x, "mask": x}, 900, 0, 0, bf16)["y"].value
    p = float(bf16.round(dropout.probability(900)))
    assert p == 0.8984375
    keep = dropout.kept(4096, 0, np.float32(p))
    assert keep.sum() > dropout.kept(4096, 0, dropout.probability(900)).sum()
    np.testing.assert_array_equal(out[keep], 1 / (1 - p))
    np.testing.assert_array_equal(out[~keep], 0.0)
