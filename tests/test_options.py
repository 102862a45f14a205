"""Every option is validated before anything runs: one line naming the
option, the value and what is allowed, pytest's usage-error status, no
traceback. And the artefact cache key holds every build option."""
import os
import re
import subprocess
import sys

import pytest

from harness import option_values
from harness.session import Session
from harness.target import DEFAULT_LIBRARY
from harness.targets.host import HostTarget
from tests.test_mutations import ROOT

USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR


@pytest.mark.parametrize("args, says", [
    (["--target", "nosuch"], "--target nosuch: unknown target; choose one of board, gvsoc, host, qemu, or auto"),
    (["--l1-bytes", "-5"], "--l1-bytes -5: must be a positive number of bytes"),
    (["--l1-bytes", "0"], "--l1-bytes 0: must be a positive number of bytes"),
    (["--run-timeout", "0"], "--run-timeout 0: must be a positive number of seconds"),
    (["--run-timeout", "abc"], "--run-timeout abc: must be a positive number of seconds"),
    (["--perf-threshold", "nan"], "--perf-threshold nan: must be a finite fraction of 0 or more"),
    (["--perf-threshold", "-1"], "--perf-threshold -1: must be a finite fraction of 0 or more"),
    (["--perf-threshold", "inf"], "--perf-threshold inf: must be a finite fraction of 0 or more"),
    (["--l1-bytes", "1e3"], "--l1-bytes 1e3: must be a positive number of bytes"),
    (["--board-attempts", "0"], "--board-attempts 0: must be a whole number of at least 1"),
    (["--board-quarantine-after", "x"], "--board-quarantine-after x: must be a whole number of at least 1"),
    (["--ptl-failure-lines", "-1"], "--ptl-failure-lines -1: must be a whole number of 0 or more"),
    (["--ptl-failure-lines", "many"], "--ptl-failure-lines many: must be a whole number of 0 or more"),
    (["--run-timeout", "nan"], "--run-timeout nan: must be a positive number of seconds"),
    (["--sanitize", "thread", "--target", "qemu"], "--sanitize thread: sanitizers exist on the host target only"),
    (["--reports-dir", "README.md/reports"], "--reports-dir README.md/reports: README.md is a file"),
    (["--ptl-cache", "README.md/cache"], "--ptl-cache README.md/cache: README.md is a file"),
])
def test_a_bad_option_is_one_usage_error_without_a_traceback(args, says):
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "pool", "-p", "no:xdist", "-q",
                             "--collect-only", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stdout + result.stderr and "INTERNALERROR" not in result.stdout


@pytest.mark.parametrize("variable, value, says", [
    ("PTL_RUN_TIMEOUT", "abc", "PTL_RUN_TIMEOUT=abc: must be a positive number of seconds"),
    ("PTL_RUN_TIMEOUT", "-3", "PTL_RUN_TIMEOUT=-3: must be a positive number of seconds"),
    ("PTL_PERF_GATE", "maybe", "PTL_PERF_GATE=maybe: must be on or off (1/true/yes/on or 0/false/no/off)"),
    ("PTL_BOARD_ATTEMPTS", "x", "PTL_BOARD_ATTEMPTS=x: must be a whole number of at least 1"),
    ("PTL_BOARD_QUARANTINE_AFTER", "0", "PTL_BOARD_QUARANTINE_AFTER=0: must be a whole number of at least 1"),
    ("PTL_BOARD_ANSWER_TIMEOUT", "nan", "PTL_BOARD_ANSWER_TIMEOUT=nan: must be a positive number of seconds"),
    ("PTL_LABGRID_RESERVE_TIMEOUT", "0", "PTL_LABGRID_RESERVE_TIMEOUT=0: must be a positive number of seconds"),
    ("PTL_QEMU_CONSOLE", "serial", "PTL_QEMU_CONSOLE=serial: must be one of semihost, uart"),
    ("PTL_QEMU_INSN_BUDGET", "0", "PTL_QEMU_INSN_BUDGET=0: must be a positive whole number of instructions"),
    ("PTL_TEAM_ORDER", "sideways", "PTL_TEAM_ORDER=sideways: must be a team order: one of free, forward, reverse, "
                                   "rotate or random:SEED"),
    ("PTL_OBJECTS_DIR", "README.md/objects", "PTL_OBJECTS_DIR=README.md/objects: README.md is a file"),
])
def test_a_bad_environment_variable_is_one_usage_error_naming_it(variable, value, says):
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "pool", "-p", "no:xdist", "-q",
                             "--collect-only"], capture_output=True, text=True, cwd=ROOT, timeout=120,
                            env={**os.environ, variable: value})
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stdout + result.stderr and "INTERNALERROR" not in result.stdout


