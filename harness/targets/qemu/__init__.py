"""The QEMU target: real rv32imafc(+zfh) binaries on an emulated 8-hart
cluster, with exact, deterministic per-hart instruction counts.

Build: the library, the runner and the bare-metal runtime
(targets/qemu/runtime/) are compiled once per configuration into runner.elf, against
picolibc, and linked by riscv64-unknown-elf-gcc. The compiler is chosen per
library by compile probes (harness/compilers.py): GCC 12 for FP32 and
bfloat16 builds, clang for IEEE fp16 (rv32imafc_zfh), and clang-19 where the
library's headers need arithmetic float16alt (bfloat16) that GCC 12 and
clang 14 lack. The counting plugin (targets/qemu/runtime/plugin/) is compiled next
to it with the host compiler.

Run: qemu-system-riscv32 -machine virt with 8 harts under
-icount shift=0,sleep=off; QEMU's generic loader places the payload at
PTL_QEMU_PAYLOAD_ADDR; the plugin writes one line of per-hart counts per
measured region, which become RawRun.region_counts. The unit is
instructions, not cycles. The console is semihosting (about 50x faster than
the UART) unless console="uart" asks for the UART, the path a serial
console on a pty or socket takes.

A deadlock (every hart asleep in wfi, nothing left to wake them) is seen
from QEMU's own warning and killed at once instead of after the timeout. A
hang in which a hart spins (a livelock, a loop that never ends) never
sleeps: the plugin ends it when one measured region passes its instruction
budget (insn_budget, default INSN_BUDGET), at the same instruction on
every run and whatever the machine's load, instead of after the wall-clock
--run-timeout, which stays as the last resort.

The harts of a team run in the machine's own order unless team_order
(harness/team_order.py) names a sequenced one: then the order is compiled
into the runtime (team_harts.c), one build per order, so that the default
build's code and counts stay as they are. The performance gate compares
the machine's own order only.

Options (constructor keywords; options_from_environment reads them from the
environment of a run): console (PTL_QEMU_CONSOLE), insn_budget
(PTL_QEMU_INSN_BUDGET) and team_order (PTL_TEAM_ORDER).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from harness import c_header, toolchain
from harness import team_order as orders
from harness.build_units import Toolchain, UnitReport, build_runner, parallel
from harness.child_process import die_with_parent
from harness.compilers import Arithmetic, Compiler
from harness.failures import NOT_FIT, CaseFailure
from harness.option_values import choice, env_number, from_env, given
from harness.delivery import COMPILED_IN, check as check_delivery, options_from_environment as delivery_options
from harness.protocol import TransportError, decode_records
from harness.riscv_build import COMMON_FLAGS, FP16_DEFINES, RiscvCompiling, Runtime, fp16_formats
from harness.target import (RUNTIME_DIR, BuildConfig, BuildError, Capabilities, RawRun, Target,
                            compile_command, tool_version)

QEMU_RUNTIME = Path(__file__).resolve().parent / "runtime"
LAYOUT_HEADER = QEMU_RUNTIME / "ptl_qemu.h"
LINK_SCRIPT = QEMU_RUNTIME / "link.ld"
PLUGIN_SOURCE = QEMU_RUNTIME / "plugin" / "ptl_insn_count.c"
# The runtime's self-test, and what any such test program links besides the runtime.
SELF_TEST = QEMU_RUNTIME / "tests" / "test_team.c"
TEST_SUPPORT = [RUNTIME_DIR / "runner" / "protocol.c", RUNTIME_DIR / "runner" / "payload_window.c"]

ELF_NAME = "runner.elf"
COUNTS_NAME = "counts.txt"   # the plugin's output, in a run's workdir
PLUGIN_NAME = "libptl_insn_count.so"
MANIFEST_NAME = "qemu.json"

HARTS = 8
RUNTIME = Runtime(toolchain.MARCH, toolchain.MABI, QEMU_RUNTIME, QEMU_RUNTIME / "start.S", LINK_SCRIPT)
DEADLOCK_WARNING = b"icount sleep disabled and no active timers"
# What the plugin writes on QEMU's log when a region passes its budget
# (PTL_BUDGET_MESSAGE in targets/qemu/runtime/plugin/ptl_insn_count.c).
BUDGET_MESSAGE = b"ptl_insn_count: instruction budget exceeded"
# Instructions, over all harts, that one measured region (one variant) may
# take. lib_c's largest variant takes 3.0e7 (conv2d fp16 IG, 16x16x16 ->
# 32, 3x3, direct, 8 harts; reports/baseline/qemu.txt): 1e9 leaves a
# library 33 times as slow room to finish, and stops a hang after a few
# seconds of QEMU instead of the 120 s --run-timeout.
INSN_BUDGET = 1_000_000_000
TERM_GRACE_S = 2.0


@lru_cache(maxsize=None)
def layout() -> dict[str, int]:
    """The PTL_QEMU_* numbers of ptl_qemu.h (payload address and size, ...)."""
    return {name: value for name, value in c_header.numbers(LAYOUT_HEADER).items() if name.startswith("PTL_QEMU_")}


def runtime_sources() -> list[Path]:
    """What every build on this runtime compiles; its payload delivery
    (loader_sources, or the board's) comes on top."""
    return [QEMU_RUNTIME / "start.S", *sorted(QEMU_RUNTIME.glob("*.c"))]


def loader_sources() -> list[Path]:
    """This target's payload delivery: the loader's payload, the semihosting
    or UART console, exit and marker regions (runtime/loader/)."""
    return sorted((QEMU_RUNTIME / "loader").glob("*.c"))


def parse_region_counts(text: str) -> list[list[int]]:
    """Closed regions of the plugin's output, in order, one count per hart."""
    regions = []
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "region":
            if int(fields[1]) != len(regions):
                raise ValueError(f"plugin output skips from region {len(regions)} to {fields[1]}")
            regions.append([int(x) for x in fields[2:2 + HARTS]])
    return regions


def symbol_ranges(elf: Path) -> str:
    """The counting plugin's profile= file for an ELF: one line per function
    with a size, "<start> <end> <name>" in hex, by address."""
    listing = subprocess.run([toolchain.RISCV_NM, "--defined-only", "-S", "-n", str(elf)],
                             capture_output=True, text=True, check=True).stdout
    lines, covered = [], 0
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in ("t", "T"):
            start, size = int(fields[0], 16), int(fields[1], 16)
            if size and start >= covered:   # aliases of one address: the first name
                lines.append(f"{start:x} {start + size:x} {fields[3]}")
                covered = start + size
    return "".join(line + "\n" for line in lines)


def parse_profile(text: str) -> dict[int, dict[str, int]]:
    """The plugin's profile lines: region -> function -> instructions (all harts)."""
    profile: dict[int, dict[str, int]] = {}
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "profile":
            profile.setdefault(int(fields[1]), {})[fields[2]] = int(fields[3])
    return profile


def cpu_option(fp16_format: str) -> str:
    """QEMU's -cpu for a build: IEEE fp16 builds need Zfh."""
    return "rv32,d=false" + (",Zfh=true" if fp16_format == "fp16" else "")


def _qemu_path(path: Path) -> str:
    return str(path).replace(",", ",,")  # QEMU option syntax doubles commas


CONSOLES = ("semihost", "uart")
DELIVERIES = ("loader", COMPILED_IN)    # QEMU's loader, or the payload compiled in (harness/delivery.py)


def options_from_environment(environ: Mapping[str, str]) -> dict:
    """QemuTarget's keyword arguments from the environment: console from
    PTL_QEMU_CONSOLE, insn_budget from PTL_QEMU_INSN_BUDGET, team_order from
    PTL_TEAM_ORDER (unset or empty: the default). A bad value is an
    OptionValueError."""
    return given({
        "console": from_env("PTL_QEMU_CONSOLE", None, lambda name, text: choice(name, text, CONSOLES), environ),
        "insn_budget": env_number("PTL_QEMU_INSN_BUDGET", None, f"a positive whole number of instructions per "
                                                                f"measured region (default {INSN_BUDGET})",
                                  environ, integer=True, minimum=1),
        "team_order": from_env("PTL_TEAM_ORDER", None, orders.parse, environ),
        **delivery_options(environ, DELIVERIES)})


class QemuTarget(RiscvCompiling, Target):
    name = "qemu"
    runtime = RUNTIME

    def __init__(self, console: str = "semihost", insn_budget: int = INSN_BUDGET, delivery: str = "loader",
                 team_order: str = "free"):
        if console not in CONSOLES:
            raise ValueError(f"QEMU console must be one of {', '.join(CONSOLES)}, not {console!r}")
        if why := orders.problem(team_order):
            raise ValueError(why)
        self.console = console
        self.team_order = team_order
        self.capabilities = Capabilities(fp16_formats=fp16_formats(), max_cores=HARTS,
                                         counter_unit="instructions",
                                         payload_delivery=check_delivery(self.name, delivery, DELIVERIES))
        self._unavailable: str | None | bool = False
        self.insn_budget = insn_budget

    # ---- what the target needs and is ------------------------------------------------

    def unavailable_reason(self) -> str | None:
        if self._unavailable is False:
            self._unavailable = toolchain.unavailable_reason()
        return self._unavailable

    def build_material(self, config: BuildConfig) -> dict:
        return {"target": self.name, "gcc": tool_version([toolchain.RISCV_GCC, "--version"]),
                "picolibc": str(toolchain.picolibc_include()),
                "host_cc": tool_version([toolchain.HOST_CC, "--version"]),
                "qemu": tool_version([toolchain.QEMU, "--version"]),
                "flags": [*COMMON_FLAGS, FP16_DEFINES[config.fp16_format], *orders.defines(self.team_order)],
                **self.compiler_choice(config).material()}

    def toolchain_fingerprint(self) -> dict[str, str]:
        return dict(toolchain.fingerprint())

    def source_roots(self, config: BuildConfig) -> list[Path]:
        return [*super().source_roots(config), *runtime_sources(), *loader_sources(), LINK_SCRIPT, LAYOUT_HEADER,
                QEMU_RUNTIME / "ptl_qemu_hw.h", PLUGIN_SOURCE]

    # ---- build ----------------------------------------------------------------------

    def build(self, config: BuildConfig, outdir: Path, embedded_payload: Path | None = None) -> UnitReport:
        """The runner and the library, op unit by op unit (harness/build_units.py).
        With embedded_payload (a C file from payload_as_c_source) the payload
        is compiled in; one placed by the loader still wins."""
        if embedded_payload:
            return self.build_firmware(config, outdir, [*loader_sources(), Path(embedded_payload)],
                                       ["-DPTL_EMBEDDED_PAYLOAD"])
        return self.build_firmware(config, outdir, loader_sources())

    def build_firmware(self, config: BuildConfig, outdir: Path, delivery: list[Path],
                       extra_flags: list[str] = ()) -> UnitReport:
        """runner.elf on this runtime with a payload delivery's sources and
        flags (this target's loader, with a compiled-in payload or not; the
        board target's serial link), the counting plugin and the manifest
        beside it."""
        if config.sanitize:
            raise BuildError("sanitizers exist on the host target only; drop --sanitize or use --target host")
        self._check_format(config.fp16_format)
        core = [p for p in runtime_sources() if p.suffix == ".c"] + list(delivery)
        choice = self.compiler_choice(config)
        flags = [*extra_flags, *orders.defines(self.team_order)]
        report = build_runner(self.toolchain(config.fp16_format, flags, choice.compiler, choice.arithmetic),
                              config.library, core,
                              outdir / ELF_NAME, outdir / "obj", config.objects)
        self._finish(config.fp16_format, outdir)
        return report

    def build_program(self, sources: list[Path], fp16_format: str, outdir: Path,
                      include_dirs: list[Path] = (), extra_flags: list[str] = ()) -> None:
        """Any program on the QEMU runtime, every file required (a runtime
        test): outdir gets runner.elf, the counting plugin and a manifest."""
        self._check_format(fp16_format)
        toolchain = self.toolchain(fp16_format, [*extra_flags, *(f"-I{d}" for d in include_dirs)])
        objdir = outdir / "obj"
        objdir.mkdir(parents=True, exist_ok=True)
        c_sources = [*(p for p in runtime_sources() if p.suffix == ".c"), *loader_sources(), *map(Path, sources)]
        objects = [objdir / f"{i:03d}_{source.stem}.o" for i, source in enumerate(c_sources)]
        parallel(lambda job: compile_command(toolchain.compile(*job, [])), list(zip(c_sources, objects)))
        compile_command(toolchain.link(objects, outdir / ELF_NAME))
        self._finish(fp16_format, outdir)

    def toolchain(self, fp16_format: str, extra_flags: list[str] = (), compiler: Compiler | None = None,
                  arithmetic: Arithmetic | None = None) -> Toolchain:
        return RUNTIME.toolchain(fp16_format, extra_flags, compiler, arithmetic)

    def _finish(self, fp16_format: str, outdir: Path) -> None:
        """The counting plugin and the manifest next to the ELF."""
        compile_command([toolchain.HOST_CC, "-shared", "-fPIC", "-O2", "-o", str(outdir / PLUGIN_NAME),
                         str(PLUGIN_SOURCE)])
        (outdir / MANIFEST_NAME).write_text(json.dumps({"cpu": cpu_option(fp16_format), "fp16_format": fp16_format}))

    # ---- run ------------------------------------------------------------------------

    def run(self, artefact: Path, payload: bytes | None, timeout: float, workdir: Path,
            case_id: str = "") -> RawRun:
        """payload None runs an artefact built with an embedded payload."""
        return self.execute(artefact, payload, timeout, workdir)

    def qemu_argv(self, artefact: Path, payload_path: Path | None, counts_path: Path,
                  profile: Path | None = None) -> list[str]:
        manifest = json.loads((artefact / MANIFEST_NAME).read_text())
        argv = [toolchain.QEMU, "-machine", "virt", "-bios", "none", "-nodefaults",
                "-display", "none", "-monitor", "none", "-m", "128M", "-smp", str(HARTS),
                "-cpu", manifest["cpu"], "-icount", "shift=0,sleep=off",
                # Console on stdout without touching stdin or the terminal.
                "-chardev", "file,id=con0,path=/dev/stdout", "-serial", "chardev:con0",
                "-kernel", _qemu_path(artefact / ELF_NAME),
                "-plugin", f"{_qemu_path(artefact / PLUGIN_NAME)},out={_qemu_path(counts_path)},"
                           f"budget={self.insn_budget}"
                           + (f",profile={_qemu_path(profile)}" if profile is not None else "")]
        if payload_path is not None:
            argv += ["-device", f"loader,file={_qemu_path(payload_path)},"
                                f"addr={layout()['PTL_QEMU_PAYLOAD_ADDR']:#x},force-raw=on"]
        if self.console == "semihost":
            argv += ["-semihosting-config", "enable=on,target=native"]
        return argv

    def execute(self, artefact: Path, payload: bytes | None, timeout: float, workdir: Path,
                profile: Path | None = None) -> RawRun:
        """profile: a profile= file (symbol_ranges); the counts file in workdir
        then also holds each region's instructions by function (parse_profile)."""
        workdir.mkdir(parents=True, exist_ok=True)
        payload_path = None
        if payload is not None:
            limit = layout()["PTL_QEMU_PAYLOAD_MAX"]
            if len(payload) > limit:
                raise CaseFailure(NOT_FIT, f"the payload has {len(payload)} bytes; the QEMU target loads at "
                                           f"most {limit} (PTL_QEMU_PAYLOAD_MAX in targets/qemu/runtime/ptl_qemu.h)")
            payload_path = workdir / "payload.bin"
            payload_path.write_bytes(payload)
        counts_path = workdir / COUNTS_NAME
        counts_path.unlink(missing_ok=True)
        raw = _run_qemu(self.qemu_argv(artefact, payload_path, counts_path, profile), timeout, workdir)
        if counts_path.exists():
            try:
                raw.region_counts = parse_region_counts(counts_path.read_text())
            except ValueError as exc:
                raw.stderr += f"\nptl: unreadable plugin output: {exc}\n".encode()
        return raw


def _run_qemu(argv: list[str], timeout: float, cwd: Path) -> RawRun:
    """Runs QEMU with a deadline. A deadlock ends it at once: QEMU warns when
    every hart sleeps and no timer can wake one, which (no timers, no input)
    is final. SIGTERM first, so the plugin still writes the counts it has."""
    start = time.monotonic()
    # Its own session (a timeout kills the group), and SIGKILL when this
    # process dies, however it dies (harness/child_process.py).
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=cwd, start_new_session=True,
                               preexec_fn=die_with_parent())
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}
    deadlock = threading.Event()
    budget_line: list[str] = []

    def pump(stream, key: str) -> None:
        seen = b""
        for chunk in iter(lambda: stream.read1(65536), b""):
            chunks[key].append(chunk)
            if key == "err":
                seen = (seen + chunk)[-4096:]
                if DEADLOCK_WARNING in seen:
                    deadlock.set()
                if BUDGET_MESSAGE in seen:
                    budget_line.append(seen[seen.index(BUDGET_MESSAGE):].split(b"\n")[0].decode(errors="replace"))
        stream.close()

    readers = [threading.Thread(target=pump, args=(process.stdout, "out"), daemon=True),
               threading.Thread(target=pump, args=(process.stderr, "err"), daemon=True)]
    for reader in readers:
        reader.start()

    ended_by = None
    deadline = start + timeout
    try:
        while process.poll() is None:
            if deadlock.is_set():
                ended_by = "deadlock"
                break
            if time.monotonic() >= deadline:
                ended_by = "timeout"
                break
            deadlock.wait(0.02)
    except BaseException:   # Ctrl-C or a signal: QEMU is in its own session, so stop it here
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    if ended_by:
        _stop(process)
    for reader in readers:
        reader.join(timeout=5)
    stderr = b"".join(chunks["err"])
    stop_reason = ""
    if not ended_by and budget_line:
        ended_by = "budget"
        stop_reason = (f"no end in sight: {budget_line[0].removeprefix('ptl_insn_count: ')} (a hang or a "
                       f"livelock; QEMU stopped after {time.monotonic() - start:.2f} s; "
                       f"PTL_QEMU_INSN_BUDGET sets the budget)")
    if ended_by == "deadlock":
        stderr += (f"\nptl: deadlock after {time.monotonic() - start:.2f} s: every hart is asleep and "
                   f"nothing can wake one (a barrier or join that never completes); run killed\n").encode()
    return RawRun(b"".join(chunks["out"]), stderr, None if ended_by else process.returncode,
                  ended_by is not None, ended_by == "deadlock", time.monotonic() - start, stop_reason=stop_reason)


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


