"""Which compiler builds a library, chosen by what the compilers can do.

A library written for the PULP toolchain uses `float16` (IEEE binary16) and
`float16alt` (bfloat16) as arithmetic types in its headers: the published
PULP-TrainLib declares `typedef float16alt fp16;` and then a vector of fp16,
which only compiles where float16alt is a scalar arithmetic type. Debian's
GCC 12 has neither type; clang 19 has both (`_Float16`, `__bf16`). lib_c needs
neither: it brings its own software 16-bit formats.

So each target lists its candidate compilers for a build configuration, in
order of preference, and the first one that compiles the library's umbrella
header (`pulp_train.h`, with the harness's SDK shim) builds the library and
the runner. Everything here is found by compile probes, never by a macro:
clang 19 computes in __bf16 but defines no __BFLT16_MANT_DIG__.

- Arithmetic: does `_Float16` / `__bf16` compile as an arithmetic type? The
  answer goes to ptl_toolchain_types.h as -DPTL_FLOAT16_ARITHMETIC and
  -DPTL_FLOAT16ALT_ARITHMETIC.
- The library's own fp16: is it float16alt (bfloat16) or float16 (IEEE)?
  `__builtin_types_compatible_p` in a static assertion tells; a library whose
  fp16 is neither (lib_c's own type) follows the build's -DPTL_FP16_* request.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from harness.build_units import headline
from harness.build_inputs import LibrarySource

# Format names as the reports and the build configurations spell them.
FORMAT_NAMES = {"fp16": "IEEE binary16", "bf16": "bfloat16"}
UMBRELLA_HEADER = "pulp_train.h"


@dataclass(frozen=True)
class Compiler:
    """A C compiler with the flags that make it compile for a target."""

    name: str                     # what reports call it: "riscv64-unknown-elf-gcc", "clang-19"
    command: tuple[str, ...]      # the driver and its target flags
    flags: tuple[str, ...] = ()   # flags this compiler needs beside the build's own

    @property
    def present(self) -> bool:
        return shutil.which(self.command[0]) is not None

    def version(self) -> str:
        try:
            result = subprocess.run([self.command[0], "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return "missing"
        return (result.stdout or result.stderr).strip().splitlines()[0] if result.returncode == 0 else "missing"


@dataclass(frozen=True)
class Arithmetic:
    """Whether a compiler computes in each 16-bit format of the PULP toolchain."""

    float16: bool
    float16alt: bool

    def defines(self) -> list[str]:
        return [f"-DPTL_FLOAT16_ARITHMETIC={int(self.float16)}",
                f"-DPTL_FLOAT16ALT_ARITHMETIC={int(self.float16alt)}"]

    def describe(self) -> str:
        def one(name: str, native: str, has: bool) -> str:
            return f"{name} {'arithmetic (' + native + ')' if has else 'storage-only'}"
        return f"{one('float16', '_Float16', self.float16)}, {one('float16alt', '__bf16', self.float16alt)}"


@dataclass(frozen=True)
class CompilerChoice:
    """The compiler that builds one configuration, and what the probes found."""

    compiler: Compiler
    version: str
    arithmetic: Arithmetic
    library_fp16: str | None      # "bf16" or "fp16": the format of the library's own fp16; None: its own type
    rejected: tuple[str, ...]     # "<compiler>: <why>" for each candidate tried before this one

    def fp16_format(self, requested: str) -> str:
        """The format the library's FP16 code computes in, for a build that asked for `requested`."""
        return self.library_fp16 or requested

    def describe(self, requested: str) -> str:
        fp16 = (f"the library's fp16 is {FORMAT_NAMES[self.library_fp16]}" if self.library_fp16
                else f"the library's fp16 is its own type, built as {FORMAT_NAMES[requested]}")
        line = f"{self.compiler.name} ({self.version}); {self.arithmetic.describe()}; {fp16}"
        if self.rejected:
            line += f" [not {'; not '.join(self.rejected)}]"
        return line

    def material(self) -> dict:
        """What the build cache key needs of the choice."""
        return {"compiler": [*self.compiler.command, *self.compiler.flags], "compiler_version": self.version,
                "arithmetic": self.arithmetic.defines(), "library_fp16": self.library_fp16}


