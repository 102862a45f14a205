"""The library's own C tests (tests/c/test_kernels.c), run from pytest.

They check lib_c below the suite's level: every fp16 helper against an
independent double-precision reference (all 65,536 patterns, ties, random
operands), every matmul kernel against a naive product for all shapes in
1..17 and every core count, the managers' bias and unknown-index paths, and
the linear layer's skip flags, in both fp16 formats, with ASan/UBSan and
with the team's cores run one at a time in three orders (PTL_TEAM_ORDER).
QUICK=1 keeps the sweeps to their edge cases.

Each configuration of tests/c/run.sh (its CONFIGS line, read here) is a test
of its own: a failure names it, and the workers share them out.
"""
import os
import re
import shutil
import subprocess

import pytest

from tests.test_mutations import ROOT

RUN_SH = ROOT / "tests" / "c" / "run.sh"
CONFIGS = re.search(r'^CONFIGS="([^"]+)"$', RUN_SH.read_text(), re.M).group(1).split()


def test_run_sh_rejects_a_configuration_it_does_not_have(tmp_path):
    result = subprocess.run(["sh", str(RUN_SH), "nosuch"], capture_output=True, text=True,
                            env=dict(os.environ, OUT=str(tmp_path)), timeout=60)
    assert result.returncode != 0 and f"unknown configuration: nosuch (one of: {' '.join(CONFIGS)})" in result.stdout


@pytest.mark.skipif(shutil.which("gcc") is None, reason="host gcc is not installed")
@pytest.mark.parametrize("config", CONFIGS)
def test_c_kernel_tests_pass(config, tmp_path):
    env = dict(os.environ, QUICK="1", OUT=str(tmp_path))
    result = subprocess.run(["sh", str(RUN_SH), config], capture_output=True, text=True, env=env, timeout=1500)
    report = (result.stdout + result.stderr)[-4000:]
    assert result.returncode == 0, report
    assert "FAILED" not in result.stdout, report
    skipped = re.findall(r"^SKIPPED .*$", result.stdout, re.M)
    if skipped:
        pytest.skip("; ".join(skipped))
    # what ran: each test binary's own verdict line, or each cross compiler's ok
    assert re.search(r"^(PASSED: \d+ checks, 0 failures|ok: .+)$", result.stdout, re.M), report
