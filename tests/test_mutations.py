"""Mutation checks: the suite must catch seeded bugs in the library.

Each mutation copies lib_c/, changes one piece of source the way a real bug
would, and runs a slice of the regression on the host target against the
copy. The suite must report the mutated kernel's variants as numeric
failures that name the variant. The same slices on the clean library must
all pass: no false alarm.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "lib_c"


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str                 # relative to the library root
    original: str             # exact text that the bug replaces
    mutated: str
    select: str               # pytest -k expression for the slice of the suite to run
    must_fail: str            # a variant id that must fail as numeric


MUTATIONS = [
    Mutation("dropped_leftover_row",
             "sources/pulp_mm_tiles_fp32.c",
             "    for (; i < row1; i++) {",
             "    for (; i + 1 < row1; i++) {",
             "matmul-fp32-fw-N7xM8xK9",
             "matmul-fp32-fw-N7xM8xK9-trans_B0-mm_unroll_4x1-c1"),
    Mutation("odd_k_leftover_skipped",  # off-by-one in the K loop: the last k of an odd K is lost
             "sources/pulp_mm_tiles_fp32.c",
             "        if ((KU) == 2 && (K & 1))",
             "        if ((KU) == 2 && (K & 1) && 0)",
             "matmul-fp32-fw-N7xM8xK9",
             "matmul-fp32-fw-N7xM8xK9-trans_B1-mm_unroll_2x2-c3"),
    Mutation("missing_barrier_before_bias",
             "sources/pulp_mm_manager_fp32.c",
             "    pi_cl_team_barrier();\n",
             "\n",
             "linear-fp32-fw-inp37xout19-bias1",
             "linear-fp32-fw-inp37xout19-bias1-mm_M-c8"),
    Mutation("accumulates_in_16_bits",
             "sources/pulp_mm_tiles_fp32.c",
             "#define PTL_MAC(v, u, _) PTL_ACC(u, v) += av * bv##v;",
             "#define PTL_MAC(v, u, _) PTL_ACC(u, v) = fp16_to_f32(fp16_from_f32(PTL_ACC(u, v) + av * bv##v));",
             "matmul-fp32-fw-N64xM64xK64",
             "matmul-fp32-fw-N64xM64xK64-trans_B0-mm_unroll_4x4-c8"),
    Mutation("slice_rounds_down",  # leftover rows of a split that is not a multiple of the cores
             "sources/pulp_mm_tiles_fp32.c",
             "    const int chunk = (total + cores - 1) / cores;",
             "    const int chunk = total / cores;",
             "matmul-fp32-fw-N13xM11xK7",
             "matmul-fp32-fw-N13xM11xK7-trans_B0-mm-c8"),
]


def run_slice(library: Path, select: str, workdir: Path, cache: Path) -> tuple[list[dict], dict[str, str]]:
    """Run a slice of the suite on host; return CSV rows and failure texts by test id."""
    reports = workdir / "reports"
    argv = [sys.executable, "-m", "pytest", str(ROOT / "suite"), "-p", "no:xdist", "-q",
            "--target", "host", "--trainlib", str(library), "-k", select,
            "--reports-dir", str(reports), "--ptl-cache", str(cache)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    csv_path = reports / "results.csv"
    assert csv_path.exists(), f"the suite wrote no report:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    texts = {case.get("name"): (case.find("failure").text or "")
             for case in ET.parse(reports / "junit.xml").getroot().iter("testcase")
             if case.find("failure") is not None}
    return rows, texts


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("ptl-cache")


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_suite_reports_the_seeded_bug_as_a_numeric_failure_naming_the_variant(mutation, tmp_path, cache_dir):
    mutant = tmp_path / "lib"
    shutil.copytree(LIBRARY, mutant)
    source = mutant / mutation.file
    text = source.read_text()
    assert text.count(mutation.original) >= 1, f"mutation site vanished from {mutation.file}; update the mutation"
    source.write_text(text.replace(mutation.original, mutation.mutated))

    rows, texts = run_slice(mutant, mutation.select, tmp_path, cache_dir)

    failed = {r["test_id"]: r for r in rows if r["outcome"] == "failed"}
    assert failed, f"{mutation.name}: no variant failed out of {len(rows)}"
    assert mutation.must_fail in failed, f"{mutation.name}: {mutation.must_fail} passed"
    assert {r["failure_class"] for r in failed.values()} == {"numeric"}
    message = texts[mutation.must_fail]
    kernel = mutation.must_fail.rsplit("-", 2)[1]
    assert f"kernel={kernel} " in message and "cores=" in message and "ULP" in message, message


def test_clean_library_passes_every_slice_the_mutations_use(tmp_path, cache_dir):
    select = " or ".join(sorted({m.select for m in MUTATIONS}))
    rows, _ = run_slice(LIBRARY, select, tmp_path, cache_dir)
    assert len(rows) > 500
    assert {r["outcome"] for r in rows} == {"passed"}, [r["test_id"] for r in rows if r["outcome"] != "passed"][:10]
