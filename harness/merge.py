"""python -m harness merge SHARD_DIR... [--out DIR] [--markdown FILE]: one
report from the reports of the shards of one run (`--shard I/N`).

Each shard's directory holds its junit.xml, results.csv, summary.json and
shard.json: the shard's spec, the identity (count and digest) of the whole
selection that every shard collected, the identity of the costs that split
it, and the test ids of its own share. The merge refuses, with one line
naming the shard and what is wrong, and writes nothing:
  - a directory without those files, or of an unsharded run;
  - a malformed file: summary.json or shard.json that is not what a run
    writes, results.csv without one of its columns, junit.xml unreadable;
  - a shard whose files disagree: junit.xml's test cases, results.csv's rows
    and summary.json's outcome counts must name the same variants and
    outcomes;
  - an interrupted shard, or one whose tests did not all run;
  - shards of different targets, library digests, selections or costs,
    performance-gate settings (gated or not, baseline, threshold), team
    orders or toolchain fingerprints;
  - a shard missing or given twice;
  - shares that overlap or do not add up to the selection;
  - a test id reported twice, outside its shard's share, or not at all.
The merged results.csv and junit.xml hold every shard's rows in test-id
order; summary.json adds the outcomes, the performance gate's verdicts,
the expectations and the quarantined boards up, and lists the shards.
--markdown appends the same as a table (for $GITHUB_STEP_SUMMARY).
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness import expectations, perf_gate, sharding
from harness.reports import (CSV_COLUMNS, completeness, incomplete, write_csv_records, write_junit_cases,
                             write_summary)
from harness.stdout_lines import print_lines

EXAMPLES = 3   # ids named in one error line


class MergeError(ValueError):
    """Shards that cannot be one report: one line for the user."""


@dataclass
class Shard:
    directory: Path
    summary: dict
    spec: dict          # shard.json
    rows: list[dict]
    cases: list[ET.Element]

    @property
    def index(self) -> int:
        return self.spec["index"]


def _examples(ids) -> str:
    ids = sorted(ids)
    return ", ".join(ids[:EXAMPLES]) + (f" and {len(ids) - EXAMPLES} more" if len(ids) > EXAMPLES else "")


# shard.json: key -> (type, what it is)
SPEC_FIELDS = {"index": (int, "the shard's number"), "count": (int, "the number of shards"),
               "ids_total": (int, "the selection's size"), "ids_digest": (str, "the selection's digest"),
               "ids": (list, "the test ids of the shard's share")}
JUNIT_OUTCOME = {"failure": "failed", "error": "error", "skipped": "skipped"}   # CSV's xfailed is skipped there


def load_shard(directory: Path) -> Shard:
    try:
        summary = json.loads((directory / "summary.json").read_text())
        spec_path = directory / sharding.SHARD_FILE
        if not spec_path.exists():
            raise MergeError(f"{directory}: the run was not sharded (no {sharding.SHARD_FILE}; run with --shard I/N)")
        spec = json.loads(spec_path.read_text())
        with open(directory / "results.csv", newline="") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            columns = reader.fieldnames or []
        cases = list(ET.parse(directory / "junit.xml").getroot().iter("testcase"))
    except (OSError, ValueError, ET.ParseError) as exc:
        raise MergeError(f"{directory}: not a shard's reports (summary.json, {sharding.SHARD_FILE}, results.csv, "
                         f"junit.xml): {exc}") from None
    _check_shape(directory, summary, spec, columns)
    return Shard(directory, summary, spec, rows, cases)


def _check_shape(directory: Path, summary, spec, columns: list[str]) -> None:
    """Each file is what a run writes; else one line naming the file and what is wrong."""
    redo = "re-run the shard, or take its reports as they were written"
    if not isinstance(summary, dict) or not isinstance(summary.get("outcomes"), dict) or not all(
            isinstance(n, int) for n in summary["outcomes"].values()):
        raise MergeError(f"{directory / 'summary.json'}: not a run's summary (expected a JSON object with outcome "
                         f"counts under \"outcomes\"); {redo}")
    if not isinstance(spec, dict):
        raise MergeError(f"{directory / sharding.SHARD_FILE}: not a shard record (expected a JSON object); {redo}")
    for key, (kind, what) in SPEC_FIELDS.items():
        value = spec.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise MergeError(f"{directory / sharding.SHARD_FILE}: \"{key}\" ({what}) is {value!r}, expected a "
                             f"{kind.__name__}; {redo}")
    if not all(isinstance(i, str) for i in spec["ids"]) or not 1 <= spec["index"] <= spec["count"]:
        raise MergeError(f"{directory / sharding.SHARD_FILE}: shard {spec['index']} of {spec['count']} with ids "
                         f"that are not all test ids; {redo}")
    missing = [column for column in CSV_COLUMNS if column not in columns]
    if missing:
        raise MergeError(f"{directory / 'results.csv'}: no column {', '.join(missing)} (expected the columns "
                         f"{', '.join(CSV_COLUMNS)}); {redo}")


def _junit_outcome(case: ET.Element) -> str:
    return next((outcome for tag, outcome in JUNIT_OUTCOME.items() if case.find(tag) is not None), "passed")


def check_files_agree(shard: Shard) -> None:
    """junit.xml, results.csv and summary.json of one shard tell one story."""
    where = shard.directory
    csv_outcomes = {row["test_id"]: row["outcome"] for row in shard.rows}
    junit = Counter(case.get("name", "") for case in shard.cases)
    missing = csv_outcomes.keys() - junit.keys()
    extra = junit.keys() - csv_outcomes.keys()
    if missing or extra or any(n > 1 for n in junit.values()):
        parts = [f"{len(missing)} test cases of results.csv missing ({_examples(missing)})" if missing else "",
                 f"{len(extra)} not in results.csv ({_examples(extra)})" if extra else "",
                 "cases given twice" if any(n > 1 for n in junit.values()) else ""]
        raise MergeError(f"{where / 'junit.xml'}: {len(shard.cases)} test cases for the {len(shard.rows)} rows of "
                         f"results.csv: {'; '.join(p for p in parts if p)}; the shard's files disagree, re-run it")
    differ = [case.get("name") for case in shard.cases
              if _junit_outcome(case) != {"xfailed": "skipped", "xpassed": "passed"}.get(
                  csv_outcomes[case.get("name")], csv_outcomes[case.get("name")])]
    if differ:
        raise MergeError(f"{where / 'junit.xml'}: {len(differ)} test cases whose outcome is not results.csv's "
                         f"({_examples(differ)}); the shard's files disagree, re-run it")
    counted = {k: n for k, n in shard.summary["outcomes"].items() if n}
    if counted != dict(Counter(csv_outcomes.values())):
        raise MergeError(f"{where / 'summary.json'}: outcomes {counted} are not results.csv's "
                         f"{dict(Counter(csv_outcomes.values()))}; the shard's files disagree, re-run it")


def _gate(summary: dict) -> dict | None:
    """The performance-gate settings of a shard: what must be the same in all."""
    perf = summary.get("perf")
    if not perf:
        return None
    return {key: perf.get(key) for key in ("baseline", "baseline_digest", "threshold")} | {
        "foreign toolchain": bool(perf.get("foreign_toolchain"))}


def check(shards: list[Shard]) -> None:
    """Raises MergeError unless the shards are exactly one run's."""
    first = shards[0]
    for shard in shards[1:]:
        for key, what in (("target", "target"), ("library", "library digest"), ("toolchain", "toolchain"),
                          ("team_order", "team order")):
            if shard.summary.get(key) != first.summary.get(key):
                raise MergeError(f"{shard.directory}: {what} {shard.summary.get(key)} differs from "
                                 f"{first.directory}'s {first.summary.get(key)}")
        if _gate(shard.summary) != _gate(first.summary):
            raise MergeError(f"{shard.directory}: performance gate {_gate(shard.summary) or 'off'} differs from "
                             f"{first.directory}'s {_gate(first.summary) or 'off'}; every shard needs the same "
                             f"--perf-gate, --perf-threshold and baseline")
        for key, what in (("count", "shard count"), ("ids_total", "selection size"),
                          ("ids_digest", "selection"), ("costs_digest", "split costs")):
            if shard.spec.get(key) != first.spec.get(key):
                raise MergeError(f"{shard.directory}: a shard of another {what} than {first.directory} "
                                 f"({shard.spec.get(key)} vs {first.spec.get(key)}); every shard needs the same "
                                 f"checkout, selection and --shard-costs")
    count = first.spec["count"]
    indexes = Counter(shard.index for shard in shards)
    twice = sorted(i for i, n in indexes.items() if n > 1)
    missing = sorted(set(range(1, count + 1)) - set(indexes))
    if twice or missing:
        raise MergeError(f"shards of {count}: " + "; ".join(
            part for part in (f"given twice: {twice}" if twice else "", f"missing: {missing}" if missing else "")
            if part))
    shares = Counter(test_id for shard in shards for test_id in shard.spec["ids"])
    overlap = [i for i, n in shares.items() if n > 1]
    if overlap:
        raise MergeError(f"{len(overlap)} test ids are in more than one shard's share ({_examples(overlap)}): "
                         f"the shards did not split the same selection the same way")
    if len(shares) != first.spec["ids_total"] or sharding.ids_digest(shares) != first.spec["ids_digest"]:
        raise MergeError(f"the shards' shares hold {len(shares)} test ids, not the {first.spec['ids_total']} "
                         f"of the selection they were split from")
    for shard in shards:
        why = incomplete(shard.summary)
        if why:
            raise MergeError(f"{shard.directory}: {why}; a merge joins whole shards: re-run shard {shard.index}")
        reported = Counter(row["test_id"] for row in shard.rows)
        repeated = [i for i, n in reported.items() if n > 1]
        if repeated:
            raise MergeError(f"{shard.directory}: {len(repeated)} test ids reported twice ({_examples(repeated)})")
        share = set(shard.spec["ids"])
        outside = reported.keys() - share
        if outside:
            raise MergeError(f"{shard.directory}: {len(outside)} test ids outside shard {shard.index}'s share "
                             f"({_examples(outside)})")
        absent = share - reported.keys()
        if absent:
            raise MergeError(f"{shard.directory}: shard {shard.index} reported no result for {len(absent)} of its "
                             f"{len(share)} test ids ({_examples(absent)}); did it stop early?")
        check_files_agree(shard)


