"""golden/dropout.py: the model of the library's generator reproduces the
documented values, and dropout's mask has the statistics it should."""
import math

import numpy as np
import pytest

from golden import dropout


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
    out = dropout.dropout({"x": x, "mask": np.ones(64)}, 500, 0, 7)["y"].value
    keep = dropout.kept(64, 7, dropout.probability(500))
    assert 0 < keep.sum() < 64
    np.testing.assert_array_equal(out[~keep], 0.0)
    np.testing.assert_allclose(out[keep], x[keep] / 0.5, rtol=0, atol=0)
