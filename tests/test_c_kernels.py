"""The library's own C tests (tests/c/test_kernels.c), run from pytest.

They check lib_c below the suite's level: every fp16 helper against an
independent double-precision reference (all 65,536 patterns, ties, random
operands), every matmul kernel against a naive product for all shapes in
1..17 and every core count, the managers' bias and unknown-index paths, and
the linear layer's skip flags, in both fp16 formats, with ASan/UBSan and
with the team's cores run one at a time in three orders (PTL_TEAM_ORDER).
QUICK=1 keeps the sweeps to their edge cases.
"""
import os
import shutil
import subprocess

import pytest

from tests.test_mutations import ROOT


@pytest.mark.skipif(shutil.which("gcc") is None, reason="host gcc is not installed")
def test_c_kernel_tests_pass_in_every_configuration(tmp_path):
    env = dict(os.environ, QUICK="1", OUT=str(tmp_path))
    result = subprocess.run(["sh", str(ROOT / "tests" / "c" / "run.sh")], capture_output=True, text=True,
                            env=env, timeout=1500)
    report = (result.stdout + result.stderr)[-4000:]
    assert result.returncode == 0, report
    assert "FAILED" not in result.stdout, report
