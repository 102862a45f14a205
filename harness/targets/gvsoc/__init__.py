"""The GVSOC target: the runner on the PULP reference simulator's pulp-open
chip (a fabric controller and an 8-core cluster), with per-core cycle counts.

Build: the library, the runner and our bare-metal runtime (targets/gvsoc/runtime/)
into runner.elf, for rv32imfc (no A extension: a PULP core has none, and an
atomic would fail to link), compiled as the QEMU target compiles
(harness/riscv_build.py): GCC 12 with picolibc for FP32 and bfloat16,
clang with Zfh for IEEE FP16, whose encodings pulp-open's Xf16 decodes.
Floating point is hard float (-mabi=ilp32f); that needs the GVSOC that
scripts/install-gvsoc.sh builds (README: "The GVSOC target"; FEATURES).

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
that is reported as a crash with GVSOC's message. A hang or a deadlock in a
measured region is stopped by the FC's watchdog after the case's cycle
budget (cycle_budget, written into each run's copy of the ELF) and is a
timeout; the wall-clock timeout stays as the last resort.

Options (constructor keywords; options_from_environment reads them from the
environment of a run): gvsoc, where GVSOC is (PTL_GVSOC; else gvsoc on
PATH), and cycle_budget, one budget for every case (PTL_GVSOC_CYCLE_BUDGET).
"""
from __future__ import annotations

import os
import re
import shutil
import struct
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from harness import c_header, toolchain
from harness.build_units import UnitReport, build_runner
from harness.elf_symbols import ElfError, data_offset, symbol_value
from harness.failures import LOAD, NOT_FIT, CaseFailure
from harness.option_values import env_number, from_env, given
from harness.delivery import COMPILED_IN, check as check_delivery, options_from_environment as delivery_options
from harness.perf_gate import BaselineError, baseline_path, read_baseline, split_id
from harness.riscv_build import COMMON_FLAGS, FP16_DEFINES, RiscvCompiling, Runtime, fp16_formats
from harness.target import (RUNTIME_DIR, BuildConfig, BuildError, Capabilities, RawRun, Target, compile_command,
                            exit_status, run_command, tool_version)

GVSOC_RUNTIME = Path(__file__).resolve().parent / "runtime"
LAYOUT_HEADER = GVSOC_RUNTIME / "ptl_gvsoc.h"
LINK_SCRIPT = GVSOC_RUNTIME / "link.ld"
START = GVSOC_RUNTIME / "start.S"
# The runtime's self-test, and what a test program links besides the runtime.
SELF_TEST = GVSOC_RUNTIME / "tests" / "test_runtime.c"
TEST_SUPPORT = [RUNTIME_DIR / "runner" / "protocol.c", RUNTIME_DIR / "runner" / "payload_window.c"]
INSTALL_SCRIPT = "scripts/install-gvsoc.sh"
ENV_VAR = "PTL_GVSOC"

# SoC cycles one measured region (one variant) may take before the FC's
# watchdog stops the run as a hang: BUDGET_PER_INSTRUCTION times the
# instructions of the case's slowest variant on QEMU (its work, from the
# committed baseline), within [BUDGET_FLOOR, CYCLE_BUDGET]; CYCLE_BUDGET for
# a case the baseline does not know. GVSOC takes 1.06 to 1.36 cycles per QEMU
# instruction on lib_c's kernels (README, "Cycles per MAC"), so 10 leaves a
# library 7 times as slow as lib_c room to finish. A spinning core simulates
# at about 20 million cycles a second here: the floor costs half a second,
# the ceiling 10 s per spinning core.
BUDGET_PER_INSTRUCTION = 10
BUDGET_FLOOR = 10_000_000
CYCLE_BUDGET = 200_000_000
ELF_NAME = "runner.elf"
CORES = 8
# No A extension: a PULP core has none, and an atomic would fail to link.
RUNTIME = Runtime("rv32imfc", "ilp32f", GVSOC_RUNTIME, START, LINK_SCRIPT)
# The launcher exits with 1 whatever the program's status, and names the
# status on stderr; a warning (GVSOC runs with --werror) stops the simulation
# with status 1, e.g. on an access to an unmapped address.
PLATFORM_EXIT = re.compile(rb"Platform returned an error \(exitcode: (-?\d+)\)")
GVSOC_WARNING_EXIT = 1
# The FC's watchdog (targets/gvsoc/runtime/watchdog.c): its one line, before it ends
# the run with PTL_EXIT_NO_PROGRESS.
WATCHDOG_LINE = re.compile(rb"ptl-gvsoc-watchdog: (.*)")
BUDGET_SYMBOL = "ptl_gvsoc_cycle_budget"
BUDGET_VAR = "PTL_GVSOC_CYCLE_BUDGET"
INVALID_ACCESS = re.compile(rb"Invalid access \(pc: (0x[0-9a-f]+), offset: (0x[0-9a-f]+)[^)]*\)")


