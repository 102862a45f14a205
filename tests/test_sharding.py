"""--shard I/N and python -m harness merge: shards cover every test id
exactly once, balance by recorded cost, and merge back into the report of
an unsharded run; merge refuses shards that do not belong together."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import sharding
from harness.merge import MergeError, merge

ROOT = Path(__file__).resolve().parent.parent
SLICE = "maxpool and fp32"      # 60 variants in 20 cases, one build


def _pytest(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["TMPDIR"] = str(tmp_path)
    return subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_pool.py"), "-p", "no:xdist",
                           "--target", "host", "--ptl-cache", str(tmp_path / "cache"), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True)


def _collected(args: list[str], tmp_path: Path) -> list[str]:
    run = _pytest(["--collect-only", "-q", *args], tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    return [line for line in run.stdout.splitlines() if "::" in line]


@pytest.mark.parametrize("text", ["2", "0/3", "4/3", "a/b", "1/0"])
def test_a_malformed_shard_is_one_usage_error(text):
    with pytest.raises(sharding.ShardError):
        sharding.parse_shard(text)


def test_cases_go_to_the_least_loaded_shard_costliest_first_and_every_case_once():
    cases = {f"c{i}": 3 for i in range(10)}
    costs = {"c0": 10.0, "c1": 9.0, "c2": 1.0, "c3": 1.0}       # the rest cost the median, 5.5
    shards = sharding.assign(cases, 3, costs)
    assert sorted(shards) == sorted(cases) and set(shards.values()) == {1, 2, 3}
    assert shards == sharding.assign(dict(reversed(list(cases.items()))), 3, costs)   # order-free
    loads = {s: sum(costs.get(c, 5.5) for c, k in shards.items() if k == s) for s in (1, 2, 3)}
    assert max(loads.values()) - min(loads.values()) <= 10.0    # LPT: within the largest single cost


def test_four_shards_collect_every_variant_exactly_once(tmp_path):
    whole = _collected(["-k", "maxpool"], tmp_path)
    parts = [_collected(["-k", "maxpool", "--shard", f"{i}/4"], tmp_path) for i in range(1, 5)]
    assert all(parts) and len(whole) > 100
    assert sorted(sum(parts, [])) == sorted(whole)               # every id once, none twice


def test_sharded_reports_merge_into_the_unsharded_outcome(tmp_path):
    whole = _pytest(["-q", "-k", SLICE, "--reports-dir", str(tmp_path / "whole")], tmp_path)
    assert whole.returncode == 0, whole.stdout[-2000:]
    for i in (1, 2):
        run = _pytest(["-q", "-k", SLICE, "--shard", f"{i}/2", "--shard-costs", str(tmp_path / "whole" / "results.csv"),
                       "--reports-dir", str(tmp_path / f"s{i}")], tmp_path)
        assert run.returncode == 0, run.stdout[-2000:]
    merged = merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "merged")

    def outcomes(directory):
        with open(directory / "results.csv", newline="") as handle:
            return {row["test_id"]: row["outcome"] for row in csv.DictReader(handle)}
    assert outcomes(tmp_path / "merged") == outcomes(tmp_path / "whole")
    assert merged["outcomes"] == json.loads((tmp_path / "whole" / "summary.json").read_text())["outcomes"]

    with pytest.raises(MergeError, match="missing: \\[2\\]"):
        merge([tmp_path / "s1"], tmp_path / "bad")
    with pytest.raises(MergeError, match="given twice"):
        merge([tmp_path / "s1", tmp_path / "s1", tmp_path / "s2"], tmp_path / "bad")
    with pytest.raises(MergeError, match="not sharded"):
        merge([tmp_path / "whole", tmp_path / "s2"], tmp_path / "bad")
    summary = json.loads((tmp_path / "s2" / "summary.json").read_text())
    summary["target"] = "qemu"
    (tmp_path / "s2" / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(MergeError, match="target qemu differs"):
        merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "bad")
    assert not (tmp_path / "bad").exists()                      # nothing written for a refused merge
