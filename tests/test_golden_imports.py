"""torch is imported where a golden model computes, nowhere else
(golden/lazy_torch.py): naming the catalogue's cases, comparing results and
a suite run whose bundles are all cached leave it unimported."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Written by the suite process at its end: whether torch was imported.
PROBE = '''
import sys

def pytest_unconfigure(config):
    with open({out!r}, "a") as f:
        f.write(str("torch" in sys.modules) + "\\n")
'''


def test_naming_every_case_and_comparing_imports_no_torch():
    code = ("import sys\n"
            "from harness import catalogue, compare, pytest_plugin, session\n"
            "ids = [v.id for es in catalogue.families().values() for e in es for v in e.variants()]\n"
            "print(len(ids), 'torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    count, imported = result.stdout.split()
    assert int(count) > 40_000 and imported == "False", result.stderr[-2000:]


def test_a_run_whose_bundles_are_cached_imports_no_torch_and_the_first_does(tmp_path):
    out = tmp_path / "torch_imported.txt"
    (tmp_path / "torch_probe.py").write_text(PROBE.format(out=str(out)))
    argv = [sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "pool", "-p", "no:xdist", "-q",
            "-p", "torch_probe", "--target", "host", "-k", "maxpool and fp32 and fw and C1xH1xW1",
            "--reports-dir", str(tmp_path / "reports"), "--ptl-cache", str(tmp_path / "cache")]
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"}
    for _ in range(2):
        result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert " passed" in result.stdout.splitlines()[-1]
    assert out.read_text().split() == ["True", "False"]   # computed its bundles, then read them back
