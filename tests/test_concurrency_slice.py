"""--concurrency-slice (harness/concurrency_slice.py): what CI's sanitizer
and team-order passes run. A race needs two cores at work, and a build the
slice leaves out is never looked at, so: every entry that forks a team is
there in each of its builds, on a case that gives two cores work."""
from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from harness import catalogue, concurrency_slice, core_split, dtypes

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = [variant for entries in catalogue.families().values() for entry in entries for variant in entry.variants()]


@pytest.fixture(scope="module")
def kept():
    return concurrency_slice.keep(VARIANTS, 1)


def _groups(variants):
    groups = defaultdict(set)
    for variant in variants:
        groups[variant.case.entry.name, dtypes.build_of(variant.case.dtype)].add(variant)
    return groups


def test_every_entry_that_forks_a_team_is_in_the_slice_in_each_of_its_builds(kept):
    # a variant with one core alone has no second core at work (matmul_alone has only those)
    teams = _groups(variant for variant in VARIANTS
                    if variant.cores > 1 and core_split.alone_core(variant.case, variant.cores) is None)
    assert set(_groups(kept)) == set(teams)
    assert ("matmul", "fp32") in teams and ("matmul", "fp16") in teams   # the FP32 build too, not one dtype


def _team_cases(name, build):
    return [v.case for v in VARIANTS if v.case.entry.name == name and dtypes.build_of(v.case.dtype) == build
            and v.cores > 1 and core_split.alone_core(v.case, v.cores) is None]


def test_each_group_keeps_its_smallest_case_and_one_where_two_cores_work_at_two_core_counts_every_kernel(kept):
    for (name, build), variants in _groups(kept).items():
        cases = {variant.case for variant in variants}
        rivals = _team_cases(name, build)
        smallest = min(rivals, key=lambda case: (sum(case.footprint.values()), case.id))
        best = min(map(concurrency_slice.shortfall, rivals))
        assert smallest in cases and len(cases) <= 2, (name, build, cases)
        assert min(map(concurrency_slice.shortfall, cases)) == best, (name, build, cases)
        for case in cases:
            counts = sorted({v.cores for v in VARIANTS if v.case == case and v.cores > 1})
            kernels = {v.kernel for v in VARIANTS if v.case == case}
            assert ({(v.kernel, v.cores) for v in variants if v.case == case}
                    == {(k, c) for k in kernels for c in (counts[0], counts[-1])})


def test_an_entry_with_a_core_split_runs_on_the_team_with_two_units_or_more(kept):
    split = [variant for variant in kept if variant.case.entry.split]
    assert {variant.case.entry.name for variant in split} >= {"embedding", "layernorm", "copy", "set_to_value"}
    assert all(core_split.alone_core(variant.case, variant.cores) is None for variant in split)
    for name, build in _groups(split):
        assert max(variant.case.entry.split.units(variant.case) for variant in split
                   if (variant.case.entry.name, dtypes.build_of(variant.case.dtype)) == (name, build)) >= 2


def test_the_embedding_has_a_case_where_cores_stage_rows_side_by_side(kept):
    """The gap the mutation bench's seed 7 found: rows 1 x width 1, where one
    core works, hid a shared staging row from ThreadSanitizer."""
    assert max(variant.case.shape["rows"] for variant in kept if variant.case.entry.name == "embedding") >= 2


def test_without_a_split_the_sizes_are_at_least_2_where_the_catalogue_has_such_a_case(kept):
    matrix = {variant.case.shape_text for variant in kept if variant.case.entry.name == "transpose_matrix"}
    assert any(int(n) >= 2 and int(m) >= 2 for n, m in (re.fullmatch(r"N(\d+)xM(\d+)", s).groups() for s in matrix))
    conv = [variant.case for variant in kept if variant.case.entry.name == "conv2d"]
    assert any(all(case.shape[size] >= 2 for size in ("Ci", "H", "W", "Co", "Hk", "Wk")) for case in conv)


def test_n_cases_per_group_are_the_first_n_of_the_same_ranking(kept):
    two = concurrency_slice.keep(VARIANTS, 2)
    assert kept < two
    for (name, build), variants in _groups(two).items():
        ranked = sorted(_team_cases(name, build), key=lambda case: (concurrency_slice.shortfall(case),
                                                                    sum(case.footprint.values()), case.id))
        assert set(ranked[:2]) <= {variant.case for variant in variants}


def test_the_option_keeps_the_slice_and_refuses_zero():
    args = [sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "embedding", "--collect-only", "-q",
            "-p", "no:xdist", "--target", "host"]
    run = subprocess.run([*args, "--concurrency-slice", "1"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    ids = [line for line in run.stdout.splitlines() if line.startswith("suite/")]
    expected = sorted(variant.id for variant in concurrency_slice.keep(
        [v for entry in catalogue.entries("embedding") for v in entry.variants()], 1))
    assert sorted(re.search(r"\[(.*)\]$", line).group(1) for line in ids) == expected, run.stdout[-2000:] + run.stderr
    zero = subprocess.run([*args, "--concurrency-slice", "0"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert zero.returncode == 4 and "--concurrency-slice 0: give the cases per entry and build" in zero.stderr, zero.stderr
