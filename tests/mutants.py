"""Mutant libraries: a copy of lib_c with one piece of source changed the
way a real bug would change it. tests/test_mutations.py seeds bugs the
suite must catch; FAST_AND_WRONG is the kernel the autotuner must never pick."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

LIBRARY = Path(__file__).resolve().parent.parent / "lib_c"


@dataclass(frozen=True)
class SourceEdit:
    file: str        # relative to the library root
    original: str    # exact text that the bug replaces
    mutated: str


def mutant_library(dest: Path, edit: SourceEdit) -> Path:
    """A copy of lib_c at dest with the edit applied; fails if its site has moved."""
    shutil.copytree(LIBRARY, dest)
    source = dest / edit.file
    text = source.read_text()
    assert text.count(edit.original) >= 1, f"mutation site vanished from {edit.file}; update the mutation"
    source.write_text(text.replace(edit.original, edit.mutated))
    return dest


# mm_unroll_4x4 computes only the first half of the rows of C: it does half
# the work, so it is the fastest kernel on every shape, and it is wrong.
FAST_AND_WRONG_KERNEL = "mm_unroll_4x4"
FAST_AND_WRONG = SourceEdit(
    "sources/pulp_matmul_fp32.c",
    "void mm_unroll_4x4(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x4, 0); }",
    "void mm_unroll_4x4(void *matMul_args)\n{\n    struct matMul_args half = *(struct matMul_args *)matMul_args;\n"
    "    half.N /= 2;\n    ptl_mm_fp32_run(&half, &ptl_mm_fp32_tiles_4x4, 0);\n}")

# mm_unroll_2x4 never returns: the library hangs in one kernel. On qemu the
# variants before it pass and the rest are `timeout`; the board farm must say
# the same and keep its (healthy) boards.
HANGING_KERNEL = "mm_unroll_2x4"
HANGS = SourceEdit(
    "sources/pulp_matmul_fp32.c",
    "void mm_unroll_2x4(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x4, 0); }",
    "void mm_unroll_2x4(void *matMul_args) { (void)matMul_args; for (volatile int spin = 1; spin;) ; }")
