"""The SDK shim for libraries written for the PULP toolchain
(harness/runtime/include): ptl_toolchain_types.h, pmsis.h's 2-D DMA and
printf, bsp/bsp.h and bsp/fs/readfs.h.

- A 16-bit format without an arithmetic type in the compiler is storage-only:
  arithmetic on it does not compile, and the error names the storage-only
  type (never silent integer math on bit patterns).
- On clang, __builtin_shuffle has GCC's semantics: the same program built
  with GCC's built-in and with clang's macro prints the same lanes.
"""
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import toolchain
from harness.build_units import FORCED_INCLUDE, first_error
from harness.target import RUNTIME_DIR

INCLUDE = RUNTIME_DIR / "include"
PICOLIBC = Path("/usr/lib/picolibc/riscv64-unknown-elf/include")
RISCV_GCC = [toolchain.RISCV_GCC, f"-march={toolchain.MARCH}", f"-mabi={toolchain.MABI}"]
RISCV_CLANG = [toolchain.CLANG, "--target=riscv32-unknown-elf", f"-march={toolchain.MARCH}_zfh",
               f"-mabi={toolchain.MABI}"]
API_ERRORS = ["-Werror=int-conversion", "-Werror=incompatible-pointer-types",
              "-Werror=implicit-function-declaration"]

needs_clang = pytest.mark.skipif(not shutil.which("clang"), reason="clang is not installed")
needs_riscv_gcc = pytest.mark.skipif(not shutil.which(toolchain.RISCV_GCC), reason="no RISC-V GCC")
needs_riscv_clang = pytest.mark.skipif(not shutil.which("clang") or not toolchain.clang_has_zfh(),
                                       reason="no clang with Zfh")


