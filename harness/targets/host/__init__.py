"""The host target: native gcc, a pthreads team, wall-clock nanoseconds.

Fast and functional. With --sanitize it builds with ASan/UBSan or TSan to
find out-of-bounds accesses and races in the parallel kernels.

The team order (team_order, harness/team_order.py) chooses how a forked
team's cores run (harness/targets/host/runtime/team_pthreads.c, which reads
it from the runner's environment: run sets PTL_TEAM_ORDER there): "free"
(the default) runs them all at once; "forward", "reverse" and "rotate" run
them one at a time, in that order, between barriers, so a missing barrier
fails the same way on every run, however busy the machine; "random:SEED"
runs them one at a time in a permutation drawn afresh for every phase from
SEED (reproducible).

Options (constructor keywords; options_from_environment reads them from the
environment of a run): compiler (PTL_HOST_CC) and team_order
(PTL_TEAM_ORDER).
"""
from __future__ import annotations

import shutil
import signal
from collections.abc import Mapping
from pathlib import Path

from harness import toolchain as qemu_toolchain
from harness.build_units import LIBRARY_DEFINES, NUM_CORES_TEAM, Toolchain, UnitReport, build_runner
from harness.compilers import Arithmetic, Compiler
from harness import team_order as orders
from harness.option_values import from_env, given
from harness.delivery import COMPILED_IN, check as check_delivery, options_from_environment as delivery_options
from harness.target import (RUNTIME_DIR, BuildConfig, BuildError, Capabilities, RawRun, Target, child_environment,
                            exit_status, run_command, tool_version)

# The sanitizer sets, and the optimization and debug levels each builds at.
# ASan with UBSan at -O1 -g1 (line tables: what their reports print): with
# -O2 -g, GCC 12 spends 127 s on pulp_mm_tiles_fp32.c alone (its unrolled
# tiles), with -O1 -g1 27 s. What they catch does not depend on the level (a
# higher one can only drop checks, by removing code); -ffp-contract=off and
# -fno-fast-math fix the numerics at every level.
SANITIZERS = {"address,undefined": ("-O1", "-g1"), "thread": ("-O2", "-g")}
HOST_RUNTIME = Path(__file__).resolve().parent / "runtime"   # the pthreads team and the console
DEADLOCK_EXIT = exit_status("DEADLOCK")  # cores wait at a barrier the others never reach
FP16_DEFINES = {"fp16": "-DPTL_FP16_IEEE", "bf16": "-DPTL_FP16_BF16"}


def options_from_environment(environ: Mapping[str, str]) -> dict:
    """HostTarget's keyword arguments from the environment: compiler from
    PTL_HOST_CC, team_order from PTL_TEAM_ORDER (unset or empty: the
    default). A bad team order is an OptionValueError."""
    return given({"compiler": from_env("PTL_HOST_CC", None, lambda name, text: text, environ),
                  "team_order": from_env("PTL_TEAM_ORDER", None, orders.parse, environ),
                  **delivery_options(environ, DELIVERIES)})


DELIVERIES = ("file", COMPILED_IN)      # a payload file, or the payload compiled in (harness/delivery.py)


