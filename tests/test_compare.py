"""harness/compare.py: tolerance from dtype and reduction length, and the failure report."""
import numpy as np
import pytest

from golden.bundle import Reference
from golden.formats import BF16, FP16, FP32
from harness.compare import WORST_SHOWN, compare_tensor, gamma, tolerance
from harness.failures import BAD_CASE, CaseFailure


def ref(values, magnitude=None, n=1):
    values = np.asarray(values, dtype=np.float64)
    mag = np.abs(values) if magnitude is None else np.asarray(magnitude, dtype=np.float64)
    return Reference(values, mag, n)


def bits16(*patterns):
    return np.array(patterns, dtype=np.uint16)


# ---- the bound -------------------------------------------------------------------------

def test_gamma_is_n_u_over_one_minus_n_u():
    u = 2.0 ** -11
    assert gamma(3, u) == 3 * u / (1 - 3 * u)
    assert gamma(0, u) == 0.0


@pytest.mark.parametrize("fmt", [FP32, FP16, BF16], ids=lambda f: f.name)
def test_tolerance_is_gamma_n_times_magnitude_plus_n_eta(fmt):
    reference = ref([0.5, -3.0, 0.0], magnitude=[1.0, 8.0, 2.0], n=7)
    u, eta = fmt.unit_roundoff, fmt.smallest_subnormal / 2
    expected = (7 * u / (1 - 7 * u)) * np.array([1.0, 8.0, 2.0]) + 7 * eta
    np.testing.assert_allclose(tolerance(reference, fmt), expected, rtol=1e-15, atol=0)
    np.testing.assert_allclose(tolerance(reference, fmt, scale=2.0), 2 * expected, rtol=1e-15, atol=0)


@pytest.mark.parametrize("fmt, n", [(FP16, 1024), (BF16, 128), (FP16, 5000)], ids=["fp16", "bf16", "fp16-far"])
def test_a_reduction_with_n_u_at_least_one_half_is_a_bad_case(fmt, n):
    with pytest.raises(CaseFailure) as caught:
        compare_tensor("y", bits16(0x3C00), ref([1.0], n=n), fmt)
    assert caught.value.kind == BAD_CASE
    assert "n*u >= 1/2" in caught.value.message and str(n) in caught.value.message


def test_the_longest_useful_reduction_still_has_a_bound():
    assert compare_tensor("y", bits16(0x3C00), ref([1.0], n=1023), FP16).ok


# ---- inside and outside --------------------------------------------------------------------
# fp16, value 1.0 (0x3C00), n = 8, magnitude 8: the bound is 8 * gamma(8) ~= 0.031372,
# the ULP of [1, 2) is 2^-10, so 32 ULP (0.03125) is inside and 33 ULP (0.03223) outside.

EIGHT_TERMS = ref([1.0], magnitude=[8.0], n=8)


def test_the_bound_of_the_worked_example_lies_between_32_and_33_ulp():
    bound = tolerance(EIGHT_TERMS, FP16)[0]
    assert 32 * 2.0 ** -10 < bound < 33 * 2.0 ** -10


@pytest.mark.parametrize("direction", [+1, -1], ids=["above", "below"])
def test_a_result_at_the_edge_of_the_bound_passes(direction):
    # below 1.0 the ULP halves, so 32 ULP above is the same distance as 64 ULP below
    pattern = 0x3C00 + 32 if direction > 0 else 0x3C00 - 64
    result = compare_tensor("y", bits16(pattern), EIGHT_TERMS, FP16)
    assert result.ok and result.n_bad == 0 and result.report == ""
    assert result.max_ulp == abs(pattern - 0x3C00)
    assert 0.99 < result.worst_ratio <= 1.0


@pytest.mark.parametrize("direction", [+1, -1], ids=["above", "below"])
def test_a_result_one_ulp_beyond_the_bound_fails(direction):
    pattern = 0x3C00 + 33 if direction > 0 else 0x3C00 - 65
    result = compare_tensor("y", bits16(pattern), EIGHT_TERMS, FP16)
    assert not result.ok and result.n_bad == 1
    assert result.worst_ratio > 1.0


def test_fp32_single_product_allows_half_an_ulp_but_not_one():
    one_product = ref([1.0], n=1)
    below = np.array([0x3F7FFFFF], dtype=np.uint32)    # 1 - 2^-24: error u, bound ~u
    above = np.array([0x3F800001], dtype=np.uint32)    # 1 + 2^-23: error 2u
    assert compare_tensor("y", below, one_product, FP32).ok
    assert not compare_tensor("y", above, one_product, FP32).ok


def test_underflowing_results_get_n_eta_of_slack():
    # reference 0 with magnitude 0: only the n*eta term allows anything
    assert compare_tensor("y", bits16(0x0001), ref([0.0], magnitude=[0.0], n=2), FP16).ok   # 2^-24 <= 2*2^-25
    assert not compare_tensor("y", bits16(0x0002), ref([0.0], magnitude=[0.0], n=1), FP16).ok