def compile_c(compiler: list[str], source: str, tmp_path: Path, link: bool = False,
              flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    path = tmp_path / "snippet.c"
    path.write_text(source)
    out = tmp_path / ("snippet" if link else "snippet.o")
    argv = [*compiler, "-std=gnu11", "-O1", f"-I{INCLUDE}", "-include", str(FORCED_INCLUDE), *flags,
            *([] if link else ["-c"]), str(path), "-o", str(out)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


ARITHMETIC = """
{type} product({type} a, {type} b) {{ return a * b; }}
_Static_assert(sizeof({type}) == 2, "a 16-bit format is 2 bytes");
"""


def test_bfloat16_arithmetic_does_not_compile_with_host_gcc_12(tmp_path):
    """GCC 12 has no arithmetic bfloat16: float16alt must refuse `*`."""
    result = compile_c(["gcc"], ARITHMETIC.format(type="float16alt"), tmp_path)
    assert result.returncode != 0
    assert "float16alt_storage_only" in result.stderr
    assert "no arithmetic type" in first_error(result.stderr)


def test_ieee_half_arithmetic_compiles_where_the_compiler_has_float16(tmp_path):
    """The control: host GCC 12 has _Float16, so the same code on float16 builds."""
    result = compile_c(["gcc"], ARITHMETIC.format(type="float16"), tmp_path)
    assert result.returncode == 0, result.stderr


@needs_riscv_gcc
def test_both_16_bit_formats_are_storage_only_with_riscv_gcc_12(tmp_path):
    for type_name in ("float16", "float16alt"):
        result = compile_c(RISCV_GCC, ARITHMETIC.format(type=type_name), tmp_path,
                           flags=("-isystem", str(PICOLIBC)))
        assert result.returncode != 0, type_name
        assert f"{type_name}_storage_only" in result.stderr



PUBLISHED_DEFINES = """
typedef float16alt fp16;
typedef fp16 v2f16 __attribute__((vector_size (4)));
v2f16 swap(v2f16 a) { return (v2f16)(__builtin_shuffle(a, (v2s) {1, 0})); }
v2f16 mix(v2f16 a, v2f16 b) { return (v2f16)(__builtin_shuffle(a, b, (v2s) {0, 3})) * b + a; }
"""


@pytest.mark.skipif(not shutil.which(toolchain.CLANG19), reason="clang-19 is not installed")
def test_the_published_defines_compile_with_clang_19_and_the_shim(tmp_path):
    """The published pulp_train_defines.h makes v2f16 from float16alt before
    pmsis.h: the shim must give an arithmetic float16alt (the probe's
    -DPTL_FLOAT16ALT_ARITHMETIC=1) and no v2f16 of its own, and its shuffle
    must take masks written inline."""
    riscv = [toolchain.CLANG19, "--target=riscv32-unknown-elf", f"-march={toolchain.MARCH}",
             f"-mabi={toolchain.MABI}"]
    for compiler in (riscv, [toolchain.CLANG19]):
        result = compile_c(compiler, PUBLISHED_DEFINES, tmp_path,
                           flags=("-DPTL_FLOAT16ALT_ARITHMETIC=1", "-Wall", "-Werror"))
        assert result.returncode == 0, result.stderr


@needs_riscv_clang
def test_clang_zfh_computes_in_float16_but_not_in_float16alt(tmp_path):
    ok = compile_c(RISCV_CLANG, ARITHMETIC.format(type="float16"), tmp_path)
    assert ok.returncode == 0, ok.stderr
    refused = compile_c(RISCV_CLANG, ARITHMETIC.format(type="float16alt"), tmp_path)
    assert refused.returncode != 0 and "float16alt_storage_only" in refused.stderr


SHUFFLE_PROGRAM = r"""
#include <stdio.h>
typedef float v2f __attribute__((vector_size(8)));
typedef int v2i __attribute__((vector_size(8)));
typedef float v4f __attribute__((vector_size(16)));
typedef int v4i __attribute__((vector_size(16)));

static int calls;
static v2s counted(v2s m) { calls++; return m; }

int main(void)
{
    const v2s a = {11, 22};
    v2s b = {33, 44};
    static const short masks[][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 3}, {3, 2}, {-1, -2},
                                     {5, -3}, {7, 6}, {32767, -32768}, {2, 0}, {1, 3}};
    for (unsigned i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        v2s m = {masks[i][0], masks[i][1]};
        v2s r2 = __builtin_shuffle(a, counted(m));
        v2s inline_mask = __builtin_shuffle(a, (v2s){1, 0});
        v2s r3 = __builtin_shuffle(a, b, counted(m));
        v2f fa = {1.5f, 2.5f}, fb = {3.5f, 4.5f};
        v2i mi = {masks[i][0], masks[i][1]};
        v2f f2 = __builtin_shuffle(fa, mi), f3 = __builtin_shuffle(fa, fb, mi);
        printf("%d %d | %d %d | %g %g | %g %g | %d\n", r2[0], r2[1], r3[0], r3[1], f2[0], f2[1], f3[0], f3[1],
               inline_mask[0]);
    }
    v4f x = {1, 2, 3, 4}, y = {5, 6, 7, 8};
    v4i m4 = {7, -1, 2, 12};
    v4f z = __builtin_shuffle(x, y, m4), w = __builtin_shuffle(x, m4);
    printf("%g %g %g %g | %g %g %g %g\n", z[0], z[1], z[2], z[3], w[0], w[1], w[2], w[3]);
    printf("mask evaluated %d times\n", calls);
    return 0;
}
"""


def run_shuffle_program(compiler: str, tmp_path: Path) -> str:
    build = tmp_path / compiler
    build.mkdir()
    result = compile_c([compiler, "-Wall", "-Werror"], SHUFFLE_PROGRAM, build, link=True)
    assert result.returncode == 0, result.stderr
    return subprocess.run([str(build / "snippet")], capture_output=True, text=True, check=True).stdout


@needs_clang
def test_clang_shuffle_macro_matches_gcc_builtin_on_every_mask(tmp_path):
    """2- and 3-argument forms, masks in and out of range, negative masks
    (GCC takes them modulo the lane count on the bits), 2 and 4 lanes; each
    argument evaluated once."""
    gcc = run_shuffle_program("gcc", tmp_path)
    clang = run_shuffle_program("clang", tmp_path)
    assert clang == gcc
    assert "mask evaluated 24 times" in gcc
    assert gcc.splitlines()[6] == "22 11 | 44 33 | 2.5 1.5 | 4.5 3.5 | 22"  # {-1, -2}: lanes 1, 0 (and b's)


@needs_riscv_clang
def test_clang_shuffles_v2f16_with_a_v2s_mask_for_zfh(tmp_path):
    source = """
typedef float16 v2f16 __attribute__((vector_size(4)));
v2f16 swap(v2f16 a) { v2s m = {1, 0}; return __builtin_shuffle(a, m); }
v2f16 pick(v2f16 a, v2f16 b) { v2s m = {0, 3}; return __builtin_shuffle(a, b, m); }
float16 dot(v2f16 a, v2f16 b) { v2f16 p = a * b; return p[0] + p[1]; }
"""
    result = compile_c(RISCV_CLANG, source, tmp_path, flags=("-Wall", "-Werror"))
    assert result.returncode == 0, result.stderr


SDK_PROGRAM = r"""
#include <bsp/bsp.h>
#include <bsp/fs/readfs.h>
#include "pmsis.h"

int ptl_num_cores = 1;
void uses_a_file(pi_fs_file_t *file);

/* Static, so that a non-PIE host binary keeps them below 4 GiB: the DMA
 * takes 32-bit addresses. */
static unsigned char ext[4 * 8], loc[3 * 5], one[4];

int main(void)
{
    for (unsigned i = 0; i < sizeof ext; i++)
        ext[i] = (unsigned char)i;
    /* Rows of 5 bytes, 8 apart on the external side, 15 bytes in all. */
    pi_cl_dma_copy_2d_t copy = {.dir = PI_CL_DMA_DIR_EXT2LOC, .merge = 0, .size = sizeof loc, .stride = 8,
                                .length = 5, .id = 0, .ext = (uint32_t)(uintptr_t)ext,
                                .loc = (uint32_t)(uintptr_t)loc};
    pi_cl_dma_memcpy_2d(&copy);
    pi_cl_dma_wait(&copy);
    pi_cl_dma_copy_t copy1 = {.dir = PI_CL_DMA_DIR_EXT2LOC, .size = 4, .ext = (uint32_t)(uintptr_t)(ext + 8),
                              .loc = (uint32_t)(uintptr_t)one};
    pi_cl_dma_memcpy(&copy1);
    pi_cl_dma_wait(&copy1);
    for (unsigned i = 0; i < sizeof loc; i++)
        printf("%d ", loc[i]);
    printf("| %d %d %d %d\n", one[0], one[1], one[2], one[3]);
    return 0;
}
"""


@pytest.mark.skipif(not shutil.which(toolchain.HOST_CC), reason="no host compiler")
def test_pmsis_has_printf_the_2d_dma_and_the_bsp_file_type(tmp_path):
    """The SDK surface of a published library, with API-mismatch warnings as
    errors: the 2-D descriptor filled by field name and copied row by row,
    one pi_cl_dma_wait for both descriptor types, printf without <stdio.h>,
    pi_fs_file_t in a prototype."""
    result = compile_c([toolchain.HOST_CC], SDK_PROGRAM, tmp_path, link=True,
                       flags=(*API_ERRORS, "-Wall", "-Werror", "-no-pie"))
    assert result.returncode == 0, result.stderr
    run = subprocess.run([str(tmp_path / "snippet")], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "0 1 2 3 4 8 9 10 11 12 16 17 18 19 20 | 8 9 10 11\n"
