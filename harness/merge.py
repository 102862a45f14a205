"""python -m harness merge SHARD_DIR... --out DIR: one report from the
reports of the shards of one run (`--shard I/N`).

It refuses, with one line naming the shard and what is wrong: a directory
without the three reports, a report of an unsharded run, shards of
different targets, libraries or selections, a shard that is missing or
given twice, and test ids that occur twice or not at all. The merged
results.csv and junit.xml hold every shard's rows in test-id order; the
summary adds the outcomes up and lists the shards.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from golden.bundle import write_atomically
from harness.reports import CSV_COLUMNS, write_summary


class MergeError(ValueError):
    """Shards that cannot be one report: one line for the user."""


def _load(directory: Path) -> tuple[dict, list[dict], ET.Element]:
    try:
        summary = json.loads((directory / "summary.json").read_text())
        with open(directory / "results.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        suite = ET.parse(directory / "junit.xml").getroot()
    except (OSError, ValueError, ET.ParseError) as exc:
        raise MergeError(f"{directory}: not a shard's reports (summary.json, results.csv, junit.xml): {exc}") from None
    if not summary.get("shard"):
        raise MergeError(f"{directory}: the run was not sharded (no --shard I/N in its summary)")
    return summary, rows, suite


def merge(directories: list[Path], out: Path) -> dict:
    """Checks and joins the shards; returns the merged summary."""
    shards = [(d, *_load(d)) for d in directories]
    first = shards[0][1]
    for directory, summary, _, _ in shards[1:]:
        for key, what in (("target", "target"), ("library", "library digest")):
            if summary.get(key) != first.get(key):
                raise MergeError(f"{directory}: {what} {summary.get(key)} differs from {directories[0]}'s "
                                 f"{first.get(key)}")
        for key in ("count", "ids_digest", "ids_total"):
            if summary["shard"][key] != first["shard"][key]:
                raise MergeError(f"{directory}: a shard of another selection ({key} {summary['shard'][key]} vs "
                                 f"{first['shard'][key]})")
    indexes = Counter(summary["shard"]["index"] for _, summary, _, _ in shards)
    count = first["shard"]["count"]
    twice = sorted(i for i, n in indexes.items() if n > 1)
    missing = sorted(set(range(1, count + 1)) - set(indexes))
    if twice or missing:
        raise MergeError(f"shards of {count}: " + "; ".join(
            part for part in (f"given twice: {twice}" if twice else "", f"missing: {missing}" if missing else "")
            if part))
    rows = [row for _, _, shard_rows, _ in shards for row in shard_rows]
    ids = Counter(row["test_id"] for row in rows)
    repeated = sorted(i for i, n in ids.items() if n > 1)
    if repeated:
        raise MergeError(f"{len(repeated)} test ids occur in more than one shard, e.g. {repeated[0]}")
    if len(ids) != first["shard"]["ids_total"]:
        raise MergeError(f"the shards report {len(ids)} test ids; the selection had {first['shard']['ids_total']}")
    rows.sort(key=lambda row: row["test_id"])
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    cases = sorted((case for _, _, _, suite in shards for case in suite.iter("testcase")),
                   key=lambda case: case.get("name", ""))
    suite = ET.Element("testsuite", name="ptl", tests=str(len(cases)),
                       failures=str(sum(case.find("failure") is not None for case in cases)),
                       errors=str(sum(case.find("error") is not None for case in cases)),
                       skipped=str(sum(case.find("skipped") is not None for case in cases)))
    suite.extend(cases)
    outcomes: Counter = Counter()
    for _, summary, _, _ in shards:
        outcomes.update(summary.get("outcomes", {}))
    merged = {"target": first.get("target"), "library": first.get("library"), "outcomes": dict(outcomes),
              "shards": [{"index": s["shard"]["index"], "directory": str(d), "seconds": s.get("seconds")}
                         for d, s, _, _ in sorted(shards, key=lambda x: x[1]["shard"]["index"])],
              "shard": None}
    write_atomically(out / "results.csv", buffer.getvalue().encode())
    write_atomically(out / "junit.xml", ET.tostring(suite, encoding="utf-8", xml_declaration=True))
    write_summary(merged, out / "summary.json")
    return merged


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness merge", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shards", nargs="+", type=Path, help="the reports directory of each shard")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="where the merged reports go")
    args = parser.parse_args(argv)
    try:
        merged = merge(args.shards, args.out)
    except (MergeError, OSError) as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 2
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(merged["outcomes"].items()))
    print(f"merge: {len(args.shards)} shards -> {args.out} ({outcomes})")
    return 0