def _settle_fixed(rows: list[dict], cases: list[ET.Element]) -> None:
    """A shard calls a pass `fixed` when its entry covered no failure in that
    shard; across the shards, the entry may have: relabel such passes
    passed_beside in the rows and the JUnit cases alike."""
    labels = {}
    for case in cases:
        props = {p.get("name"): p for p in case.iterfind("properties/property")}
        if "expectation" in props and "expect_entry" in props:
            labels[case.get("name")] = props
    beside = expectations.passes_beside_failures(
        [(test_id, props["expectation"].get("value"), props["expect_entry"].get("value"))
         for test_id, props in labels.items()])
    for test_id in beside:
        labels[test_id]["expectation"].set("value", expectations.PASSED_BESIDE)
    for row in rows:
        if row["test_id"] in beside:
            row["expectation"] = expectations.PASSED_BESIDE


def merged_summary(shards: list[Shard], rows: list[dict]) -> dict:
    first = shards[0].summary
    outcomes = Counter(row["outcome"] for row in rows)
    classes = Counter(row["failure_class"] for row in rows if row["outcome"] in ("failed", "error"))
    summary = {"target": first.get("target"), "library": first.get("library"), "toolchain": first.get("toolchain"),
               "team_order": first.get("team_order", "free"),
               "partial": first.get("partial") or [],   # the shards split one selection: its limits are theirs
               **completeness(sum(s.summary.get("selected") or len(s.spec["ids"]) for s in shards), len(rows), False),
               "outcomes": dict(outcomes),
               "failure_classes": dict(classes),
               "quarantined": sorted({board for s in shards for board in s.summary.get("quarantined") or []}),
               "shard": None,
               "shards": [{"index": s.index, "directory": str(s.directory), "seconds": s.summary.get("seconds"),
                           "estimated_seconds": s.spec.get("estimated_seconds"), "variants": len(s.rows)}
                          for s in shards]}
    gated = [s.summary["perf"] for s in shards if s.summary.get("perf")]
    if gated:
        summary["perf"] = perf_gate.summarise({row["test_id"]: row.get("perf") for row in rows},
                                              gated[0]["baseline"], gated[0]["threshold"],
                                              gated[0].get("baseline_digest"), gated[0].get("foreign_toolchain"))
    groups = expectations.summary_groups((row["test_id"], row["outcome"], row.get("expectation")) for row in rows)
    summary["expectations"] = {key: len(ids) for key, ids in groups.items()}
    seconds = [s.summary.get("seconds") for s in shards if s.summary.get("seconds")]
    if len(seconds) == len(shards):
        summary["balance"] = round(max(seconds) / statistics.mean(seconds), 3)
    return summary