@pytest.mark.parametrize("pattern", [0x7E00, 0xFE01, 0x7C00, 0xFC00], ids=["qnan", "neg-nan", "inf", "-inf"])
def test_nan_and_infinite_results_fail(pattern):
    result = compare_tensor("y", bits16(0x3C00, pattern), ref([1.0, 1.0], n=4), FP16)
    assert not result.ok and result.n_bad == 1
    assert result.max_ulp == -1
    assert "inf (non-finite outputs)" in result.report


def test_a_copy_with_reduction_zero_must_be_bit_exact():
    copy = ref([0.333251953125, -2.0], n=0)      # both on the fp16 grid
    exact = FP16.to_bits(copy.value)
    assert compare_tensor("db", exact, copy, FP16).ok
    one_off = exact.copy()
    one_off[0] += 1
    result = compare_tensor("db", one_off, copy, FP16)
    assert not result.ok and result.max_ulp == 1 and result.worst_ratio == np.inf


def test_a_documented_approximation_widens_the_bound_by_exactly_its_propagated_error():
    # fastexp-like: the device value is 2% off; the golden model grants 3% of |y|.
    exact = ref([1.0, 0.5], n=3)
    approximated = Reference(exact.value, exact.magnitude, 3, propagated=0.03 * np.abs(exact.value))
    off = FP16.to_bits(np.array([1.0, 0.5]) * 1.02)
    assert not compare_tensor("y", off, exact, FP16).ok
    assert compare_tensor("y", off, approximated, FP16).ok
    np.testing.assert_allclose(tolerance(approximated, FP16) - tolerance(exact, FP16), [0.03, 0.015], rtol=1e-12)
    beyond = FP16.to_bits(np.array([1.0, 0.5]) * 1.04)
    result = compare_tensor("y", beyond, approximated, FP16)
    assert not result.ok and "plus the propagated bound" in result.report


def test_a_tensor_of_the_wrong_size_fails_with_a_message():
    result = compare_tensor("C", bits16(1, 2, 3), ref(np.zeros((2, 2))), FP16)
    assert not result.ok and result.n_bad == 4
    assert result.report == "tensor C: 3 elements arrived, 4 expected"


def test_ulp_statistics_are_measured_against_the_rounded_reference():
    reference = ref([1.0, 2.0, 4.0], magnitude=[64.0, 64.0, 64.0], n=16)
    actual = bits16(0x3C00, 0x4000 + 3, 0x4400 + 2)
    result = compare_tensor("y", actual, reference, FP16)
    assert result.ok
    assert result.max_ulp == 3 and result.mean_ulp == pytest.approx(5 / 3)


# ---- the failure report -------------------------------------------------------------------------

def test_the_failure_report_names_tensor_count_and_ulp_statistics():
    reference = ref(np.ones((2, 3)), magnitude=np.ones((2, 3)), n=1)
    actual = np.full((2, 3), 0x3C00, dtype=np.uint16)
    actual[0, 1] = 0x3C00 + 40
    actual[1, 2] = 0x3C00 + 10
    result = compare_tensor("dW", actual, reference, FP16)
    header = result.report.splitlines()[0]
    assert header.startswith("tensor dW [2x3] fp16: 2 of 6 elements outside tolerance (reduction n=1)")
    assert "max ULP 40" in header and "mean ULP 8.33" in header
    assert (result.n_bad, result.size, result.max_ulp) == (2, 6, 40)


def test_the_failure_report_lists_the_worst_elements_first_with_index_values_hex_and_ulp():
    reference = ref(np.ones((2, 3)), magnitude=np.ones((2, 3)), n=1)
    actual = np.full((2, 3), 0x3C00, dtype=np.uint16)
    actual[0, 1] = 0x3C00 + 10
    actual[1, 2] = 0x3C00 + 40          # 1.0390625
    lines = compare_tensor("dW", actual, reference, FP16).report.splitlines()
    assert lines[1].split() == ["index", "reference", "actual", "hex", "ULP", "tolerance"]
    worst, second = lines[2].split(), lines[3].split()
    assert worst[:2] == ["(1,", "2)"] and worst[2:6] == ["1", "1.039062", "0x3c28", "40"]
    assert second[:2] == ["(0,", "1)"] and second[4:6] == ["0x3c0a", "10"]
    assert len(lines) == 4


def test_the_failure_report_shows_at_most_the_worst_five():
    n_bad = WORST_SHOWN + 3
    reference = ref(np.ones(n_bad), n=1)
    actual = (0x3C00 + 10 + np.arange(n_bad)).astype(np.uint16)     # the last element is worst
    lines = compare_tensor("y", actual, reference, FP16).report.splitlines()
    assert f"{n_bad} of {n_bad} elements" in lines[0]
    rows = lines[2:]
    assert len(rows) == WORST_SHOWN
    assert [row.split()[0] for row in rows] == [f"({i},)" for i in range(n_bad - 1, n_bad - 1 - WORST_SHOWN, -1)]


def test_an_fp32_failure_prints_eight_hex_digits():
    result = compare_tensor("y", np.array([0x3F800100], dtype=np.uint32), ref([1.0], n=1), FP32)
    assert "0x3f800100" in result.report and " 256 " in result.report