@lru_cache(maxsize=None)
def layout() -> dict[str, int]:
    """The PTL_GVSOC_* numbers of ptl_gvsoc.h (payload address and size, ...)."""
    return {name: value for name, value in c_header.numbers(LAYOUT_HEADER).items() if name.startswith("PTL_GVSOC_")}


def runtime_sources() -> list[Path]:
    return sorted(GVSOC_RUNTIME.glob("*.c"))


def find_gvsoc(configured: str | Path | None = None, search_path: str | None = None) -> Path | None:
    """The gvsoc launcher: `configured` (the launcher, or an install prefix
    with bin/gvsoc: PTL_GVSOC), else gvsoc on search_path (None: PATH)."""
    if configured:
        path = Path(configured).expanduser()
        if path.is_dir():
            path = path / "bin" / "gvsoc"
        return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which("gvsoc", path=search_path)
    return Path(found) if found else None


def missing_gvsoc_reason(configured: str | Path | None = None) -> str:
    """Why find_gvsoc(configured) found none, and how to install one."""
    where = (f"{ENV_VAR}={configured} is neither the gvsoc launcher nor a prefix with bin/gvsoc"
             if configured else f"gvsoc is not on PATH and {ENV_VAR} is not set")
    return (f"GVSOC not found ({where}); install it with {INSTALL_SCRIPT} [PREFIX], "
            f"then export {ENV_VAR}=PREFIX")



@lru_cache(maxsize=None)
def features() -> tuple[str, ...]:
    """What the harness needs of a GVSOC beyond upstream: the FEATURES that
    scripts/install-gvsoc.sh builds and writes into PREFIX/VERSION."""
    script = (Path(__file__).resolve().parents[3] / INSTALL_SCRIPT).read_text()   # the checkout
    return tuple(re.search(r'^FEATURES="([^"]*)"$', script, re.M).group(1).split())


def missing_features_reason(launcher: Path) -> str | None:
    """Why the GVSOC of this launcher cannot serve (an older or a foreign
    build), or None."""
    prefix = launcher.resolve().parent.parent
    try:
        built = (prefix / "VERSION").read_text().split()[1:]
    except OSError:
        return (f"{launcher} has no {prefix / 'VERSION'}: the harness needs the GVSOC that {INSTALL_SCRIPT} "
                f"builds ({', '.join(features())}); run {INSTALL_SCRIPT} [PREFIX]")
    missing = [feature for feature in features() if feature not in built]
    if missing:
        return (f"the GVSOC at {prefix} was built without {', '.join(missing)}; run {INSTALL_SCRIPT} {prefix} "
                f"again (it rebuilds only what changed)")
    return None


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
                                           f"{memsz} (PTL_GVSOC_PAYLOAD_MAX in targets/gvsoc/runtime/ptl_gvsoc.h)")
            offset = (len(elf) + 15) & ~15
            size = (len(payload) + 3) & ~3
            header = _PHDR.pack(p_type, offset, vaddr, paddr, size, size, flags, align)
            image = bytearray(elf)
            image[at:at + _PHDR.size] = header
            image += bytes(offset - len(elf))
            image += payload + bytes(size - len(payload))
            return bytes(image)
    raise BuildError(f"runner.elf has no loadable segment at {address:#x} for the payload; rebuild it")


