"""The GVSOC target: the runner on the PULP reference simulator's pulp-open
chip (a fabric controller and an 8-core cluster), with per-core cycle counts.

Build: the library, the runner and our bare-metal runtime (runtime/gvsoc/)
into runner.elf, with riscv64-unknown-elf-gcc and picolibc for rv32imfc
(no A extension: a PULP core has none, and an atomic would fail to link).
Floating point is hard float (-mabi=ilp32f); that needs the GVSOC that
scripts/install-gvsoc.sh builds, whose cores have a separate FP register
file (README: "The GVSOC target").

Run: `gvsoc --target=pulp-open --binary runner.elf run`, in its own scratch
directory (GVSOC writes its config and logs into the current one). The
payload reaches the program through GVSOC's ELF loader: runner.elf has an
empty loadable segment at PTL_GVSOC_PAYLOAD_ADDR, and each run loads a copy
of the ELF whose segment holds that run's payload (payload_delivery
"loader"; nothing is recompiled per case).

Counters: the program reads every core's PULP performance counters around
each measured region and sends them in a COUNTS record: cycles (the unit)
and instructions, per core. The session takes latency = max over cores and
work = the sum, as on QEMU.

Failures: a trap is a CRASH record and exit status 12, as on QEMU. GVSOC
stops on an access to an unmapped address with a warning and exit status 1;
that is reported as a crash with GVSOC's message. A hang runs into the
timeout and is killed.
"""
from __future__ import annotations

import os
import re
import shutil
import struct
from functools import lru_cache
from pathlib import Path

from harness import toolchain
from harness.build_units import Toolchain, UnitReport, build_runner
from harness.failures import LOAD, NOT_FIT, CaseFailure
from harness.target import (RUNTIME_DIR, BuildConfig, BuildError, Capabilities, RawRun, Target, compile_command,
                            run_command, tool_version)

GVSOC_RUNTIME = RUNTIME_DIR / "gvsoc"
LAYOUT_HEADER = GVSOC_RUNTIME / "ptl_gvsoc.h"
LINK_SCRIPT = GVSOC_RUNTIME / "link.ld"
START = GVSOC_RUNTIME / "start.S"
# The runtime's self-test, and what a test program links besides the runtime.
SELF_TEST = GVSOC_RUNTIME / "tests" / "test_runtime.c"
TEST_SUPPORT = [RUNTIME_DIR / "runner" / "protocol.c"]
INSTALL_SCRIPT = "scripts/install-gvsoc.sh"
ENV_VAR = "PTL_GVSOC"

ELF_NAME = "runner.elf"
CORES = 8
MARCH, MABI = "rv32imfc", "ilp32f"
COMMON_FLAGS = ["-std=gnu11", "-O2", "-g", "-DNUM_CORES=ptl_num_cores", "-DOPTIMIZE",
                "-ffunction-sections", "-fdata-sections", "-fno-fast-math", "-DPTL_FP16_BF16"]
ARCH_FLAGS = [f"-march={MARCH}", f"-mabi={MABI}"]
# The launcher exits with 1 whatever the program's status, and names the
# status on stderr; a warning (GVSOC runs with --werror) stops the simulation
# with status 1, e.g. on an access to an unmapped address.
PLATFORM_EXIT = re.compile(rb"Platform returned an error \(exitcode: (-?\d+)\)")
GVSOC_WARNING_EXIT = 1
INVALID_ACCESS = re.compile(rb"Invalid access \(pc: (0x[0-9a-f]+), offset: (0x[0-9a-f]+)[^)]*\)")


@lru_cache(maxsize=None)
def layout() -> dict[str, int]:
    """The PTL_GVSOC_* numbers of ptl_gvsoc.h (payload address and size, ...)."""
    values = {}
    for match in re.finditer(r"^#define (PTL_GVSOC_\w+) (0x[0-9a-fA-F]+|\d+)\s*$",
                             LAYOUT_HEADER.read_text(), re.MULTILINE):
        values[match.group(1)] = int(match.group(2), 0)
    return values


def runtime_sources() -> list[Path]:
    return sorted(GVSOC_RUNTIME.glob("*.c"))


def find_gvsoc(environ: dict | None = None) -> Path | None:
    """The gvsoc launcher: $PTL_GVSOC (the launcher, or an install prefix
    with bin/gvsoc), else gvsoc on PATH."""
    environ = os.environ if environ is None else environ
    configured = environ.get(ENV_VAR)
    if configured:
        path = Path(configured).expanduser()
        if path.is_dir():
            path = path / "bin" / "gvsoc"
        return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which("gvsoc", path=environ.get("PATH"))
    return Path(found) if found else None


