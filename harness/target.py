"""The Target interface: a Builder (the runner for a configuration) plus a
Runner (that artefact on one payload).

A target is one package in harness/targets/. It says what it can do
(Capabilities), how to compile the library plus the runner into an artefact
directory (Builder), and how to execute that artefact on one payload
(Runner); how the payload gets there is its Capabilities.payload_delivery
(harness/delivery.py). Everything else (caching, decoding, comparing,
reporting) is shared and does not change when a target is added.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from harness import c_header
from harness.build_inputs import (DEFAULT_LIBRARY, RUNTIME_DIR, TARGETS_DIR, BuildConfig,  # noqa: F401 (the
                                  BuildError, LibrarySource)                     # interface's types, re-exported)
from harness.build_units import UnitReport, library_flags
from harness.child_process import die_with_parent
from harness.compilers import choose

DEFAULT_RUN_TIMEOUT = 120.0  # seconds one runner invocation may take, unless the target needs more


def exit_status(name: str) -> int:
    """PTL_EXIT_<name> of runtime/include/ptl_platform.h, the one list of the
    runtimes' exit statuses."""
    return c_header.number("ptl_platform.h", f"PTL_EXIT_{name}")


@dataclass(frozen=True)
class Capabilities:
    fp16_formats: tuple[str, ...]   # which 16-bit formats the target can build: "fp16", "bf16"
    max_cores: int
    counter_unit: str               # "ns", "instructions" or "cycles"
    payload_delivery: str           # "file", "loader", "serial" or "compiled-in"
    l1_bytes: int | None = 64 * 1024  # the cluster L1 (TCDM) a case must fit in; None: no limit
    # A cluster DMA between L2 and L1 that runs beside the cores, and cycles to
    # show it: a tiled layer's time with its transfers means something there.
    dma: bool = False


@dataclass
class RawRun:
    output: bytes                   # console bytes (stdout or UART)
    stderr: bytes = b""
    returncode: int | None = None   # None when the run was killed on timeout
    timed_out: bool = False
    deadlock: bool = False          # stopped early: every core asleep with nothing to wake it
    seconds: float = 0.0
    # Per measured region, the counter of each core (targets that count
    # outside the program, like QEMU's plugin). None when the program itself
    # reports elapsed time in its VARIANT records.
    region_counts: list[list[int]] | None = None
    # Why the target stopped a run that would not end (with timed_out), when it
    # knew better than the wall clock, e.g. QEMU's instruction budget.
    stop_reason: str = ""
    # How the case got to a target of several machines (the board farm):
    # attempts, boards, failed_attempts. The report's columns of the same names.
    delivery: dict | None = None


class Builder(ABC):
    """Half of a target: compiles the library and the runner for a
    configuration (BuildConfig) into an artefact directory, and says what
    that depends on (the build cache's key)."""

    @abstractmethod
    def build_material(self, config: BuildConfig) -> dict:
        """Everything a build depends on besides the source bytes: tool
        versions and flags. It becomes part of the build cache key."""

    @abstractmethod
    def build(self, config: BuildConfig, outdir: Path, embedded_payload: Path | None = None) -> UnitReport:
        """Compile library + runner into outdir; return which runner units
        built and why the others did not (the session saves it beside the
        artefact). With embedded_payload (a C file of
        harness.payload.payload_as_c_source) the payload is compiled in
        (harness/delivery.py); a target that cannot raises BuildError. Raise
        BuildError when nothing usable was built."""

    def source_roots(self, config: BuildConfig) -> list[Path]:
        return [RUNTIME_DIR / "include", RUNTIME_DIR / "runner", *config.library.digest_roots]

    def toolchain_fingerprint(self) -> dict[str, str]:
        """The versions of the tools this target's counts depend on
        (compilers, C library, emulator), as the perf gate's baseline records
        them; empty where nothing is known."""
        return {}

    def compiler_candidates(self, config: BuildConfig) -> list:
        """The harness.compilers.Compiler candidates of a configuration, best
        first; empty where the target has one fixed compiler."""
        return []

    def compile_argv(self, config: BuildConfig, compiler):
        """(source, object, extra flags) -> argv: how this target compiles one
        file with a candidate compiler (for its compile probes)."""
        raise NotImplementedError(f"target {self.name} lists compiler candidates but cannot compile with them")

    def fp16_route(self, fp16_format: str, choice) -> str:
        """How a 16-bit format computes in a build with this compiler choice
        (instructions, binary32 with rounding, or software); "" where the
        target does not say."""
        return ""

    def compiler_choice(self, config: BuildConfig):
        """The harness.compilers.CompilerChoice that builds this configuration,
        found once by compile probes; None where the target has one fixed
        compiler."""
        candidates = self.compiler_candidates(config)
        if not candidates:
            return None
        choices = self.__dict__.setdefault("_compiler_choices", {})
        key = (config.library, config.fp16_format, config.sanitize)
        if key not in choices:
            try:
                choices[key] = choose(candidates, lambda compiler: self.compile_argv(config, compiler),
                                      config.library,
                                      lambda arithmetic: [*arithmetic.defines(), *library_flags(config.library)])
            except FileNotFoundError as exc:
                raise BuildError(f"{exc}; run python -m harness toolchain --install") from None
        return choices[key]


