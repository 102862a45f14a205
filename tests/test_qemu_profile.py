"""bench/qemu_profile.py: the split of a profile into the matmul and the
rest, and the ranges that count one function instruction by instruction."""
import pytest

from bench.qemu_profile import is_matmul, split_ranges, split_row


def test_gcc_clones_of_the_tiles_count_as_the_matmul():
    # GCC names a specialised copy tile_1x5_bt_row.constprop.0; before, the
    # conv bench listed such tiles as the largest work outside the matmul.
    assert is_matmul("tile_1x5_bt_row.constprop.0")
    assert is_matmul("run_short.isra.0")
    assert is_matmul("mm_unroll_4x4")
    assert not is_matmul("unroll_rows_of_pixels")
    assert not is_matmul("pulp_im2col_fp32.part.0")


def test_split_row_gives_the_shares_and_the_largest_rest():
    total, matmul, rest, largest = split_row(
        {"tile_4x4_bn_row.constprop.0": 60, "mm_unroll_4x4": 20, "pulp_im2col_fp32": 15, "conv_fw": 5}, 2)
    assert (total, matmul, rest) == (100, "80.0%", "20.0%")
    assert largest == "`pulp_im2col_fp32` 15.0%, `conv_fw` 5.0%"


FUNCTIONS = "100 108 f\n108 110 g\n110 120 h\n"


def test_a_function_is_cut_at_each_instruction_and_the_others_stay():
    # g holds a 4-byte and two 2-byte instructions (compressed); an address
    # outside g in the list is ignored.
    assert split_ranges(FUNCTIONS, "g", [0x10c, 0x108, 0x10e, 0x104]) == \
        "100 108 f\n108 10c pc_108\n10c 10e pc_10c\n10e 110 pc_10e\n110 120 h\n"


@pytest.mark.parametrize("function, starts, complaint", [
    ("k", [0x108], "no function k"),
    ("g", [0x10a, 0x10c], "does not start at its symbol (0x108)"),
    ("g", [], "does not start at its symbol"),
])
def test_a_function_that_cannot_be_cut_is_said(function, starts, complaint):
    with pytest.raises(ValueError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
        split_ranges(FUNCTIONS, function, starts)