TARGET_CLASS = QemuTarget


def smoke_test() -> str | None:
    """Builds the runtime self-test and runs it on 8 harts with the plugin,
    with the target's default options (it checks the toolchain, not a run's
    options). Returns None when it passed, else what failed."""
    target = QemuTarget()
    with tempfile.TemporaryDirectory(prefix="ptl-toolchain-") as tmp:
        outdir = Path(tmp)
        try:
            target.build_program([SELF_TEST, *TEST_SUPPORT], "bf16", outdir)
        except Exception as exc:  # BuildError or a missing tool
            return f"building the self-test failed: {exc}"
        raw = target.execute(outdir, payload=None, timeout=60, workdir=outdir)
        if raw.timed_out or raw.returncode != 0:
            return (f"the self-test did not pass (exit {raw.returncode}, timed out: {raw.timed_out}):\n"
                    + raw.output.decode(errors="replace")[-800:] + raw.stderr.decode(errors="replace")[-800:])
        try:
            run = decode_records(raw.output)
        except TransportError as exc:
            return f"the self-test's records are damaged: {exc}"
        failed = [v.index for v in run.variants if v.status != 0]
        if not run.complete or failed:
            return f"the self-test's checks failed: {failed or 'no END record'}"
        if not raw.region_counts:
            return "the counting plugin wrote no region counts"
        total = sum(map(sum, raw.region_counts))
        print(f"  smoke test: 8 harts, {len(raw.region_counts)} measured regions, "
              f"{total / 1e6:.1f} M instructions in regions, {raw.seconds:.2f} s")
    return None
