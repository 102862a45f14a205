"""The `alone` check (harness/core_split.py): one core runs a per-core body by
itself and must write exactly the block the API documents for it."""
from __future__ import annotations

import numpy as np
import pytest

from golden.bundle import Reference
from golden.formats import format_named
from harness import core_split
from harness.catalogue import act

FP32 = format_named("fp32")


@pytest.mark.parametrize("n", [1, 2, 3, 8, 9, 17, 97, 1000])
@pytest.mark.parametrize("cores", [1, 2, 3, 7, 8])
def test_the_blocks_cover_every_unit_once_in_core_order(n, cores):
    blocks = [core_split.block(n, cores, core) for core in range(cores)]
    units = [u for first, last in blocks for u in range(first, last)]
    assert units == list(range(n))
    b = -(-n // cores)
    assert all(last - first <= b for first, last in blocks)


def test_the_documented_block_of_a_short_last_core():
    # n = 17 on 8 cores: b = 3; core 5 takes the last two, cores 6 and 7 nothing
    assert [core_split.block(17, 8, c) for c in (0, 5, 6, 7)] == [(0, 3), (15, 17), (17, 17), (17, 17)]


def _case(n: int, alone: int):
    return next(c for c in act.GELU.cases()
                if c.dtype == "fp32" and c.shape["n"] == n and c.options[core_split.OPTION] == alone)


def _run(case, cores: int, written: range):
    """What a body that wrote `written` leaves: the reference there, the sentinel elsewhere."""
    n = case.shape["n"]
    value = np.linspace(-1, 1, n)
    reference = Reference(value, np.abs(value), 1)
    bits = np.full(n, core_split.SENTINEL["F32"], dtype=np.uint32)
    bits[list(written)] = FP32.to_bits(value)[list(written)]
    return bits, reference


def test_every_entry_with_a_split_runs_the_team_the_first_and_the_last_core():
    values = sorted({c.options[core_split.OPTION] for c in act.GELU.cases()})
    assert values == sorted(core_split.ALONE.values())
    assert core_split.alone_core(_case(17, core_split.ALONE["TEAM"]), 8) is None
    assert core_split.alone_core(_case(17, core_split.ALONE["FIRST"]), 8) == 0
    assert core_split.alone_core(_case(17, core_split.ALONE["LAST"]), 8) == 7
    assert _case(17, core_split.ALONE["LAST"]).params[core_split.OPTION] == core_split.ALONE["LAST"]


def test_on_one_core_only_the_team_runs_since_either_core_alone_is_the_team():
    variants = [v for v in act.GELU.variants() if v.case.dtype == "fp32" and v.case.shape["n"] == 17]
    at = {(v.case.options[core_split.OPTION], v.cores) for v in variants}
    assert (core_split.ALONE["TEAM"], 1) in at
    assert not {(core_split.ALONE["FIRST"], 1), (core_split.ALONE["LAST"], 1)} & at
    assert {(alone, cores) for alone in core_split.ALONE.values() for cores in act.GELU.cores if cores > 1} <= at


def test_exactly_the_documented_block_passes_and_only_the_block_is_judged():
    case = _case(17, core_split.ALONE["FIRST"])
    bits, reference = _run(case, 3, range(0, 6))          # b = 6 on 3 cores
    reports, judged = core_split.judge(case, 0, 3, 0, {"y": bits}, {"y": reference}, {"y": FP32}, {})
    assert reports == []
    assert (judged["y"] == FP32.to_bits(reference.value)).all()   # outside the block: the reference's


def test_a_coarser_split_is_named_with_the_block_and_the_elements_written_outside_it():
    case = _case(17, core_split.ALONE["FIRST"])
    bits, reference = _run(case, 3, range(0, 7))          # b = ceil((n + 2) / cores) = 7
    reports, judged = core_split.judge(case, 0, 3, 0, {"y": bits}, {"y": reference}, {"y": FP32}, {})
    assert len(reports) == 1
    assert "core 0 of 3" in reports[0] and "units [0, 6) of n = 17" in reports[0]
    assert "tensor y: 1 of 11 elements outside that block changed from the sentinel" in reports[0]
    assert "6 = " in reports[0] and "unit 6" in reports[0]


def test_an_element_of_the_block_left_unwritten_is_named_and_still_fails_the_comparison():
    case = _case(17, core_split.ALONE["LAST"])
    bits, reference = _run(case, 8, range(15, 16))        # core 5 of 8 owns [15, 17); 16 never written
    reports, judged = core_split.judge(case, 0, 8, 5, {"y": bits}, {"y": reference}, {"y": FP32}, {})
    assert reports == [reports[0]] and "1 of 2 elements of that block still hold the runner's sentinel" in reports[0]
    assert judged["y"][16] == core_split.SENTINEL["F32"]   # left for the comparison, which fails it as a NaN


def test_an_empty_block_must_leave_everything_as_the_sentinel():
    case = _case(17, core_split.ALONE["LAST"])
    bits, reference = _run(case, 8, range(16, 17))        # core 7 of 8 owns nothing
    reports, _ = core_split.judge(case, 0, 8, 7, {"y": bits}, {"y": reference}, {"y": FP32}, {})
    assert len(reports) == 1 and "units [17, 17)" in reports[0] and "16 = 1 (0x3f800000, unit 16)" in reports[0]


def test_an_in_place_body_must_leave_the_input_outside_its_block():
    from harness.catalogue import softmax
    case = next(c for c in softmax.DIV.cases() if c.shape["dim"] == 9 and c.options[core_split.OPTION] == 2)
    x = np.linspace(-2, 2, 9)
    reference = Reference(x / 3, np.abs(x / 3), 1)
    bits = FP32.to_bits(x)                                   # y starts as x
    bits[6:9] = FP32.to_bits(reference.value)[6:9]           # core 2 of 3 owns [6, 9)
    reports, _ = core_split.judge(case, 0, 3, 2, {"y": bits}, {"y": reference}, {"y": FP32}, {"x": x})
    assert reports == []
    bits[5] = FP32.to_bits(reference.value)[5]               # and one of core 1's
    reports, _ = core_split.judge(case, 0, 3, 2, {"y": bits}, {"y": reference}, {"y": FP32}, {"x": x})
    assert len(reports) == 1 and "1 of 6 elements outside that block changed from the input x" in reports[0]


def test_a_matmul_kernel_is_judged_by_its_own_axis_rows_for_mm_columns_for_mm_M():
    from harness.catalogue import linalg
    from harness.kernels import kernel_table
    case = next(c for c in linalg.MATMUL_ALONE.cases() if c.dtype == "fp32" and c.shape == dict(N=13, M=11, K=7)
                and c.options["trans_B"] == 0 and c.options[core_split.OPTION] == core_split.ALONE["FIRST"])
    names = kernel_table("fp32")
    row_kernel, column_kernel = names.index("mm_unroll_4x1"), names.index("mm_M_unroll_1x4")
    value = np.linspace(-1, 1, 13 * 11).reshape(13, 11)
    reference = Reference(value, np.abs(value), 7)
    rows = np.full((13, 11), core_split.SENTINEL["F32"], dtype=np.uint32)
    rows[0:5] = FP32.to_bits(value[0:5])                    # core 0 of 3: rows [0, 5)
    columns = np.full((13, 11), core_split.SENTINEL["F32"], dtype=np.uint32)
    columns[:, 0:4] = FP32.to_bits(value[:, 0:4])           # core 0 of 3: columns [0, 4)

    def reports(kernel, bits):
        return core_split.judge(case, kernel, 3, 0, {"C": bits}, {"C": reference}, {"C": FP32}, {})[0]

    assert reports(row_kernel, rows) == [] and reports(column_kernel, columns) == []
    assert "units [0, 5) of n = 13" in reports(row_kernel, columns)[0]
    assert "units [0, 4) of n = 11" in reports(column_kernel, rows)[0]