def missing_gvsoc_reason(environ: dict | None = None) -> str:
    environ = os.environ if environ is None else environ
    configured = environ.get(ENV_VAR)
    where = (f"{ENV_VAR}={configured} is neither the gvsoc launcher nor a prefix with bin/gvsoc"
             if configured else f"gvsoc is not on PATH and {ENV_VAR} is not set")
    return (f"GVSOC not found ({where}); install it with {INSTALL_SCRIPT} [PREFIX], "
            f"then export {ENV_VAR}=PREFIX")


def gvsoc_argv(launcher: Path, elf: Path, line_buffered: bool = True) -> list[str]:
    """The simulator's command line. GVSOC writes the console with C stdio,
    block-buffered into a pipe: stdbuf makes it line-buffered, so a run
    killed on timeout still shows what it printed."""
    argv = [str(launcher), "--target=pulp-open", f"--binary={elf}", "run"]
    return ["stdbuf", "-oL", *argv] if line_buffered else argv


# ---- the payload segment ------------------------------------------------------------

_EHDR = struct.Struct("<16sHHIIIIIHHHHHH")
_PHDR = struct.Struct("<IIIIIIII")
PT_LOAD = 1


def elf_with_payload(elf: bytes, payload: bytes, address: int) -> bytes:
    """A copy of a 32-bit little-endian ELF whose loadable segment at
    `address` (empty in the artefact) holds `payload`, appended to the file."""
    ident, _, _, _, _, phoff, _, _, _, phentsize, phnum, _, _, _ = _EHDR.unpack_from(elf)
    if ident[:4] != b"\x7fELF" or ident[4] != 1 or ident[5] != 1:
        raise BuildError("runner.elf is not a 32-bit little-endian ELF")
    for index in range(phnum):
        at = phoff + index * phentsize
        p_type, _, vaddr, paddr, _, memsz, flags, align = _PHDR.unpack_from(elf, at)
        if p_type == PT_LOAD and paddr == address:
            if len(payload) > memsz:
                raise CaseFailure(NOT_FIT, f"the payload has {len(payload)} bytes; the GVSOC target loads at most "
                                           f"{memsz} (PTL_GVSOC_PAYLOAD_MAX in runtime/gvsoc/ptl_gvsoc.h)")
            offset = (len(elf) + 15) & ~15
            size = (len(payload) + 3) & ~3
            header = _PHDR.pack(p_type, offset, vaddr, paddr, size, size, flags, align)
            image = bytearray(elf)
            image[at:at + _PHDR.size] = header
            image += bytes(offset - len(elf))
            image += payload + bytes(size - len(payload))
            return bytes(image)
    raise BuildError(f"runner.elf has no loadable segment at {address:#x} for the payload; rebuild it")


def read_exit(raw: RawRun) -> None:
    """Turns the launcher's exit into the program's exit status, and adds
    the harness's reading of a simulator stop to the run's stderr."""
    if raw.returncode is None:
        return
    reported = PLATFORM_EXIT.search(raw.stderr)
    if raw.returncode != 0 and reported:
        raw.returncode = int(reported.group(1))
    if raw.returncode != GVSOC_WARNING_EXIT:
        return
    match = INVALID_ACCESS.search(raw.output + raw.stderr)
    if match:
        pc, address = (m.decode() for m in match.groups())
        raw.stderr += (f"\nptl: GVSOC stopped the run on an access to unmapped address {address} by the "
                       f"instruction at pc {pc}\n").encode()


