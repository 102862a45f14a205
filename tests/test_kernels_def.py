"""harness/kernels.py reads the kernel index tables from ptl_kernels.def, the
one copy: the published API's indices first, lib_c's own after them.
(tests/c/test_kernels.c checks that mm_manager runs index i as the table
names it, every index.)"""
import pytest

from harness import kernels


def test_the_published_tables_come_first_and_lib_c_own_kernels_after_them():
    fp32 = kernels.kernel_table("fp32")
    assert fp32[:2] == ("mm", "mm_M") and fp32[23] == "mm_M_unroll_4x4"   # TRAINLIB_API.md's 24
    own = kernels.own_kernels()
    assert [index for _, index, _ in own] == list(range(24, len(fp32)))
    assert all(fp32[index] == name for table, index, name in own if table == "fp32")


@pytest.mark.parametrize("line", ["PTL_KERNEL(fp32, 0, mm, published)", "PTL_KERNEL(fp32, 0, mm)"])
def test_a_line_that_is_not_of_the_form_is_an_error_not_a_silently_shorter_table(tmp_path, monkeypatch, line):
    bad = tmp_path / "ptl_kernels.def"
    bad.write_text(f"/* a comment */\n{line}\nPTL_KERNEL(fp32, 1, mm_M, api)\n")
    monkeypatch.setattr(kernels, "KERNELS_DEF", bad)
    kernels.kernel_tables.cache_clear()
    try:
        with pytest.raises(ValueError, match="not of the form"):
            kernels.kernel_tables()
    finally:
        monkeypatch.undo()
        kernels.kernel_tables.cache_clear()
        kernels.own_kernels.cache_clear()
