"""golden/linalg.py: matmul and linear-layer references, checked by hand on small examples."""
import numpy as np
import pytest

from golden import linalg

A = np.array([[1.0, -2.0], [3.0, 4.0]])
B = np.array([[5.0, 6.0], [-7.0, 8.0]])


def test_matmul_value_and_magnitude_match_a_hand_computed_2x2_product():
    ref = linalg.matmul({"A": A, "B": B}, trans_B=0)["C"]
    # C[0,0] = 1*5 + (-2)(-7) = 19, |terms| = 5 + 14 = 19; C[0,1] = 6 - 16 = -10, |terms| = 6 + 16 = 22
    np.testing.assert_array_equal(ref.value, [[19.0, -10.0], [-13.0, 50.0]])
    np.testing.assert_array_equal(ref.magnitude, [[19.0, 22.0], [43.0, 50.0]])
    assert ref.reduction == 2


def test_matmul_with_trans_B_reads_B_stored_as_M_by_K():
    plain = linalg.matmul({"A": A, "B": B}, trans_B=0)["C"]
    transposed = linalg.matmul({"A": A, "B": B.T.copy()}, trans_B=1)["C"]
    np.testing.assert_array_equal(transposed.value, plain.value)
    np.testing.assert_array_equal(transposed.magnitude, plain.magnitude)


def test_matmul_reduction_is_K_for_non_square_shapes():
    a = np.array([[1.0, -1.0, 2.0]])                 # N=1, K=3
    b = np.array([[1.0, 0.5], [2.0, -1.0], [-3.0, 4.0]])  # K=3, M=2
    ref = linalg.matmul({"A": a, "B": b}, trans_B=0)["C"]
    np.testing.assert_array_equal(ref.value, [[1 - 2 - 6, 0.5 + 1 + 8]])
    np.testing.assert_array_equal(ref.magnitude, [[1 + 2 + 6, 0.5 + 1 + 8]])
    assert ref.value.shape == (1, 2) and ref.reduction == 3
    bt = linalg.matmul({"A": a, "B": b.T.copy()}, trans_B=1)["C"]
    assert bt.reduction == 3


def test_matmul_bias_per_column_and_per_row_follow_mm_managers_contract():
    bias = np.array([10.0, -20.0])
    plain = linalg.matmul({"A": A, "B": B}, trans_B=0)["C"]
    column = linalg.matmul({"A": A, "B": B, "bias": bias}, trans_B=0, bias=1)["C"]   # C[i][j] += bias[j]
    row = linalg.matmul({"A": A, "B": B, "bias": bias}, trans_B=0, bias=2)["C"]      # C[i][j] += bias[i]
    np.testing.assert_array_equal(column.value, plain.value + [[10.0, -20.0], [10.0, -20.0]])
    np.testing.assert_array_equal(row.value, plain.value + [[10.0, 10.0], [-20.0, -20.0]])
    np.testing.assert_array_equal(row.magnitude, plain.magnitude + [[10.0, 10.0], [20.0, 20.0]])
    assert column.reduction == row.reduction == plain.reduction + 1


def test_matmul_magnitude_exceeds_value_when_terms_cancel():
    ref = linalg.matmul({"A": np.array([[1.0, 1.0]]), "B": np.array([[1.0], [-1.0]])}, trans_B=0)["C"]
    assert ref.value[0, 0] == 0.0 and ref.magnitude[0, 0] == 2.0


# Linear layer: W [out=2 x in=3], x [3], b [2], dy [2]
W = np.array([[1.0, -2.0, 0.5], [-1.0, 3.0, 2.0]])
x = np.array([2.0, 1.0, -4.0])
b = np.array([0.25, -1.0])
dy = np.array([-1.0, 2.0])
LINEAR_INPUTS = {"x": x, "W": W, "b": b, "dy": dy}


def test_linear_forward_with_bias_sums_in_products_plus_the_bias():
    ref = linalg.linear(LINEAR_INPUTS, "fw", use_bias=1)
    assert list(ref) == ["y"]
    # y0 = 2 - 2 - 2 + 0.25; y1 = -2 + 3 - 8 - 1
    np.testing.assert_array_equal(ref["y"].value, [-1.75, -8.0])
    np.testing.assert_array_equal(ref["y"].magnitude, [2 + 2 + 2 + 0.25, 2 + 3 + 8 + 1])
    assert ref["y"].reduction == 3 + 1


def test_linear_forward_without_bias_ignores_b():
    ref = linalg.linear(LINEAR_INPUTS, "fw", use_bias=0)["y"]
    np.testing.assert_array_equal(ref.value, [-2.0, -7.0])
    np.testing.assert_array_equal(ref.magnitude, [6.0, 13.0])
    assert ref.reduction == 3


def test_linear_weight_gradient_is_the_outer_product_of_dy_and_x():
    refs = linalg.linear(LINEAR_INPUTS, "wg", use_bias=0)
    assert list(refs) == ["dW"]
    np.testing.assert_array_equal(refs["dW"].value, [[-2.0, -1.0, 4.0], [4.0, 2.0, -8.0]])
    np.testing.assert_array_equal(refs["dW"].magnitude, [[2.0, 1.0, 4.0], [4.0, 2.0, 8.0]])
    assert refs["dW"].reduction == 1


def test_linear_weight_gradient_with_bias_adds_db_as_an_exact_copy_of_dy():
    refs = linalg.linear(LINEAR_INPUTS, "wg", use_bias=1)
    assert list(refs) == ["dW", "db"]
    np.testing.assert_array_equal(refs["db"].value, dy)
    np.testing.assert_array_equal(refs["db"].magnitude, np.abs(dy))
    assert refs["db"].reduction == 0


def test_linear_input_gradient_is_W_transposed_times_dy_with_reduction_out():
    ref = linalg.linear(LINEAR_INPUTS, "ig", use_bias=0)["dx"]
    # dx = W^T dy = [-1 - 2, 2 + 6, -0.5 + 4]
    np.testing.assert_array_equal(ref.value, [-3.0, 8.0, 3.5])
    np.testing.assert_array_equal(ref.magnitude, [3.0, 8.0, 4.5])
    assert ref.reduction == 2


def test_linear_rejects_an_unknown_step_naming_the_valid_ones():
    with pytest.raises(ValueError, match=r"'bw'.*fw, wg or ig"):
        linalg.linear(LINEAR_INPUTS, "bw", use_bias=0)
