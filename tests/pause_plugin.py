"""A pytest plugin for tests/test_interrupted.py (loaded with -p
tests.pause_plugin): once PTL_TEST_PAUSE_AFTER tests have passed, it prints
PAUSE_LINE and waits for a signal, so that the signal the test sends reaches
the run in the middle whatever the machine's speed (a slice of 120 cached
variants can otherwise finish between the third PASSED line and the signal)."""
from __future__ import annotations

import os
import signal

import pytest

PAUSE_LINE = "ptl-test: paused, waiting for a signal"
_passed = 0


@pytest.hookimpl(trylast=True)   # after the harness has recorded the test and the terminal has printed it
def pytest_runtest_logreport(report):
    global _passed
    after = int(os.environ.get("PTL_TEST_PAUSE_AFTER", "0"))
    if after and report.when == "call" and report.passed:
        _passed += 1
        if _passed == after:
            print(f"\n{PAUSE_LINE}", flush=True)
            signal.pause()   # the run's handler raises KeyboardInterrupt (SIGINT, and SIGTERM as the harness sets it)