def elf_with_word(elf: bytes, symbol: str, value: int) -> bytes:
    """A copy of the ELF whose 32-bit variable `symbol` holds `value`."""
    try:
        at = data_offset(elf, symbol)
    except ElfError as exc:
        raise BuildError(f"runner.elf: {exc}; rebuild it") from None
    return elf[:at] + struct.pack("<I", value) + elf[at + 4:]


@lru_cache(maxsize=None)
def qemu_work() -> dict[str, int]:
    """Case id -> QEMU instructions of its slowest variant (reports/baseline/qemu.txt)."""
    try:
        counts = read_baseline(baseline_path("qemu"))
    except BaselineError:
        return {}
    work: dict[str, int] = {}
    for variant_id, count in counts.items():
        case_id = split_id(variant_id)[0]
        work[case_id] = max(work.get(case_id, 0), count.latency)
    return work


def cycle_budget(case_id: str) -> int:
    """The watchdog's budget for each measured region of a case."""
    work = qemu_work().get(case_id)
    if work is None:
        return CYCLE_BUDGET
    return min(CYCLE_BUDGET, max(BUDGET_FLOOR, BUDGET_PER_INSTRUCTION * work))


def read_exit(raw: RawRun) -> None:
    """Turns the launcher's exit into the program's exit status, and adds
    the harness's reading of a simulator stop to the run's stderr."""
    if raw.returncode is None:
        return
    reported = PLATFORM_EXIT.search(raw.stderr)
    if raw.returncode != 0 and reported:
        raw.returncode = int(reported.group(1))
    if raw.returncode == exit_status("NO_PROGRESS"):
        line = WATCHDOG_LINE.search(raw.output)
        said = line.group(1).decode(errors="replace") if line else "a measured region passed its cycle budget"
        raw.returncode, raw.timed_out = None, True
        raw.stop_reason = (f"no end in sight: {said} (a hang, a livelock or a deadlock; the FC's watchdog "
                           f"stopped GVSOC after {raw.seconds:.2f} s; {BUDGET_VAR} sets the budget)")
        return
    if raw.returncode != GVSOC_WARNING_EXIT:
        return
    match = INVALID_ACCESS.search(raw.output + raw.stderr)
    if match:
        pc, address = (m.decode() for m in match.groups())
        raw.stderr += (f"\nptl: GVSOC stopped the run on an access to unmapped address {address} by the "
                       f"instruction at pc {pc}\n").encode()


def options_from_environment(environ: Mapping[str, str]) -> dict:
    """GvsocTarget's keyword arguments from the environment: gvsoc from
    PTL_GVSOC, cycle_budget from PTL_GVSOC_CYCLE_BUDGET (unset or empty: the
    default). A bad budget is an OptionValueError."""
    return given({
        "gvsoc": from_env(ENV_VAR, None, lambda name, text: text, environ),
        "cycle_budget": env_number(BUDGET_VAR, None, f"a positive whole number of SoC cycles per measured region "
                                                     f"(default: by the case's work, at most {CYCLE_BUDGET})",
                                   environ, integer=True, minimum=1),
        **delivery_options(environ, DELIVERIES)})


DELIVERIES = ("loader", COMPILED_IN)    # the ELF's payload segment, or the payload compiled in (harness/delivery.py)