class GvsocTarget(Target):
    name = "gvsoc"
    capabilities = Capabilities(fp16_formats=("bf16",), max_cores=CORES, counter_unit="cycles",
                                payload_delivery="loader")
    stop_when_unavailable = True
    # A cycle-level simulation of 9 cores: a 64x64x64 bfloat16 matmul case
    # (54 variants, bfloat16 in software) took 4-5 minutes on a busy 2-core machine.
    default_run_timeout = 900.0

    def __init__(self):
        self._launcher: Path | None | bool = False

    # ---- what the target needs and is ------------------------------------------------

    @property
    def launcher(self) -> Path | None:
        if self._launcher is False:
            self._launcher = find_gvsoc()
        return self._launcher

    def unavailable_reason(self) -> str | None:
        if self.launcher is None:
            return missing_gvsoc_reason()
        return toolchain.check_riscv_gcc() or toolchain.check_picolibc()

    def cflags(self) -> list[str]:
        return [*ARCH_FLAGS, *COMMON_FLAGS]

    def build_material(self, config: BuildConfig) -> dict:
        return {"target": self.name, "gcc": tool_version([toolchain.RISCV_GCC, "--version"]),
                "picolibc": str(toolchain.picolibc_include()), "flags": self.cflags()}

    def source_roots(self, config: BuildConfig) -> list[Path]:
        return [*super().source_roots(config), *runtime_sources(), START, LINK_SCRIPT, LAYOUT_HEADER,
                GVSOC_RUNTIME / "ptl_gvsoc_hw.h"]

    # ---- build ----------------------------------------------------------------------

    def build(self, config: BuildConfig, outdir: Path, embedded_payload: Path | None = None) -> UnitReport:
        """The runner and the library, op unit by op unit (harness/build_units.py).
        With embedded_payload (a C file from payload_as_c_source) the payload
        is compiled in; one in the payload segment still wins."""
        if config.sanitize:
            raise BuildError("sanitizers exist on the host target only; drop --sanitize or use --target host")
        if config.fp16_format not in self.capabilities.fp16_formats:
            raise BuildError(f"the GVSOC target builds {', '.join(self.capabilities.fp16_formats)} only, "
                             f"not {config.fp16_format}: GCC 12 has no _Float16 for RISC-V")
        extra = ["-DPTL_EMBEDDED_PAYLOAD"] if embedded_payload else []
        core = [*runtime_sources(), *([Path(embedded_payload)] if embedded_payload else [])]
        return build_runner(self.toolchain(extra), config.library, core, outdir / ELF_NAME, outdir / "obj",
                            config.objects)

    def build_program(self, sources: list[Path], outdir: Path, extra_flags: list[str] = ()) -> Path:
        """Any program on the GVSOC runtime (a runtime test), linked with the
        record writer: outdir/runner.elf."""
        toolchain = self.toolchain(list(extra_flags))
        objdir = outdir / "obj"
        objdir.mkdir(parents=True, exist_ok=True)
        c_sources = [*runtime_sources(), *TEST_SUPPORT, *map(Path, sources)]
        objects = [objdir / f"{i:03d}_{source.stem}.o" for i, source in enumerate(c_sources)]
        for source, obj in zip(c_sources, objects):
            compile_command(toolchain.compile(source, obj, []))
        compile_command(toolchain.link(objects, outdir / ELF_NAME))
        return outdir / ELF_NAME

    def toolchain(self, extra_flags: list[str] = ()) -> Toolchain:
        flags = [*self.cflags(), *extra_flags, f"-I{GVSOC_RUNTIME}", f"-I{RUNTIME_DIR / 'include'}"]
        compiler = [toolchain.RISCV_GCC, "--specs=picolibc.specs", *flags]
        link = [toolchain.RISCV_GCC, *ARCH_FLAGS, "--specs=picolibc.specs", "-nostartfiles",
                "-T", str(LINK_SCRIPT), f"-I{GVSOC_RUNTIME}", str(START)]
        return Toolchain(
            compile=lambda source, obj, extra: [*compiler, *extra, "-c", str(source), "-o", str(obj)],
            archive=lambda archive, objects: [toolchain.RISCV_AR, "rcs", str(archive), *map(str, objects)],
            link=lambda objects, out: [*link, *map(str, objects), "-o", str(out), "-lm"])

    # ---- run ------------------------------------------------------------------------

    def run(self, artefact: Path, payload: bytes | None, timeout: float, workdir: Path) -> RawRun:
        """payload None runs an artefact built with an embedded payload."""
        if self.launcher is None:
            raise CaseFailure(LOAD, missing_gvsoc_reason())
        workdir.mkdir(parents=True, exist_ok=True)
        elf = artefact / ELF_NAME
        if payload is not None:
            elf = workdir / ELF_NAME
            elf.write_bytes(elf_with_payload((artefact / ELF_NAME).read_bytes(), payload,
                                             layout()["PTL_GVSOC_PAYLOAD_ADDR"]))
        raw = run_command(gvsoc_argv(self.launcher, elf, shutil.which("stdbuf") is not None), timeout,
                          cwd=workdir)
        read_exit(raw)
        return raw


TARGET_CLASS = GvsocTarget
