"""./ptl (issue 22): it says what it does while it sets up the environment
(the first run used to print nothing for over two minutes), and it takes
relative paths from where it is run, not from the checkout. It checks the
toolchain of the target the command will run on.

The script runs from a copy of the checkout's entry files with a fake
python3 on PATH: `python3 -m venv` makes a venv whose python only logs how
it was called, so nothing is installed and no torch is downloaded.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FAKE_VENV_PYTHON = """#!/bin/sh
echo "python cwd=$(pwd) args=$*" >> "{log}"
case "$*" in
    *"-m harness toolchain"*) [ -z "$FAKE_TOOLCHAIN_FAILS" ] || exit 1;;
    *"-m pip install"*) echo "Collecting torch==2.13.0"; echo "Successfully installed (fake)";;
    *"-m harness"*) echo "harness ran in $(pwd) with: $*";;
esac
"""

FAKE_PYTHON3 = """#!/bin/sh
# python3 -m venv DIR: a venv whose python logs its calls
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    cat > "$3/bin/python" <<'INNER'
{venv_python}INNER
    chmod +x "$3/bin/python"
    exit 0
fi
exit 3
"""


def setup(tmp_path: Path) -> tuple[Path, Path, dict, Path]:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy2(ROOT / "ptl", checkout / "ptl")
    shutil.copy2(ROOT / "pyproject.toml", checkout / "pyproject.toml")
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(FAKE_PYTHON3.format(venv_python=FAKE_VENV_PYTHON.format(log=log)))
    (bin_dir / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PTL_"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "shards" / "a").mkdir(parents=True)
    return checkout, elsewhere, env, log


def test_the_first_run_says_each_setup_step_and_shows_pips_progress(tmp_path):
    checkout, elsewhere, env, log = setup(tmp_path)
    result = subprocess.run([str(checkout / "ptl"), "merge", "shards/a"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    steps = [line for line in result.stderr.splitlines() if line.startswith("ptl: ")]
    assert steps[0].startswith(f"ptl: setting up the Python environment in {checkout / '.venv'}")
    assert [s.split("]")[0] for s in steps if s.startswith("ptl: [")] == ["ptl: [1/3", "ptl: [2/3", "ptl: [3/3"]
    assert steps[-1].startswith("ptl: environment ready in ")
    assert "Collecting torch" in result.stdout   # pip speaks: no --quiet
    pip_calls = [line for line in log.read_text().splitlines() if "-m pip install" in line]
    assert len(pip_calls) == 2 and not any("--quiet" in line for line in pip_calls)
    assert f"-e {checkout}" in pip_calls[1]

    again = subprocess.run([str(checkout / "ptl"), "merge", "shards/a"], cwd=elsewhere, env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "setting up" not in again.stderr   # set up once


def test_relative_paths_are_taken_from_where_ptl_is_run(tmp_path):
    checkout, elsewhere, env, log = setup(tmp_path)
    env["PTL_VENV"] = str(tmp_path / "venv")
    result = subprocess.run([str(checkout / "ptl"), "merge", "shards/a", "--out", "merged"], cwd=elsewhere,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"harness ran in {elsewhere} with: -m harness merge shards/a --out merged" in result.stdout
    assert (tmp_path / "venv" / ".installed").exists() and not (checkout / ".venv").exists()


def harness_calls(log: Path) -> list[str]:
    """The venv python's calls after the set-up, each as its arguments."""
    return [line.split(" args=", 1)[1] for line in log.read_text().splitlines()
            if " args=-m harness" in line]


TARGET_CASES = [  # (arguments, PTL_TARGET, the toolchain call expected before the command)
    (["regress", "--target", "host"], None, None),
    (["regress", "-k", "relu"], "host", None),
    (["regress", "--target=gvsoc", "-k", "relu"], None, "-m harness toolchain --target gvsoc --install"),
    (["regress", "-k", "relu"], None, "-m harness toolchain --install"),
    (["regress", "--target", "qemu"], "host", "-m harness toolchain --install"),   # the argument wins
    (["tune", "net.toml", "--target", "host"], "qemu", None),
]


@pytest.mark.parametrize("args, env_target, toolchain", TARGET_CASES)
def test_the_toolchain_checked_is_the_one_of_the_target_the_command_runs_on(tmp_path, args, env_target,
                                                                            toolchain):
    checkout, elsewhere, env, log = setup(tmp_path)
    if env_target:
        env["PTL_TARGET"] = env_target
    result = subprocess.run([str(checkout / "ptl"), *args], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    command = {"regress": "regress", "tune": "autotune"}[args[0]]
    expected = ([toolchain] if toolchain else []) + [" ".join(["-m harness", command, *args[1:]])]
    assert harness_calls(log) == expected


@pytest.mark.parametrize("target, said", [
    (None, "ptl: embedded toolchain unavailable; falling back to host"),
    ("qemu", "ptl: the qemu target needs the embedded toolchain (above)"),
    ("gvsoc", "ptl: the gvsoc target cannot run here (above)"),
])
def test_without_the_toolchain_only_auto_goes_on(tmp_path, target, said):
    checkout, elsewhere, env, log = setup(tmp_path)
    env["FAKE_TOOLCHAIN_FAILS"] = "1"
    args = ["regress", *(["--target", target] if target else [])]
    result = subprocess.run([str(checkout / "ptl"), *args], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=120)
    assert said in result.stderr.splitlines()
    ran = [call for call in harness_calls(log) if call.startswith("-m harness regress")]
    if target is None:
        assert result.returncode == 0 and ran == ["-m harness regress"]
    else:
        assert result.returncode == 1 and ran == []


def test_a_venv_that_is_a_file_is_one_line_and_nothing_runs(tmp_path):
    # What recent tox writes where .venv is absent: a PEP 832 redirect file.
    checkout, elsewhere, env, log = setup(tmp_path)
    (checkout / ".venv").write_text(".tox/gvsoc\n")
    result = subprocess.run([str(checkout / "ptl"), "regress"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip() == (f"ptl: error: {checkout / '.venv'} is a file, not a virtual environment "
                                     "(.tox/gvsoc ); remove it, or set PTL_VENV to another directory")
    assert not log.exists()


def test_tox_leaves_the_venv_of_ptl_alone(tmp_path):
    """tox (4.6x) writes a PEP 832 .venv redirect file into a project that
    has no .venv, after which ./ptl could not make its environment there
    (a clone where `tox -e gvsoc` ran first); tox.ini turns that off. The
    environment is made without the package (nothing installed)."""
    for name in ("tox.ini", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "TOX_", "PTL_"))}
    result = subprocess.run([sys.executable, "-m", "tox", "run", "-e", "tests", "--notest", "--skip-pkg-install"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / ".tox" / "tests").is_dir()
    assert not (tmp_path / ".venv").exists()