def merge(directories: list[Path], out: Path) -> dict:
    """Checks and joins the shards; returns the merged summary."""
    shards = sorted((load_shard(d) for d in directories), key=lambda s: s.index)
    check(shards)
    rows = sorted((row for shard in shards for row in shard.rows), key=lambda row: row["test_id"])
    cases = sorted((case for shard in shards for case in shard.cases), key=lambda case: case.get("name", ""))
    _settle_fixed(rows, cases)
    summary = merged_summary(shards, rows)
    write_csv_records(rows, out / "results.csv")
    write_junit_cases(cases, out / "junit.xml",
                      properties={key: summary[key] for key in ("interrupted", "selected", "run", "not_run")
                                  if key in summary})
    write_summary(summary, out / "summary.json")
    return summary


def summary_lines(summary: dict) -> list[str]:
    """What a reader wants first: outcomes, failure classes, the gate, the
    quarantined boards, the shards' times."""
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(summary["outcomes"].items()))
    lines = [f"{summary['target']} regression of library {str(summary['library'])[:12]}, "
             f"{len(summary['shards'])} shards: {outcomes or 'no variants'}"]
    if summary["failure_classes"]:
        lines.append("failures by class: " + ", ".join(f"{n} {k}" for k, n in sorted(summary["failure_classes"].items())))
    lines += perf_gate.summary_lines(summary.get("perf"))
    if summary["quarantined"]:
        lines.append(f"quarantined boards: {', '.join(summary['quarantined'])}")
    lines.append("shard seconds: " + ", ".join(f"{s['index']}: {s['seconds']}" for s in summary["shards"])
                 + (f"; slowest over mean {summary['balance']}" if "balance" in summary else ""))
    return lines


def markdown(summary: dict) -> str:
    lines = summary_lines(summary)
    return f"### {lines[0]}\n\n" + "".join(f"- {line}\n" for line in lines[1:]) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness merge", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shards", nargs="+", type=Path, help="the reports directory of each shard")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="where the merged reports go")
    parser.add_argument("--markdown", type=Path, default=None,
                        help="append the summary as Markdown to this file (e.g. $GITHUB_STEP_SUMMARY)")
    args = parser.parse_args(argv)
    try:
        summary = merge(args.shards, args.out)
    except (MergeError, OSError) as exc:
        print(f"merge: {exc}", file=sys.stderr)
        if args.markdown:
            _append(args.markdown, f"### merge refused\n\n{exc}\n")
        return 2
    print_lines([*(f"merge: {line}" for line in summary_lines(summary)),
                 f"merge: {len(args.shards)} shards -> {args.out}"])
    if args.markdown:
        _append(args.markdown, markdown(summary))
    return 0


def _append(path: Path, text: str) -> None:
    try:
        with open(path, "a") as handle:
            handle.write(text)
    except OSError as exc:
        print(f"merge: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