# (source, object, extra flags) -> argv: how a target compiles one file with a compiler.
CompileArgv = Callable[[Path, Path, list[str]], list[str]]

ARITHMETIC_PROBE = "{type} ptl_probe({type} a, {type} b) {{ return a * b + a; }}\n"
FP16_FORMAT_PROBE = ('#include "{header}"\n'
                     '_Static_assert(__builtin_types_compatible_p(fp16, {type}), "fp16 is not {type}");\n')


def _compiles(argv_of: CompileArgv, source_text: str, flags: list[str]) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="ptl-probe-") as tmp:
        source = Path(tmp) / "probe.c"
        source.write_text(source_text)
        try:
            result = subprocess.run(argv_of(source, Path(tmp) / "probe.o", flags), capture_output=True,
                                    text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, str(exc)
    return result.returncode == 0, result.stderr


def _arithmetic(argv_of: CompileArgv) -> Arithmetic:
    return Arithmetic(_compiles(argv_of, ARITHMETIC_PROBE.format(type="_Float16"), [])[0],
                      _compiles(argv_of, ARITHMETIC_PROBE.format(type="__bf16"), [])[0])


def choose(candidates: Sequence[Compiler], argv_for: Callable[[Compiler], CompileArgv],
           library: LibrarySource, library_flags: Callable[[Arithmetic], list[str]]) -> CompilerChoice:
    """The first present candidate that compiles the library's umbrella header
    with the harness's shim; if none does, the one that compiles the most of
    the library's headers alone (its build failures then say why).
    library_flags(arithmetic) are the flags a library source is compiled
    with (include directories, the forced shim)."""
    present = [c for c in candidates if c.present]
    if not present:
        names = ", ".join(c.command[0] for c in candidates)
        raise FileNotFoundError(f"none of the compilers {names} is installed")
    rejected, tried = [], {}
    has_umbrella = any((d / UMBRELLA_HEADER).exists() for d in library.include_dirs)
    for compiler in present:
        argv_of = argv_for(compiler)
        arithmetic = _arithmetic(argv_of)
        flags = library_flags(arithmetic)
        tried[compiler] = argv_of, arithmetic, flags
        if has_umbrella:
            ok, errors = _compiles(argv_of, f'#include "{UMBRELLA_HEADER}"\n', flags)
            if not ok:
                rejected.append(f"{compiler.name}: {UMBRELLA_HEADER} does not compile: "
                                f"{(headline(errors) or '(no compiler output)')[:200]}")
                continue
        return CompilerChoice(compiler, compiler.version(), arithmetic,
                              _library_fp16(argv_of, flags) if has_umbrella else None, tuple(rejected))
    # None compiles it: the one that compiles the most of the library's
    # headers, each alone, gets furthest, so that the failures name the fault
    # that is left (an older PULP-TrainLib's pulp_train.h includes an
    # unguarded header twice, which fails under every compiler, while GCC
    # also rejects its float16alt types first: its error would hide the one a
    # fix has to start from). max() keeps the first of a tie.
    headers = sorted({h.name for d in library.include_dirs for h in d.glob("*.h")} - {UMBRELLA_HEADER})
    compiling = {c: [h for h in headers if _compiles(tried[c][0], f'#include "{h}"\n', tried[c][2])[0]]
                 for c in present}
    compiler = max(present, key=lambda c: len(compiling[c]))
    argv_of, arithmetic, flags = tried[compiler]
    fp16 = next(filter(None, (_library_fp16(argv_of, flags, h) for h in compiling[compiler])), None)
    return CompilerChoice(compiler, compiler.version(), arithmetic, fp16, tuple(rejected))


def _library_fp16(argv_of: CompileArgv, flags: list[str], header: str = UMBRELLA_HEADER) -> str | None:
    for fmt, type_name in (("bf16", "float16alt"), ("fp16", "float16")):
        if _compiles(argv_of, FP16_FORMAT_PROBE.format(header=header, type=type_name), flags)[0]:
            return fmt
    return None
