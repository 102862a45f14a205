"""The toolchain of the QEMU target: what it needs, whether it is here, and
how to get it.

    python -m harness toolchain            check, and print the install command
    python -m harness toolchain --install  also install what is missing (as root)
    python -m harness.toolchain --packages the Debian packages, one line (needs no venv: CI's apt cache)

Everything comes from Debian packages (bookworm or later), listed once in
harness/debian-packages.txt ([toolchain] below; --packages prints the whole
file, the machine's packages too):

    gcc-riscv64-unknown-elf        GCC 12 for rv32imafc/ilp32f (FP32 and bfloat16 builds)
    picolibc-riscv64-unknown-elf   the C library, with an rv32imafc/ilp32f multilib
    qemu-system-misc               qemu-system-riscv32 (7.x: virt machine, Zfh, TCG plugins)
    clang                          clang 14 with Zfh, for IEEE binary16 builds of lib_c
    clang-19                       arithmetic __bf16 and _Float16, for libraries whose headers compute
                                   in float16alt (the published PULP-TrainLib); GCC 12 has neither
    gcc                            host compiler for the counting plugin

When all is present, a smoke test builds the runtime self-test and runs it on
8 emulated harts with the counting plugin.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

RISCV_GCC = "riscv64-unknown-elf-gcc"
RISCV_NM = "riscv64-unknown-elf-nm"
RISCV_AR = "riscv64-unknown-elf-ar"
RISCV_OBJDUMP = "riscv64-unknown-elf-objdump"
QEMU = "qemu-system-riscv32"
CLANG = "clang"
CLANG19 = "clang-19"
# clang 19 computes each __bf16 operation in binary32; these make it round
# every operation back to bfloat16, as a PULP core's bfloat16 unit does
# (binary32 holds 2p+2 bits of a bfloat16 operation, so the double rounding
# is innocuous). GNU ld 2.40 crashes on clang 19's DWARF 5, hence DWARF 4.
CLANG19_FLAGS = ("-Xclang", "-fbfloat16-excess-precision=none", "-ffp-contract=off", "-gdwarf-4")
HOST_CC = os.environ.get("PTL_HOST_CC", "gcc")
MARCH, MABI = "rv32imafc", "ilp32f"
MIN_QEMU = (7, 0)
PACKAGES_FILE = Path(__file__).resolve().parent / "debian-packages.txt"


def debian_packages(section: str | None = None) -> list[str]:
    """The packages of harness/debian-packages.txt, of one [section] or all."""
    packages, current = [], None
    for line in PACKAGES_FILE.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            current = line.strip("[]")
        elif line and (section is None or section == current):
            packages += line.split()
    return packages


def _run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None


def _first_line(argv: list[str]) -> str:
    result = _run(argv)
    if result is None or result.returncode != 0:
        return "missing"
    return (result.stdout or result.stderr).strip().splitlines()[0]


# ---- checks: each returns None when fine, else what is wrong ------------------------

class Broken(str):
    """A problem that installing the package will not fix: the tool is on
    PATH but does not run (a wrapper that fails, a broken install)."""


def does_not_run(command: str, args: tuple[str, ...] = ("--version",)) -> Broken | None:
    """Broken, with the tool's own words, when `command args` fails; None when it runs."""
    path = shutil.which(command)
    try:
        result = subprocess.run([command, *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Broken(f"{command} ({path}) is on PATH but does not run: {exc}; fix it or take it off PATH")
    if result.returncode == 0:
        return None
    said = " | ".join((result.stderr or result.stdout).strip().splitlines()[:3]) or "(no output)"
    return Broken(f"{command} ({path}) is on PATH but does not run: `{command} {' '.join(args)}` exits "
                  f"{result.returncode}: {said[:300]}; fix it or take it off PATH")


def check_riscv_gcc() -> str | None:
    if not shutil.which(RISCV_GCC):
        return f"{RISCV_GCC} is not on PATH"
    broken = does_not_run(RISCV_GCC)
    if broken:
        return broken
    result = _run([RISCV_GCC, f"-march={MARCH}", f"-mabi={MABI}", "-print-multi-directory"])
    if result is None or result.stdout.strip() != f"{MARCH}/{MABI}":
        return f"{RISCV_GCC} has no {MARCH}/{MABI} multilib (a Debian-style multilib build is needed)"
    return None


def check_picolibc() -> str | None:
    gcc = check_riscv_gcc()
    if gcc:
        return Broken("needs a working RISC-V GCC first") if isinstance(gcc, Broken) else "needs the RISC-V GCC first"
    include = picolibc_include()
    if include is None:
        return "the RISC-V GCC finds no picolibc.specs (or no picolibc headers through it)"
    libc = include.parent / "lib" / MARCH / MABI / "libc.a"
    if not libc.exists():
        return f"picolibc has no {MARCH}/{MABI} multilib ({libc} is missing)"
    return None


def qemu_version() -> tuple[int, ...] | None:
    match = re.search(r"version (\d+)\.(\d+)", _first_line([QEMU, "--version"]))
    return tuple(int(x) for x in match.groups()) if match else None


def check_qemu() -> str | None:
    if not shutil.which(QEMU):
        return f"{QEMU} is not on PATH"
    broken = does_not_run(QEMU)
    if broken:
        return broken
    version = qemu_version()
    if version is None or version < MIN_QEMU:
        return f"{QEMU} is older than {'.'.join(map(str, MIN_QEMU))} (needs Zfh and TCG plugins)"
    return None


def check_clang_zfh() -> str | None:
    if not shutil.which(CLANG):
        return f"{CLANG} is not on PATH"
    broken = does_not_run(CLANG)
    if broken:
        return broken
    return None if clang_has_zfh() else f"{CLANG} cannot compile for riscv32 with Zfh"


def check_clang19() -> str | None:
    if not shutil.which(CLANG19):
        return f"{CLANG19} is not on PATH"
    broken = does_not_run(CLANG19)
    if broken:
        return broken
    return None if clang19_has_zfh() else f"{CLANG19} cannot compile for riscv32 with Zfh"


def check_host_cc() -> str | None:
    if not shutil.which(HOST_CC):
        return f"host compiler {HOST_CC} is not on PATH"
    return does_not_run(HOST_CC)


@lru_cache(maxsize=None)
def clang_has_zfh() -> bool:
    result = _run([CLANG, "--target=riscv32-unknown-elf", f"-march={MARCH}_zfh", f"-mabi={MABI}",
                   "-x", "c", "-c", os.devnull, "-o", os.devnull])
    return result is not None and result.returncode == 0


@lru_cache(maxsize=None)
def clang19_has_zfh() -> bool:
    result = _run([CLANG19, "--target=riscv32-unknown-elf", f"-march={MARCH}_zfh", f"-mabi={MABI}",
                   "-x", "c", "-c", os.devnull, "-o", os.devnull])
    return result is not None and result.returncode == 0


@lru_cache(maxsize=None)
def picolibc_include() -> Path | None:
    """picolibc's header directory, as the RISC-V GCC sees it (clang needs it
    passed explicitly with -isystem)."""
    result = _run([RISCV_GCC, "--specs=picolibc.specs", f"-march={MARCH}", f"-mabi={MABI}", "-E", "-v",
                   "-x", "c", os.devnull, "-o", os.devnull])
    if result is None:
        return None
    for line in result.stderr.splitlines():
        path = Path(line.strip())
        if "picolibc" in line and path.is_absolute() and (path / "picolibc.h").exists():
            return path
    return None


def version_number(line: str, *, last: bool = False, parts: int = 3) -> str:
    """The dotted version in a tool's `--version` line (the first, or the
    last one for GCC's `name (package) 12.2.0`), cut to `parts` numbers;
    "missing" for a tool that is not there."""
    numbers = re.findall(r"\d+\.\d+(?:\.\d+)*", line)
    if line == "missing" or not numbers:
        return "missing"
    return ".".join(numbers[-1 if last else 0].split(".")[:parts])


def picolibc_version() -> str:
    include = picolibc_include()
    try:
        match = re.search(r'#define __PICOLIBC_VERSION__ "([^"]+)"', (include / "picolibc.h").read_text())
    except (OSError, TypeError):
        return "missing"
    return match.group(1) if match else "missing"


@lru_cache(maxsize=None)
def fingerprint() -> tuple[tuple[str, str], ...]:
    """What the QEMU target's counts depend on: the compilers' versions (they
    make the code), picolibc's, and QEMU's major.minor (a stable point
    release or a Debian rebuild does not change what it counts). The perf
    gate's baseline records it (harness/perf_gate.py)."""
    return (("clang", version_number(_first_line([CLANG, "--version"]))),
            ("clang-19", version_number(_first_line([CLANG19, "--version"]))),
            ("picolibc", picolibc_version()),
            ("qemu", version_number(_first_line([QEMU, "--version"]), parts=2)),
            ("riscv64-unknown-elf-gcc", version_number(_first_line([RISCV_GCC, "--version"]), last=True)))


@dataclass(frozen=True)
class Requirement:
    name: str
    package: str
    check: Callable[[], str | None]
    version: Callable[[], str]
    needed_for: str = "every build"
    optional: bool = False   # the target runs without it, offering less


REQUIREMENTS = (
    Requirement("RISC-V GCC", "gcc-riscv64-unknown-elf", check_riscv_gcc,
                lambda: _first_line([RISCV_GCC, "--version"])),
    Requirement("picolibc", "picolibc-riscv64-unknown-elf", check_picolibc,
                lambda: str(picolibc_include())),
    Requirement("QEMU", "qemu-system-misc", check_qemu, lambda: _first_line([QEMU, "--version"])),
    Requirement("host C compiler", "gcc", check_host_cc, lambda: _first_line([HOST_CC, "--version"]),
                needed_for="the counting plugin"),
    Requirement("clang with Zfh", "clang", check_clang_zfh, lambda: _first_line([CLANG, "--version"]),
                needed_for="IEEE fp16 builds of lib_c", optional=True),
    Requirement("clang-19", "clang-19", check_clang19, lambda: _first_line([CLANG19, "--version"]),
                needed_for="libraries that compute in float16alt, such as the published PULP-TrainLib",
                optional=True),
)


def missing_for_target() -> list[Requirement]:
    """Requirements without which the QEMU target cannot run at all (clang is
    optional: without it the target offers bfloat16 but not IEEE fp16)."""
    return [r for r in REQUIREMENTS if not r.optional and r.check()]


def unavailable_reason() -> str | None:
    missing = missing_for_target()
    if not missing:
        return None
    problems = {r: r.check() for r in missing}
    what = "; ".join(f"{r.name}: {problem}" for r, problem in problems.items())
    installable = [r.package for r, problem in problems.items() if not isinstance(problem, Broken)]
    return f"{what}." + (f" Install with: {' '.join(apt_command(installable))}" if installable else "")


def apt_command(packages: list[str]) -> list[str]:
    command = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    return command if os.geteuid() == 0 else ["sudo", *command]


def install(packages: list[str]) -> bool:
    if os.geteuid() != 0:
        print(f"not root: run\n  {' '.join(apt_command(packages))}")
        return False
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.run(apt_command(packages), env=env).returncode == 0:
        return True
    print("apt-get install failed; refreshing the package lists and trying once more")
    subprocess.run(["apt-get", "update"], env=env)
    return subprocess.run(apt_command(packages), env=env).returncode == 0


def main(argv: list[str] | None = None, smoke_test: Callable[[], str | None] | None = None) -> int:
    """The check (and --install); then smoke_test, the QEMU target's build-and-run
    check (harness.targets.qemu.smoke_test: returns None or what failed)."""
    parser = argparse.ArgumentParser(prog="python -m harness toolchain", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install", action="store_true", help="apt-get install what is missing (as root)")
    parser.add_argument("--no-smoke", action="store_true", help="skip the build-and-run smoke test")
    parser.add_argument("--packages", action="store_true",
                        help="print the Debian packages of harness/debian-packages.txt on one line, check nothing")
    args = parser.parse_args(argv)
    if args.packages:
        print(" ".join(debian_packages()))
        return 0

    broken: set[Requirement] = set()   # on PATH but not running: apt-get would not fix them

    def report() -> list[Requirement]:
        missing = []
        broken.clear()
        for requirement in REQUIREMENTS:
            problem = requirement.check()
            if isinstance(problem, Broken):
                missing.append(requirement)
                broken.add(requirement)
                print(f"  BROKEN   {requirement.name} ({requirement.needed_for}): {problem}")
            elif problem:
                missing.append(requirement)
                print(f"  MISSING  {requirement.name} ({requirement.needed_for}): {problem}"
                      f"  [package {requirement.package}]")
            else:
                print(f"  ok       {requirement.name}: {requirement.version()}")
        return missing

    print("QEMU target toolchain:")
    missing = report()
    packages = [r.package for r in missing if r not in broken]
    if packages:
        if args.install:
            if install(packages):
                clang_has_zfh.cache_clear()
                clang19_has_zfh.cache_clear()
                picolibc_include.cache_clear()
                print("after installing:")
                missing = report()
        else:
            print(f"install with:\n  {' '.join(apt_command(packages))}")
    if any(not r.optional for r in missing):
        return 1
    if smoke_test is not None and not args.no_smoke:
        problem = smoke_test()
        if problem:
            print(f"  FAILED   smoke test: {problem}")
            return 1
    return 0


if __name__ == "__main__":
    from harness.targets.qemu import smoke_test as qemu_smoke_test   # run as a script: no import circle
    sys.exit(main(smoke_test=qemu_smoke_test))
