"""Every option is validated before anything runs: one line naming the
option, the value and what is allowed, pytest's usage-error status, no
traceback. And the artefact cache key holds every build option."""
import subprocess
import sys

import pytest

from harness.session import Session
from harness.target import DEFAULT_LIBRARY
from harness.targets.host import HostTarget
from tests.test_mutations import ROOT

USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR


@pytest.mark.parametrize("args, says", [
    (["--target", "nosuch"], "--target nosuch: unknown target; choose one of host, qemu, gvsoc, board, or auto"),
    (["--l1-bytes", "-5"], "--l1-bytes -5: must be a positive number of bytes"),
    (["--l1-bytes", "0"], "--l1-bytes 0: must be a positive number of bytes"),
    (["--run-timeout", "0"], "--run-timeout 0.0: must be a positive number of seconds"),
    (["--run-timeout", "nan"], "--run-timeout nan: must be a positive number of seconds"),
    (["--sanitize", "thread", "--target", "qemu"], "--sanitize thread: sanitizers exist on the host target only"),
    (["--reports-dir", "README.md/reports"], "--reports-dir README.md/reports: README.md is a file"),
    (["--ptl-cache", "README.md/cache"], "--ptl-cache README.md/cache: README.md is a file"),
])
def test_a_bad_option_is_one_usage_error_without_a_traceback(args, says):
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_pool.py", "-p", "no:xdist", "-q",
                             "--collect-only", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stdout + result.stderr and "INTERNALERROR" not in result.stdout


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