@pytest.mark.parametrize("target", ["gvsoc", "board"])
def test_a_team_order_for_a_target_that_has_none_is_one_usage_error(target):
    """A target that would ignore PTL_TEAM_ORDER says so, instead of running
    its own schedule under a name that promises another."""
    def collect(order: str):
        return subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "pool", "-p",
                               "no:xdist", "-q", "--collect-only", "--target", target], capture_output=True, text=True,
                              cwd=ROOT, timeout=120, env={**os.environ, "PTL_TEAM_ORDER": order})

    result = collect("reverse")
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert result.stderr.strip() == (f"ERROR: PTL_TEAM_ORDER=reverse: the {target} target runs its team its own way "
                                     f"only, and would ignore it; host and qemu take a team order (or unset "
                                     f"PTL_TEAM_ORDER)")
    free = collect("free")
    assert "PTL_TEAM_ORDER" not in free.stderr, free.stderr


@pytest.mark.parametrize("value, gated", [("1", True), ("TRUE", True), ("yes", True), ("on", True),
                                          ("0", False), ("false", False), ("No", False), ("off", False), ("", False)])
def test_ptl_perf_gate_takes_the_usual_spellings_and_0_is_off(tmp_path, value, gated):
    """With the gate on, a missing baseline is a usage error; off, it is never read."""
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "pool", "-p", "no:xdist", "-q",
                             "--collect-only", "--perf-baseline", str(tmp_path / "none.txt")],
                            capture_output=True, text=True, cwd=ROOT, timeout=120,
                            env={**os.environ, "PTL_PERF_GATE": value})
    assert result.returncode == (USAGE_ERROR if gated else 0), result.stdout + result.stderr
    assert ("--perf-gate: no baseline at" in result.stderr) == gated


@pytest.mark.parametrize("text, cores", [(None, (8,)), ("", (8,)), ("8,1,1", (1, 8)), (" 2 ", (2,))])
def test_core_lists_are_read_one_way(text, cores):
    assert option_values.core_counts("--cores", text, 8) == cores


@pytest.mark.parametrize("text", ["0", "9", "1,,2", "a", "1.5", "-1"])
def test_a_bad_core_list_names_the_option_and_the_range(text):
    with pytest.raises(option_values.OptionValueError, match=f"^--cores {re.escape(text)}: must be comma-separated "
                                                             f"core counts, each between 1 and 8"):
        option_values.core_counts("--cores", text, 8)


def test_tune_cores_0_in_the_pytest_mode_is_one_error_before_any_test(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_autotune.py", "-p", "no:xdist", "-q",
                             "--tune", "networks/ds_cnn.toml", "--target", "host", "--tune-cores", "0",
                             "--reports-dir", str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert result.stderr.strip() == ("ERROR: --tune-cores 0: must be comma-separated core counts, each between 1 and 8 "
                                     "(the target's cores), e.g. 1,8")
    assert "Traceback" not in result.stdout + result.stderr and " error" not in result.stdout


@pytest.mark.parametrize("command", [
    [sys.executable, "-m", "pytest", "suite/test_autotune.py", "-p", "no:xdist", "-q", "--tune", "networks/ds_cnn.toml",
     "--target", "host", "--reports-dir", "{tmp}"],
    [sys.executable, "-m", "harness", "autotune", "networks/ds_cnn.toml", "--target", "host", "--reports-dir", "{tmp}"],
], ids=["pytest-mode", "cli"])
def test_the_autotuner_refuses_a_sequenced_team_order_in_one_line(tmp_path, command):
    """It times the target's own scheduling; one core at a time is not that."""
    result = subprocess.run([arg.replace("{tmp}", str(tmp_path)) for arg in command], capture_output=True, text=True,
                            cwd=ROOT, timeout=120, env={**os.environ, "PTL_TEAM_ORDER": "reverse"})
    assert result.returncode in (USAGE_ERROR, 2), result.stdout + result.stderr
    assert "PTL_TEAM_ORDER=reverse runs the team one core at a time" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not any(tmp_path.iterdir())


def test_the_cli_passes_a_bad_target_to_the_same_check():
    result = subprocess.run([sys.executable, "-m", "harness", "regress", "--target", "nosuch", "-n", "0"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == USAGE_ERROR and "--target nosuch: unknown target" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_each_build_option_gives_its_own_artefact(tmp_path):
    """Same library and target; the fp16 format and the sanitizers each change the artefact."""
    plain = Session(HostTarget(), DEFAULT_LIBRARY, tmp_path)
    asan = Session(HostTarget(), DEFAULT_LIBRARY, tmp_path, sanitize="address,undefined")
    paths = {plain.artefact_for("bf16").path, plain.artefact_for("fp16").path, asan.artefact_for("bf16").path}
    assert len(paths) == 3
    assert plain.builds.compiled == 2 and asan.builds.compiled == 1
    again = Session(HostTarget(), DEFAULT_LIBRARY, tmp_path, sanitize="address,undefined")
    assert again.artefact_for("bf16").path in paths and again.builds.reused == 1