class GvsocTarget(RiscvCompiling, Target):
    name = "gvsoc"
    stop_when_unavailable = True
    runtime = RUNTIME
    # A cycle-level simulation of 9 cores: a 64x64x64 bfloat16 matmul case
    # (54 variants, bfloat16 in software) took 4-5 minutes on a busy 2-core machine.
    default_run_timeout = 900.0

    def __init__(self, gvsoc: str | Path | None = None, cycle_budget: int | None = None, delivery: str = "loader"):
        # The launcher or an install prefix (find_gvsoc); None: gvsoc on PATH.
        self.gvsoc = gvsoc
        self._launcher: Path | None | bool = False
        # Set, it is every case's budget; None: each case's own (the module's cycle_budget).
        self.cycle_budget = cycle_budget
        self.capabilities = Capabilities(fp16_formats=fp16_formats(), max_cores=CORES, counter_unit="cycles",
                                         payload_delivery=check_delivery(self.name, delivery, DELIVERIES),
                                         dma=True)

    # ---- what the target needs and is ------------------------------------------------

    @staticmethod
    def near_memory_bytes(artefact: Path) -> int:
        """The L1 a built runner's heap has (the linker script's __l1_heap_*):
        what ptl_near_malloc can give a tiled layer's tile buffers."""
        elf = (artefact / ELF_NAME).read_bytes()
        return symbol_value(elf, "__l1_heap_end") - symbol_value(elf, "__l1_heap_start")

    @property
    def launcher(self) -> Path | None:
        if self._launcher is False:
            self._launcher = find_gvsoc(self.gvsoc)
        return self._launcher

    def gvsoc_reason(self) -> str | None:
        """Why this target's GVSOC cannot serve (missing, or not the install
        script's build), or None."""
        if self.launcher is None:
            return missing_gvsoc_reason(self.gvsoc)
        return missing_features_reason(self.launcher)

    def unavailable_reason(self) -> str | None:
        return self.gvsoc_reason() or toolchain.check_riscv_gcc() or toolchain.check_picolibc()

    def build_material(self, config: BuildConfig) -> dict:
        return {"target": self.name, "gcc": tool_version([toolchain.RISCV_GCC, "--version"]),
                "picolibc": str(toolchain.picolibc_include()),
                "flags": [*RUNTIME.gcc_arch(), *COMMON_FLAGS, FP16_DEFINES[config.fp16_format]],
                **self.compiler_choice(config).material()}

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
        self._check_format(config.fp16_format)
        extra = ["-DPTL_EMBEDDED_PAYLOAD"] if embedded_payload else []
        core = [*runtime_sources(), *([Path(embedded_payload)] if embedded_payload else [])]
        choice = self.compiler_choice(config)
        return build_runner(RUNTIME.toolchain(config.fp16_format, extra, choice.compiler, choice.arithmetic),
                            config.library, core, outdir / ELF_NAME, outdir / "obj", config.objects)

    def build_program(self, sources: list[Path], outdir: Path, extra_flags: list[str] = (),
                      fp16_format: str = "bf16") -> Path:
        """Any program on the GVSOC runtime (a runtime test), linked with the
        record writer: outdir/runner.elf."""
        self._check_format(fp16_format)
        toolchain = RUNTIME.toolchain(fp16_format, list(extra_flags))
        objdir = outdir / "obj"
        objdir.mkdir(parents=True, exist_ok=True)
        c_sources = [*runtime_sources(), *TEST_SUPPORT, *map(Path, sources)]
        objects = [objdir / f"{i:03d}_{source.stem}.o" for i, source in enumerate(c_sources)]
        for source, obj in zip(c_sources, objects):
            compile_command(toolchain.compile(source, obj, []))
        compile_command(toolchain.link(objects, outdir / ELF_NAME))
        return outdir / ELF_NAME

    # ---- run ------------------------------------------------------------------------

    def run(self, artefact: Path, payload: bytes | None, timeout: float, workdir: Path,
            case_id: str = "") -> RawRun:
        """payload None runs an artefact built with an embedded payload."""
        if self.launcher is None:
            raise CaseFailure(LOAD, missing_gvsoc_reason(self.gvsoc))
        workdir.mkdir(parents=True, exist_ok=True)
        image = (artefact / ELF_NAME).read_bytes()
        if payload is not None:
            image = elf_with_payload(image, payload, layout()["PTL_GVSOC_PAYLOAD_ADDR"])
        elf = workdir / ELF_NAME
        elf.write_bytes(elf_with_word(image, BUDGET_SYMBOL, self.cycle_budget or cycle_budget(case_id)))
        # tree: GVSOC's launcher starts the simulator as its own child
        raw = run_command(gvsoc_argv(self.launcher, elf, shutil.which("stdbuf") is not None), timeout,
                          cwd=workdir, tree=True)
        read_exit(raw)
        return raw


TARGET_CLASS = GvsocTarget
