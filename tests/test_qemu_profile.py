"""bench/qemu_profile.py's split of a profile into the matmul and the rest."""
from bench.qemu_profile import is_matmul, split_row


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
