"""--shard I/N and python -m harness merge: shards cover every test id
exactly once, balance by recorded cost, and merge back into the report of
an unsharded run; merge refuses shards that do not belong together."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness import sharding
from harness.merge import MergeError, merge
from harness.merge import main as merge_main

ROOT = Path(__file__).resolve().parent.parent
SLICE = "maxpool and fp32"      # 60 variants in 20 cases, one build


def _pytest(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["TMPDIR"] = str(tmp_path)
    return subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "pool", "-p", "no:xdist",
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
    recorded = {"c0": 10.0, "c1": 9.0, "c2": 1.0, "c3": 1.0, "gone": 99.0}
    costs = sharding.case_costs(cases, recorded)
    assert costs["c9"] == 5.0 and "gone" not in costs            # no record: the median of the selected records
    shards = sharding.assign(costs, 3)
    assert sorted(shards) == sorted(cases) and set(shards.values()) == {1, 2, 3}
    assert shards == sharding.assign(dict(reversed(list(costs.items()))), 3)   # order-free
    loads = {s: sum(costs[c] for c, k in shards.items() if k == s) for s in (1, 2, 3)}
    assert max(loads.values()) - min(loads.values()) <= 10.0    # LPT: within the largest single cost
    assert sharding.case_costs({"a": 1, "b": 48}, {}) == {"a": 1.0, "b": 1.0}   # nothing recorded: all alike


def test_costs_come_from_the_committed_record_or_a_previous_run(tmp_path):
    results = tmp_path / "results.csv"
    results.write_text("test_id,outcome,duration_s\nheavy-mm-c1,passed,0.5\nheavy-mm-c8,passed,0.25\n"
                       "cheap-mm-c1,passed,0.0001\n")
    assert sharding.load_costs(results) == {"heavy": 0.75, "cheap": 0.0001}
    sharding.write_costs(sharding.load_costs(results), "qemu", tmp_path / "qemu.seconds")
    assert (tmp_path / "qemu.seconds").read_text().splitlines()[1:] == ["cheap 0.001", "heavy 0.75"]
    assert sharding.load_costs(tmp_path / "qemu.seconds") == {"cheap": 0.001, "heavy": 0.75}
    (tmp_path / "bad.seconds").write_text("heavy 0.75 extra\n")
    with pytest.raises(sharding.ShardError, match="bad.seconds:1: not '<case id> <seconds>'"):
        sharding.load_costs(tmp_path / "bad.seconds")
    with pytest.raises(sharding.ShardError, match="absent.csv"):
        sharding.load_costs(tmp_path / "absent.csv")
    assert sharding.default_costs_file("qemu") == sharding.costs_path("qemu")
    assert sharding.default_costs_file("host") == sharding.costs_path("qemu")   # no host record: qemu's
    assert sharding.costs_path("qemu").exists()                                   # committed with the baseline


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
    assert [s["index"] for s in merged["shards"]] == [1, 2] and merged["balance"] >= 1.0
    assert merged["interrupted"] is False and merged["not_run"] == 0 and merged["run"] == len(outcomes(tmp_path / "whole"))
    assert merged["partial"] == [f"-k {SLICE}", "--family pool"]  # baseline update
    assert merged["toolchain"] == json.loads((tmp_path / "whole" / "summary.json").read_text())["toolchain"]

    job_summary = tmp_path / "step_summary.md"
    job_summary.write_text("earlier steps\n")
    assert merge_main([str(tmp_path / "s2"), str(tmp_path / "s1"), "--out", str(tmp_path / "cli"),
                       "--markdown", str(job_summary)]) == 0
    text = job_summary.read_text()
    assert text.startswith("earlier steps\n### host regression of library ") and "2 shards: " in text
    assert merge_main([str(tmp_path / "s1"), "--out", str(tmp_path / "bad"), "--markdown", str(job_summary)]) == 2
    assert job_summary.read_text().endswith("### merge refused\n\nshards of 2: missing: [2]\n")

    with pytest.raises(MergeError, match="missing: \\[2\\]"):
        merge([tmp_path / "s1"], tmp_path / "bad")
    with pytest.raises(MergeError, match="given twice"):
        merge([tmp_path / "s1", tmp_path / "s1", tmp_path / "s2"], tmp_path / "bad")
    with pytest.raises(MergeError, match="not sharded"):
        merge([tmp_path / "whole", tmp_path / "s2"], tmp_path / "bad")
    for name, edit, error in _DAMAGE:
        damaged = tmp_path / name
        shutil.copytree(tmp_path / "s2", damaged)
        edit(damaged, tmp_path / "s1")
        with pytest.raises(MergeError, match=error):
            merge([tmp_path / "s1", damaged], tmp_path / "bad")
        # the command: one line, exit 2, no traceback
        result = subprocess.run([sys.executable, "-m", "harness", "merge", str(tmp_path / "s1"), str(damaged),
                                 "--out", str(tmp_path / "bad")], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, (name, result.stderr)
        assert result.stderr.startswith("merge: ") and "Traceback" not in result.stderr, (name, result.stderr)
    assert not (tmp_path / "bad").exists()                      # nothing written for a refused merge

    # Two gated shards: the same baseline and threshold merge, different ones do not.
    gate = {"baseline": "reports/baseline/host.txt", "baseline_digest": "a" * 64, "threshold": 0.0,
            "foreign_toolchain": None, "counts": {}, "regressed": [], "improved": [], "new": []}
    for i, digest in ((1, "a" * 64), (2, "b" * 64)):
        shutil.copytree(tmp_path / f"s{i}", tmp_path / f"g{i}")
        _edit_json("summary.json", lambda d, _: d.update(perf={**gate, "baseline_digest": digest}))(
            tmp_path / f"g{i}", tmp_path / "s1")
    with pytest.raises(MergeError, match="performance gate .*'baseline_digest': 'b+'.* differs from .*'a+'"):
        merge([tmp_path / "g1", tmp_path / "g2"], tmp_path / "bad")
    _edit_json("summary.json", lambda d, _: d.update(perf=gate))(tmp_path / "g2", tmp_path / "s1")
    assert merge([tmp_path / "g1", tmp_path / "g2"], tmp_path / "gated")["perf"]["baseline_digest"] == "a" * 64


def _edit_json(name: str, change):
    """change(data of shard 2's file, shard 1's shard.json)"""
    def edit(directory: Path, shard1: Path) -> None:
        data = json.loads((directory / name).read_text())
        change(data, json.loads((shard1 / "shard.json").read_text()))
        (directory / name).write_text(json.dumps(data))
    return edit


def _edit_text(name: str, change):
    def edit(directory: Path, shard1: Path) -> None:
        (directory / name).write_text(change((directory / name).read_text()))
    return edit


def _edit_junit(change):
    """change(the testsuite element)"""
    def edit(directory: Path, shard1: Path) -> None:
        tree = ET.parse(directory / "junit.xml")
        change(tree.getroot())
        tree.write(directory / "junit.xml", encoding="utf-8", xml_declaration=True)
    return edit


def _drop_half(suite) -> None:
    for case in list(suite.iter("testcase"))[::2]:
        suite.remove(case)


def _fail_one(suite) -> None:
    case = next(c for c in suite.iter("testcase") if c.find("skipped") is None and c.find("failure") is None)
    ET.SubElement(case, "failure", message="made up")


def _edit_rows(change):
    def edit(directory: Path, shard1: Path) -> None:
        with open(directory / "results.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        rows = change(rows)
        with open(directory / "results.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return edit


_DAMAGE = [  # (name, damage to shard 2's reports, the merge's complaint)
    ("target", _edit_json("summary.json", lambda s, _: s.update(target="qemu")), "target qemu differs"),
    ("library", _edit_json("summary.json", lambda s, _: s.update(library="0" * 64)), "library digest 0+ differs"),
    ("selection", _edit_json("shard.json", lambda s, _: s.update(ids_digest="f" * 64)), "another selection"),
    ("costs", _edit_json("shard.json", lambda s, _: s.update(costs_digest="e" * 64)), "another split costs"),
    ("overlap", _edit_json("shard.json", lambda s, one: s["ids"].append(one["ids"][0])),
     "in more than one shard's share"),
    ("short", _edit_json("shard.json", lambda s, _: s["ids"].pop()), "hold \\d+ test ids, not the \\d+"),
    ("lost", _edit_rows(lambda rows: rows[1:]), "reported no result for 1 of its"),
    ("twice", _edit_rows(lambda rows: rows + rows[:1]), "1 test ids reported twice"),
    # the files of one shard must agree
    ("junit-short", _edit_junit(_drop_half), "junit.xml: \\d+ test cases for the \\d+ rows of results.csv: \\d+ "
                                             "test cases of results.csv missing"),
    ("junit-outcome", _edit_junit(_fail_one), "junit.xml: 1 test cases whose outcome is not results.csv's"),
    ("summary-counts", _edit_json("summary.json", lambda s, _: s["outcomes"].update(passed=s["outcomes"]["passed"] + 1)),
     "summary.json: outcomes .* are not results.csv's"),
    ("interrupted", _edit_json("summary.json", lambda s, _: s.update(interrupted=True, run=3, not_run=s["selected"] - 3)),
     "the run was interrupted \\(3 of \\d+ selected tests ran"),
    # every shard run alike
    ("gated", _edit_json("summary.json", lambda s, _: s.update(perf={"baseline": "b.txt", "threshold": 0.0})),
     "performance gate .*b.txt.* differs from .* off; every shard needs the same --perf-gate"),
    ("toolchain", _edit_json("summary.json", lambda s, _: s.update(toolchain={"gcc": "13.2.0"})),
     "toolchain {'gcc': '13.2.0'} differs"),
    ("team-order", _edit_json("summary.json", lambda s, _: s.update(team_order="reverse")),
     "team order reverse differs from .*'s free"),
    # malformed files: one line each
    ("spec-json", _edit_text("shard.json", lambda t: t[:-5]), "not a shard's reports .*: "),
    ("spec-type", _edit_json("shard.json", lambda s, _: s.update(index="2")),
     "shard.json: \"index\" \\(the shard's number\\) is '2', expected a int"),
    ("spec-ids", _edit_json("shard.json", lambda s, _: s.update(ids=None)), "shard.json: \"ids\" .* expected a list"),
    ("summary-list", _edit_text("summary.json", lambda t: "[]"), "summary.json: not a run's summary"),
    ("summary-outcomes", _edit_json("summary.json", lambda s, _: s.update(outcomes="all passed")),
     "summary.json: not a run's summary"),
    ("csv-column", _edit_rows(lambda rows: [{k: v for k, v in r.items() if k != "failure_class"} for r in rows]),
     "results.csv: no column failure_class \\(expected the columns test_id, "),
    ("junit-xml", _edit_text("junit.xml", lambda t: t[:len(t) // 2]), "not a shard's reports .*junit.xml"),
]


def test_a_pass_called_fixed_in_its_shard_sits_beside_its_entrys_failures_in_another_after_the_merge():
    from harness.merge import _settle_fixed
    labelled = {"a-c1": ("known_bug", "0"), "a-c3": ("fixed", "0"),    # entry 0 failed in shard 1 ...
                "b-c1": ("fixed", "1"), "c-c1": ("", "")}                # ... entry 1 nowhere
    rows = [{"test_id": i, "expectation": label} for i, (label, _) in labelled.items()]
    cases = []
    for test_id, (label, entry) in labelled.items():
        case = ET.Element("testcase", name=test_id)
        props = ET.SubElement(case, "properties")
        if label:
            ET.SubElement(props, "property", name="expectation", value=label)
            ET.SubElement(props, "property", name="expect_entry", value=entry)
        cases.append(case)
    _settle_fixed(rows, cases)
    assert {r["test_id"]: r["expectation"] for r in rows} == \
        {"a-c1": "known_bug", "a-c3": "passed_beside", "b-c1": "fixed", "c-c1": ""}
    assert [c.find("properties/property[@name='expectation']").get("value") for c in cases[:3]] == \
        ["known_bug", "passed_beside", "fixed"]