class HostTarget(Target):
    name = "host"

    def __init__(self, compiler: str = "gcc", team_order: str = "free", delivery: str = "file"):
        self.compiler = compiler
        self.team_order = team_order
        self.capabilities = Capabilities(fp16_formats=("fp16", "bf16"), max_cores=8, counter_unit="ns",
                                         payload_delivery=check_delivery(self.name, delivery, DELIVERIES))

    def source_roots(self, config: BuildConfig) -> list[Path]:
        """The host runtime (the pthreads team) is compiled in too: its
        sources are part of the build cache key, or a changed team would be
        answered by a stale runner."""
        return [*super().source_roots(config), HOST_RUNTIME]

    def compiler_candidates(self, config: BuildConfig) -> list[Compiler]:
        """Best first (harness/compilers.py picks): the host compiler, then
        clang-19 for libraries that compute in float16alt."""
        return [Compiler(self.compiler, (self.compiler,)),
                Compiler(qemu_toolchain.CLANG19, (qemu_toolchain.CLANG19,),
                         tuple(f for f in qemu_toolchain.CLANG19_FLAGS if f != "-gdwarf-4"))]

    def toolchain_fingerprint(self) -> dict[str, str]:
        return {self.compiler: qemu_toolchain.version_number(tool_version([self.compiler, "--version"]), last=True),
                qemu_toolchain.CLANG19: qemu_toolchain.version_number(
                    tool_version([qemu_toolchain.CLANG19, "--version"]))}

    def unavailable_reason(self) -> str | None:
        return orders.problem(self.team_order)

    def flags(self, config: BuildConfig) -> list[str]:
        if config.sanitize and config.sanitize not in SANITIZERS:
            raise BuildError(f"unknown sanitizer set {config.sanitize!r}; use one of {sorted(SANITIZERS)}")
        flags = ["-std=gnu11", *SANITIZERS.get(config.sanitize, ("-O2", "-g")), "-pthread", NUM_CORES_TEAM,
                 *LIBRARY_DEFINES, FP16_DEFINES[config.fp16_format], "-fno-fast-math", "-ffp-contract=off"]
        if config.sanitize:
            flags += [f"-fsanitize={config.sanitize}", "-fno-omit-frame-pointer",
                      "-fno-sanitize-recover=undefined"]
        return flags

    def build_material(self, config: BuildConfig) -> dict:
        return {"target": self.name, "cc": tool_version([self.compiler, "--version"]),
                "flags": self.flags(config), **self.compiler_choice(config).material()}

    def compile_argv(self, config: BuildConfig, compiler: Compiler):
        return self.toolchain(config, compiler).compile

    def toolchain(self, config: BuildConfig, compiler: Compiler | None = None,
                  arithmetic: Arithmetic | None = None) -> Toolchain:
        """Compiles and links with `compiler` (default: the host compiler);
        `arithmetic` is what the probes found the compiler computes in."""
        compiler = compiler or self.compiler_candidates(config)[0]
        flags = [*self.flags(config), *compiler.flags, *(arithmetic.defines() if arithmetic else [])]
        includes = [f"-I{RUNTIME_DIR / 'include'}"]
        return Toolchain(
            compile=lambda source, obj, extra: [*compiler.command, *flags, *includes, *extra, "-c", str(source),
                                                "-o", str(obj)],
            archive=lambda archive, objects: ["ar", "rcs", str(archive), *map(str, objects)],
            link=lambda objects, out: [*compiler.command, *flags, *map(str, objects), "-o", str(out), "-lm"])

    def build(self, config: BuildConfig, outdir: Path, embedded_payload: Path | None = None) -> UnitReport:
        """Runner plus library, op unit by op unit (harness/build_units.py).
        With embedded_payload (a C file from payload_as_c_source) the payload
        is compiled in, as per-case embedded flows do."""
        extra = sorted(HOST_RUNTIME.glob("*.c"))
        choice = self.compiler_choice(config)
        toolchain = self.toolchain(config, choice.compiler, choice.arithmetic)
        if embedded_payload:
            base = toolchain.compile
            toolchain = Toolchain(lambda s, o, x: base(s, o, [*x, "-DPTL_EMBEDDED_PAYLOAD"]), toolchain.archive,
                                  toolchain.link)
            extra.append(Path(embedded_payload))
        return build_runner(toolchain, config.library, extra, outdir / "runner", outdir / "obj", config.objects)

    def describe_crash(self, crash) -> str:
        """The host runner's CRASH record (platform_host.c): a signal, its
        si_code and the low 32 bits of si_addr, on a core of the team."""
        try:
            name = signal.Signals(crash.cause).name
        except ValueError:
            name = str(crash.cause)
        why = SIGNAL_CODES.get((name, crash.epc), f"si_code {crash.epc}")
        return f"signal {name} ({why}) at address ...{crash.tval:08x} (its low 32 bits) on core {crash.hart}"

    def run(self, artefact: Path, payload: bytes | None, timeout: float, workdir: Path,
            case_id: str = "") -> RawRun:
        """payload None runs an artefact built with an embedded payload."""
        argv = [str(artefact / "runner")]
        if payload is not None:
            (workdir / "payload.bin").write_bytes(payload)
            argv.append(str(workdir / "payload.bin"))
        env = child_environment(PTL_TEAM_ORDER=self.team_order)   # what team_pthreads.c reads
        for variable, options in SANITIZER_OPTIONS.items():
            env.setdefault(variable, options)
        raw = run_command(argv, timeout, cwd=workdir, env=env)
        # The team found cores waiting at a barrier that the others returned
        # without reaching: what hangs a cluster; its message is on stderr.
        raw.deadlock = raw.returncode == DEADLOCK_EXIT
        return raw


# si_code of the signals the host runner catches (Linux, <bits/siginfo-consts.h>):
# what describe_crash says beside the signal's name.
SIGNAL_CODES = {
    ("SIGFPE", 1): "integer division by zero", ("SIGFPE", 2): "integer overflow",
    ("SIGFPE", 3): "floating-point division by zero", ("SIGFPE", 4): "floating-point overflow",
    ("SIGFPE", 5): "floating-point underflow", ("SIGFPE", 6): "floating-point inexact result",
    ("SIGFPE", 7): "invalid floating-point operation",
    ("SIGSEGV", 1): "address not mapped", ("SIGSEGV", 2): "no permission for the access",
    ("SIGSEGV", 128): "general protection fault, e.g. a non-canonical address",  # SI_KERNEL
    ("SIGBUS", 1): "misaligned address", ("SIGBUS", 2): "nonexistent physical address",
    ("SIGILL", 1): "illegal opcode", ("SIGILL", 2): "illegal operand",
}

# Sanitizer reports must end the run with a recognisable status, and name
# file:line in their frames. clang-19's runtimes (the published library's
# bf16 builds) look for an llvm-symbolizer of their own version, which Debian
# puts in llvm-19, and otherwise print bare addresses; any version reads
# their frames, so each is told where one is (debian-packages.txt: llvm).
_SYMBOLIZER = shutil.which("llvm-symbolizer")
_SYMBOLIZE = f":external_symbolizer_path={_SYMBOLIZER}" if _SYMBOLIZER else ""
SANITIZER_OPTIONS = {
    "ASAN_OPTIONS": "abort_on_error=0:exitcode=66:detect_leaks=0" + _SYMBOLIZE,
    "TSAN_OPTIONS": "exitcode=66:halt_on_error=1" + _SYMBOLIZE,
    "UBSAN_OPTIONS": "print_stacktrace=1:exitcode=66" + _SYMBOLIZE,
}

TARGET_CLASS = HostTarget
