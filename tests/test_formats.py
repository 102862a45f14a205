"""golden/formats.py: rounding to the device formats, bit patterns and ULP distance."""
import numpy as np
import pytest

from golden.formats import BF16, FP16, FP32, format_named

ALL_16_BIT_PATTERNS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


# ---- unit roundoff and subnormal scale ----------------------------------------

@pytest.mark.parametrize("fmt, u, tiny", [
    (FP32, 2.0 ** -24, 2.0 ** -149),
    (FP16, 2.0 ** -11, 2.0 ** -24),
    (BF16, 2.0 ** -8, 2.0 ** -133),
])
def test_unit_roundoff_and_smallest_subnormal_match_ieee_parameters(fmt, u, tiny):
    assert fmt.unit_roundoff == u
    assert fmt.smallest_subnormal == tiny


def test_format_named_rejects_an_unknown_dtype_and_lists_the_known_ones():
    assert format_named("bf16") is BF16
    with pytest.raises(ValueError, match=r"unknown dtype 'fp8'.*bf16.*fp16.*fp32"):
        format_named("fp8")


# ---- round to nearest, ties to even ---------------------------------------------

def test_fp16_round_ties_go_to_the_even_neighbour():
    ulp = 2.0 ** -10
    ties = [1 + ulp / 2, 1 + 3 * ulp / 2, -(1 + ulp / 2), 2048 + 1, 2048 + 3]
    expected = [1.0, 1 + 2 * ulp, -1.0, 2048.0, 2052.0]
    np.testing.assert_array_equal(FP16.round(ties), expected)


def test_bf16_round_ties_go_to_the_even_neighbour():
    ulp = 2.0 ** -7
    ties = [1 + ulp / 2, 1 + 3 * ulp / 2, 256 + 1, 256 + 3]
    expected = [1.0, 1 + 2 * ulp, 256.0, 260.0]
    np.testing.assert_array_equal(BF16.round(ties), expected)


def test_round_goes_to_the_nearer_neighbour_just_off_a_tie():
    # The offsets are exactly representable in fp32, so no intermediate rounding can hide them.
    np.testing.assert_array_equal(FP16.round([1 + 2.0 ** -11 + 2.0 ** -20, 1 + 2.0 ** -11 - 2.0 ** -20]),
                                  [1 + 2.0 ** -10, 1.0])
    np.testing.assert_array_equal(BF16.round([1 + 2.0 ** -8 + 2.0 ** -20, 1 + 2.0 ** -8 - 2.0 ** -20]),
                                  [1 + 2.0 ** -7, 1.0])


@pytest.mark.parametrize("fmt", [FP16, BF16], ids=["fp16", "bf16"])
def test_round_is_a_single_rounding_from_float64_without_double_rounding(fmt):
    ulp = 2.0 ** -fmt.mantissa_bits
    just_above_tie = 1 + ulp / 2 + 2.0 ** -40   # the 2^-40 is lost in fp32
    assert fmt.round([just_above_tie])[0] == 1 + ulp
    assert fmt.to_bits(np.array([just_above_tie]))[0] == fmt.to_bits(np.array([1 + ulp]))[0]


def test_fp16_overflow_rounds_to_infinity_only_from_the_halfway_point_above_max():
    # max finite 65504, next (virtual) value 65536: the tie 65520 goes to inf.
    values = [65504.0, 65519.99, 65520.0, 1e6, -65520.0, -65519.0]
    np.testing.assert_array_equal(FP16.round(values), [65504.0, 65504.0, np.inf, np.inf, -np.inf, -65504.0])


def test_bf16_overflow_rounds_to_infinity_from_the_halfway_point_above_max():
    max_finite = 2.0 ** 127 * (2 - 2.0 ** -7)
    halfway = 2.0 ** 127 * (2 - 2.0 ** -8)
    below = halfway - 2.0 ** 104                  # one fp32 step below the tie
    np.testing.assert_array_equal(BF16.round([max_finite, below, halfway, -halfway]),
                                  [max_finite, max_finite, np.inf, -np.inf])
    assert BF16.to_bits(np.array([halfway]))[0] == 0x7F80


def test_fp16_keeps_subnormals_and_rounds_them_to_even():
    tiny = 2.0 ** -24
    values = [tiny, tiny / 2, 3 * tiny / 2, tiny / 2 * 1.001, 1023 * tiny, -tiny / 4]
    np.testing.assert_array_equal(FP16.round(values), [tiny, 0.0, 2 * tiny, tiny, 1023 * tiny, -0.0])
    np.testing.assert_array_equal(FP16.to_bits(np.array(values)),
                                  [0x0001, 0x0000, 0x0002, 0x0001, 0x03FF, 0x8000])


def test_round_returns_float64_values_on_the_grid():
    rounded = FP16.round(np.array([0.1, -0.3, 7.7]))
    assert rounded.dtype == np.float64
    np.testing.assert_array_equal(FP16.round(rounded), rounded)
    assert rounded[0] != 0.1


# ---- bit patterns ------------------------------------------------------------------