class Runner(ABC):
    """The other half: runs an artefact on one payload (or on the payload
    compiled into it) and returns what came out (RawRun)."""

    @abstractmethod
    def run(self, artefact: Path, payload: bytes | None, timeout: float, workdir: Path,
            case_id: str = "") -> RawRun:
        """Execute the artefact on one payload, of the case `case_id` where
        the caller knows it (a target that stops hangs in simulated time
        sizes its budget by the case's work). payload None: the artefact
        was built with its payload compiled in."""

    def describe_crash(self, crash) -> str:
        """A CRASH record (protocol.Crash) in words: on the RISC-V targets
        a trap, its mcause, mepc and mtval."""
        return f"trap cause {crash.cause} at pc {crash.epc:#x} (tval {crash.tval:#x}) on core {crash.hart}"


class Target(Builder, Runner):
    """A Builder plus a Runner, with what the pair can do (Capabilities).
    Everything else (caching, decoding, comparing, reporting) is shared."""
    name: str
    capabilities: Capabilities
    # A target its users install themselves (GVSOC): a run asked of it where
    # it is missing stops at once with the reason, instead of failing every
    # case as a load failure.
    stop_when_unavailable: bool = False
    # The default of --run-timeout on this target.
    default_run_timeout: float = DEFAULT_RUN_TIMEOUT
    # Why `--target auto` chose this target instead of the embedded default (None: it did not).
    fallback_reason: str | None = None
    # How a forked team's cores run (harness/team_order.py): "free", the
    # target's own scheduling, unless the target takes a sequenced order
    # (host, qemu: PTL_TEAM_ORDER).
    team_order: str = "free"

    def unavailable_reason(self) -> str | None:
        """Why this target cannot run here (a missing tool, with the fix), or None."""
        return None


GROUP_GUARD = Path(__file__).with_name("group_guard.py")


def child_environment(**variables: str) -> dict[str, str]:
    """A child process's environment: this process's, with `variables` set.
    Here, not in a target: a target passes the environment on to what it
    runs, and reads none of its own options from it (harness/targets/)."""
    return {**os.environ, **variables}


def run_command(argv: list[str], timeout: float, cwd: Path | None = None,
                env: dict | None = None, tree: bool = False) -> RawRun:
    """Run argv, killing its whole process group on timeout and keeping what
    it printed until then. It dies with this process, however this one dies
    (harness/child_process.py); with tree=True, so do the processes argv
    starts (harness/group_guard.py), for a launcher that does not exec its
    program."""
    start = time.monotonic()
    if not tree:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                                   env=env, start_new_session=True, preexec_fn=die_with_parent())
        return _finish(process, timeout, start)
    guard_end, session_alive = os.pipe()   # the guard reads end-of-file when this process dies
    try:
        try:
            process = subprocess.Popen([sys.executable, "-I", "-S", str(GROUP_GUARD), str(guard_end), *argv],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
                                       start_new_session=True, pass_fds=(guard_end,))
        finally:
            os.close(guard_end)
        return _finish(process, timeout, start)
    finally:
        os.close(session_alive)


def _finish(process: subprocess.Popen, timeout: float, start: float) -> RawRun:
    try:
        out, err = process.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        timed_out = True
    except BaseException:   # Ctrl-C or a signal: the run is in its own session, so stop it here
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    return RawRun(out, err, None if timed_out else process.returncode, timed_out,
                  seconds=time.monotonic() - start)


def compile_command(argv: list[str], cwd: Path | None = None) -> None:
    """Run a compiler command; raise BuildError with its output on failure."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=600)
    except FileNotFoundError:
        raise BuildError(f"compiler not found: {argv[0]}") from None
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-40:]
        raise BuildError(f"{' '.join(argv[:1])} failed (exit {result.returncode}):\n" + "\n".join(tail))


def tool_version(argv: list[str]) -> str:
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return "missing"
    return (result.stdout or result.stderr).strip().splitlines()[0] if result.returncode == 0 else "missing"
