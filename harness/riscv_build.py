"""How the bare-metal RISC-V targets (QEMU and GVSOC) compile: the candidate
compilers of a build, best first, and the compile, archive and link commands
over one target's runtime.

Both targets build the same way and differ only in the ISA string (QEMU's
harts have the A extension, pulp-open's cores do not) and in their runtime
(start file, link script, include directory):

- FP32 and bfloat16 builds: riscv64-unknown-elf-gcc first (bfloat16 in lib_c's
  software format), then clang-19, which computes `__bf16` in binary32 with
  each operation rounded back (harness/toolchain.py: CLANG19_FLAGS) for a
  library whose headers need float16alt as an arithmetic type.
- IEEE binary16 builds: clang (14), then clang-19, both with Zfh: GCC 12 has
  no `_Float16` for RISC-V.

Compiling with clang takes picolibc's headers with -isystem; linking is
always the GCC driver's, with picolibc's specs (lld cannot link against
picolibc).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness import toolchain
from harness.build_units import LIBRARY_DEFINES, NUM_CORES_TEAM, Toolchain
from harness.compilers import Arithmetic, Compiler, CompilerChoice
from harness.build_inputs import RUNTIME_DIR, BuildConfig, BuildError

FP16_DEFINES = {"fp16": "-DPTL_FP16_IEEE", "bf16": "-DPTL_FP16_BF16"}
# Contraction is left at each compiler's default (GCC: fast, like the PULP
# toolchain; clang: within expressions). Add -ffp-contract=off to get FP32
# results bit-identical to the host target's.
COMMON_FLAGS = ("-std=gnu11", "-O2", "-g", NUM_CORES_TEAM, *LIBRARY_DEFINES,
                "-ffunction-sections", "-fdata-sections", "-fno-fast-math")


@dataclass(frozen=True)
class Runtime:
    """One target's bare-metal runtime, as the compiler and the linker see it."""

    march: str          # without Zfh, which the format adds
    mabi: str
    directory: Path     # its headers; its C sources are the target's business
    start: Path         # the assembly entry, linked first
    link_script: Path

    def gcc_arch(self) -> tuple[str, ...]:
        return (f"-march={self.march}", f"-mabi={self.mabi}")

    def clang_arch(self, zfh: bool) -> tuple[str, ...]:
        return ("--target=riscv32-unknown-elf", f"-march={self.march}{'_zfh' if zfh else ''}",
                f"-mabi={self.mabi}", "-mno-relax", "-ftls-model=local-exec")

    def compilers(self, fp16_format: str) -> list[Compiler]:
        """The candidates for a build, best first (harness/compilers.py picks)."""
        gcc = Compiler(toolchain.RISCV_GCC, (toolchain.RISCV_GCC, "--specs=picolibc.specs", *self.gcc_arch()))
        zfh = fp16_format == "fp16"
        clang = Compiler(toolchain.CLANG, (toolchain.CLANG, *self.clang_arch(zfh)))
        clang19 = Compiler(toolchain.CLANG19, (toolchain.CLANG19, *self.clang_arch(zfh)), toolchain.CLANG19_FLAGS)
        return [clang, clang19] if zfh else [gcc, clang19]

    def toolchain(self, fp16_format: str, extra_flags: list[str] = (), compiler: Compiler | None = None,
                  arithmetic: Arithmetic | None = None) -> Toolchain:
        """Compiles with `compiler` (default: the format's first present
        candidate); `arithmetic` is what the probes found it computes in."""
        if compiler is None:
            candidates = self.compilers(fp16_format)
            compiler = next((c for c in candidates if c.present), candidates[0])
        flags = [*COMMON_FLAGS, FP16_DEFINES[fp16_format], *compiler.flags,
                 *(arithmetic.defines() if arithmetic else []), *extra_flags,
                 f"-I{self.directory}", f"-I{RUNTIME_DIR / 'include'}"]
        if compiler.command[0] == toolchain.RISCV_GCC:
            compiler_argv = [*compiler.command, *flags]
        else:
            include = toolchain.picolibc_include()
            if include is None:
                raise BuildError("picolibc's include directory was not found; run python -m harness toolchain")
            compiler_argv = [*compiler.command, *flags, "-isystem", str(include)]
        link = [toolchain.RISCV_GCC, *self.gcc_arch(), "--specs=picolibc.specs", "-nostartfiles",
                "-T", str(self.link_script), f"-I{self.directory}", f"-I{RUNTIME_DIR / 'include'}", str(self.start)]
        return Toolchain(
            compile=lambda source, obj, extra: [*compiler_argv, *extra, "-c", str(source), "-o", str(obj)],
            archive=lambda archive, objects: [toolchain.RISCV_AR, "rcs", str(archive), *map(str, objects)],
            link=lambda objects, out: [*link, *map(str, objects), "-o", str(out), "-lm"])


def fp16_formats() -> tuple[str, ...]:
    """The 16-bit formats a RISC-V build can make here: IEEE binary16 needs a
    clang with Zfh."""
    return ("bf16", "fp16") if toolchain.clang_has_zfh() or toolchain.clang19_has_zfh() else ("bf16",)


def missing_format_reason(target: str, fp16_format: str) -> str:
    return (f"the {target} target cannot build {fp16_format}: "
            f"{toolchain.check_clang_zfh() or 'unknown format'}. "
            f"Install clang: {' '.join(toolchain.apt_command(['clang']))}")


def fp16_route(fp16_format: str, choice: CompilerChoice) -> str:
    """How a 16-bit format computes in this build, for the run's header and
    the reports."""
    if fp16_format == "fp16":
        return "IEEE binary16 in the core's own instructions (Zfh encodings)"
    if choice.arithmetic.float16alt:
        return ("bfloat16 through binary32: no bfloat16 instructions; __bf16 operations in binary32, each "
                "rounded to bfloat16")
    return "bfloat16 in software: no bfloat16 type; the library's own type and helpers"


class RiscvCompiling:
    """What a bare-metal RISC-V Target (QEMU, GVSOC) does the same way: its
    compiler candidates, the probes' compile command, the route of each
    16-bit format, and the check that it can build a format. Mixed into the
    Target; `runtime` is the target's Runtime, `name` and `capabilities` its own."""

    runtime: Runtime

    def compiler_candidates(self, config: BuildConfig) -> list[Compiler]:
        return self.runtime.compilers(config.fp16_format)

    def compile_argv(self, config: BuildConfig, compiler: Compiler):
        return self.runtime.toolchain(config.fp16_format, compiler=compiler).compile

    def fp16_route(self, fp16_format: str, choice: CompilerChoice) -> str:
        return fp16_route(fp16_format, choice)

    def _check_format(self, fp16_format: str) -> None:
        if fp16_format not in self.capabilities.fp16_formats:
            raise BuildError(missing_format_reason(self.name, fp16_format))