@pytest.mark.parametrize("fmt, bits, value", [
    (FP16, 0x3C00, 1.0), (FP16, 0xC000, -2.0), (FP16, 0x7BFF, 65504.0), (FP16, 0x7C00, np.inf),
    (FP16, 0x8000, -0.0), (BF16, 0x3F80, 1.0), (BF16, 0xC000, -2.0), (BF16, 0xFF80, -np.inf),
    (FP32, 0x3F800000, 1.0), (FP32, 0x00000001, 2.0 ** -149),
])
def test_from_bits_and_to_bits_agree_with_known_patterns(fmt, bits, value):
    decoded = fmt.from_bits(np.array([bits], dtype=fmt.wire_dtype))
    assert decoded[0] == value and np.signbit(decoded[0]) == np.signbit(value)
    encoded = fmt.to_bits(np.array([value]))
    assert encoded.dtype == fmt.wire_dtype and encoded[0] == bits


@pytest.mark.parametrize("fmt, n_nan_patterns", [(FP16, 2 * (2 ** 10 - 1)), (BF16, 2 * (2 ** 7 - 1))],
                         ids=["fp16", "bf16"])
def test_every_16_bit_pattern_survives_from_bits_then_to_bits(fmt, n_nan_patterns):
    values = fmt.from_bits(ALL_16_BIT_PATTERNS)
    back = fmt.to_bits(values)
    is_nan = np.isnan(values)
    assert is_nan.sum() == n_nan_patterns          # payloads differ; equality is not asked of them
    np.testing.assert_array_equal(back[~is_nan], ALL_16_BIT_PATTERNS[~is_nan])
    assert np.isnan(fmt.from_bits(back[is_nan])).all()


@pytest.mark.parametrize("fmt", [FP32, FP16, BF16], ids=["fp32", "fp16", "bf16"])
def test_the_numpy_conversions_give_torchs_patterns_and_values(fmt):
    """golden/formats.py converts without torch (so that a run that computes
    no golden model never imports it); the patterns and values are torch's,
    every 16-bit pattern and 200,000 fp32 ones, but for bfloat16's NaN, which
    keeps its sign (torch's float64 -> bfloat16 made 0xFFFF of every NaN)."""
    import torch
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[fmt.name]
    signed = torch.int16 if fmt.bits == 16 else torch.int32
    rng = np.random.default_rng(7)
    patterns = ALL_16_BIT_PATTERNS if fmt.bits == 16 else rng.integers(0, 1 << 32, 200_000, np.uint64).astype(np.uint32)
    values = torch.from_numpy(patterns.view(np.int16 if fmt.bits == 16 else np.int32)).view(dtype).to(torch.float64).numpy()
    ours = fmt.from_bits(patterns)
    assert np.array_equal(ours, values, equal_nan=True) and np.array_equal(np.signbit(ours), np.signbit(values))
    finite = values[np.isfinite(values)]
    near = np.concatenate([finite, finite * (1 + 2.0 ** -30), -finite, [np.inf, -np.inf, 1e300, -1e-300]])
    expected = torch.as_tensor(fmt.round(near)).to(dtype).view(signed).numpy().view(fmt.wire_dtype)
    np.testing.assert_array_equal(fmt.to_bits(near), expected)
    nan_bits = fmt.to_bits(np.array([np.nan, -np.nan]))
    assert np.isnan(fmt.from_bits(nan_bits)).all() and list(np.signbit(fmt.from_bits(nan_bits))) == [False, True]


def test_to_bits_of_negative_zero_keeps_the_sign_bit():
    assert FP16.to_bits(np.array([-0.0]))[0] == 0x8000
    assert BF16.to_bits(np.array([-0.0]))[0] == 0x8000
    assert FP32.to_bits(np.array([-0.0]))[0] == 0x80000000


# ---- ULP distance ---------------------------------------------------------------------

def _d(fmt, a, b):
    return int(fmt.ulp_distance(np.array([a], dtype=fmt.wire_dtype), np.array([b], dtype=fmt.wire_dtype))[0])


@pytest.mark.parametrize("fmt, pos_zero, neg_zero", [(FP16, 0x0000, 0x8000), (BF16, 0x0000, 0x8000),
                                                     (FP32, 0x00000000, 0x80000000)])
def test_positive_and_negative_zero_are_zero_ulp_apart(fmt, pos_zero, neg_zero):
    assert _d(fmt, pos_zero, neg_zero) == 0


def test_neighbouring_patterns_are_one_ulp_apart_in_either_order():
    assert _d(FP16, 0x3C00, 0x3C01) == 1
    assert _d(FP16, 0x3C01, 0x3C00) == 1
    assert _d(FP16, 0xBC00, 0xBC01) == 1
    assert _d(FP16, 0x7BFF, 0x7C00) == 1            # largest finite to infinity
    assert _d(FP16, 0x03FF, 0x0400) == 1            # largest subnormal to smallest normal
    assert _d(BF16, 0x3F80, 0x3F81) == 1
    assert _d(FP32, 0x3F800000, 0x3F7FFFFF) == 1


def test_ulp_distance_across_zero_counts_both_sides():
    assert _d(FP16, 0x0001, 0x8001) == 2            # +tiny to -tiny
    assert _d(FP16, 0x0000, 0x8001) == 1            # +0 to -tiny
    assert _d(FP16, 0x0003, 0x8002) == 5
    assert _d(FP32, 0x00000002, 0x80000003) == 5
    assert _d(FP16, 0x3C00, 0xBC00) == 2 * 0x3C00   # 1.0 to -1.0


def test_ulp_distance_is_elementwise_over_arrays():
    a = np.array([0x3C00, 0x0001, 0x8000], dtype=np.uint16)
    b = np.array([0x3C05, 0x8001, 0x0000], dtype=np.uint16)
    np.testing.assert_array_equal(FP16.ulp_distance(a, b), [5, 2, 0])
