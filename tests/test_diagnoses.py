"""Diagnoses name the real cause (issue 22): a RISC-V GCC that does not run
is said to not run (with its own words), not to lack a multilib, and apt-get
is not asked to fix it; a header's `#error` text reaches the build failures'
one-line summary; a fallback of `--target auto` to host is the run's last
line and is recorded in summary.json.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ERROR_TEXT = "ptl-check: pooling is not configured for this target"
SLICE = "maxpool and fp32 and C7xH7xW5xHk7xWk5xHs1xWs1"   # 6 variants, 2 cases


@pytest.fixture
def broken_gcc_path(tmp_path) -> tuple[dict, Path]:
    """PATH with a riscv64-unknown-elf-gcc that exits 1, and an apt-get and a
    sudo that only record that they were called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.txt"
    (bin_dir / "riscv64-unknown-elf-gcc").write_text("#!/bin/sh\necho 'fake-gcc: licence server unreachable' >&2\n"
                                                     "exit 1\n")
    for tool in ("apt-get", "sudo"):
        (bin_dir / tool).write_text(f"#!/bin/sh\necho \"{tool} $*\" >> {calls}\nexit 0\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env, calls


def test_a_riscv_gcc_that_exits_1_is_a_compiler_that_does_not_run_and_apt_get_is_not_run(broken_gcc_path):
    env, calls = broken_gcc_path
    result = subprocess.run([sys.executable, "-m", "harness", "toolchain", "--install", "--no-smoke"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    gcc_line = next(line for line in result.stdout.splitlines() if "RISC-V GCC" in line)
    assert "BROKEN" in gcc_line and "is on PATH but does not run" in gcc_line
    assert "exits 1: fake-gcc: licence server unreachable" in gcc_line
    assert "multilib" not in result.stdout
    assert not calls.exists(), f"apt-get was run for a compiler it cannot fix: {calls.read_text()}"


def test_the_qemu_target_names_a_gcc_that_does_not_run(broken_gcc_path, monkeypatch):
    env, _ = broken_gcc_path
    monkeypatch.setenv("PATH", env["PATH"])
    from harness import toolchain
    reason = toolchain.unavailable_reason()
    assert "riscv64-unknown-elf-gcc" in reason and "does not run" in reason and "licence server" in reason
    assert "multilib" not in reason and "apt-get install" not in reason.split("RISC-V GCC")[1].split(";")[0]


@pytest.fixture(scope="module")
def host_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("host") / "cache"


def run_pool_slice(cache: Path, reports: Path, env: dict | None = None, *extra: str):
    env = env or {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    return subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "pool", "-q",
                           "-p", "no:xdist", "-p", "no:randomly", "-k", SLICE, "--ptl-cache", str(cache),
                           "--reports-dir", str(reports), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def test_a_header_with_error_shows_its_text_in_every_build_failure_line(tmp_path, host_cache):
    library = tmp_path / "lib"
    shutil.copytree(ROOT / "lib_c", library)
    header = library / "include" / "pulp_pooling_fp32.h"
    header.write_text(f'#error "{ERROR_TEXT}"\n' + header.read_text())
    result = run_pool_slice(host_cache, tmp_path / "reports", None, "--target", "host", "--trainlib", str(library))
    assert result.returncode == 1, result.stdout[-2000:]
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 6
    for line in failed:
        assert "[build]" in line and f'#error "{ERROR_TEXT}"' in line, line
    with open(tmp_path / "reports" / "results.csv") as f:
        messages = [row["message"] for row in csv.DictReader(f)]
    assert all(ERROR_TEXT in m for m in messages) and len(messages) == 6


def test_a_fallback_to_host_is_the_last_line_of_the_run_and_in_the_summary(tmp_path, host_cache, broken_gcc_path):
    env, _ = broken_gcc_path
    result = run_pool_slice(host_cache, tmp_path / "reports", env, "--target", "auto")
    assert result.returncode == 0 and "6 passed" in result.stdout, result.stdout[-2000:]
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("ptl target: fell back to host (--target auto): qemu is not available:"), last
    assert "riscv64-unknown-elf-gcc" in last and "does not run" in last
    summary = json.loads((tmp_path / "reports" / "summary.json").read_text())
    assert summary["target"] == "host"
    assert summary["target_fallback"].startswith("qemu is not available: RISC-V GCC: riscv64-unknown-elf-gcc")

    # Without a fallback, no such line and nothing recorded.
    plain = run_pool_slice(host_cache, tmp_path / "plain", None, "--target", "host")
    assert "fell back" not in plain.stdout
    assert json.loads((tmp_path / "plain" / "summary.json").read_text())["target_fallback"] is None
