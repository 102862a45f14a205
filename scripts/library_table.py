#!/usr/bin/env python3
"""The README's table of a library run: family x dtype, what built and what
happened, from a run's results.csv (run with --expect, so that expected
failures are told from new ones).

    python scripts/library_table.py reports/results.csv

Columns: variants, passed, known bugs and unsupported (expected by the
--expect file), not_fit (cases that do not apply: another 16-bit format,
L1), absent (lib_c's own kernels, which the library does not have: not
run), new failures, and for a family that did not build, the first line of
why.
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

COLUMNS = ("variants", "passed", "known_bug", "unsupported", "not_fit", "absent", "new")


def tally(rows: list[dict]) -> dict[tuple[str, str], dict]:
    table: dict[tuple[str, str], dict] = defaultdict(lambda: dict.fromkeys(COLUMNS, 0) | {"build": ""})
    for row in rows:
        cell = table[row["family"], row["dtype"]]
        cell["variants"] += 1
        expectation = row.get("expectation") or ""
        if row["outcome"] == "passed":
            cell["passed"] += 1
        elif expectation in ("known_bug", "unsupported"):
            cell[expectation] += 1
        elif row["failure_class"] in ("not_fit", "absent"):
            cell[row["failure_class"]] += 1
        else:
            cell["new"] += 1
        if row["failure_class"] == "build" and not cell["build"]:
            cell["build"] = row["message"].split(" | ")[1][:90] if " | " in row["message"] else row["message"][:90]
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="a run's results.csv")
    args = parser.parse_args(argv)
    try:
        with open(args.results, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        print(f"library_table: cannot read {args.results}: {exc.strerror}", file=sys.stderr)
        return 2
    if not rows or "family" not in rows[0]:
        print(f"library_table: {args.results} has no result rows (is it a ptl results.csv?)", file=sys.stderr)
        return 2
    table = tally(rows)
    print("| family | dtype | " + " | ".join(COLUMNS) + " | not built because |")
    print("|---|---|" + "---:|" * len(COLUMNS) + "---|")
    for (family, dtype), cell in sorted(table.items()):
        print(f"| {family} | {dtype} | " + " | ".join(str(cell[c]) for c in COLUMNS) + f" | {cell['build']} |")
    totals = {c: sum(cell[c] for cell in table.values()) for c in COLUMNS}
    print("| **all** | | " + " | ".join(f"**{totals[c]}**" for c in COLUMNS) + " | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
