"""Two runs side by side: which variants changed verdict, by family, dtype
and step: the ones that now fail, now pass, fail another way, or ran on one
side only.

    python -m harness verdicts OLD NEW [--family conv2d] [--examples 3] [--fail-on-new-failures]
    ./ptl verdicts OLD NEW ...                 # the same
    python3 -m harness.verdict_compare OLD NEW ...   # the same, with the standard library alone

OLD and NEW are a run's reports directory (`--reports-dir`, or a merge's
`--out`) or its results.csv. The use it is for: a branch or a fix of a
library against the run of the commit it started from, with the same
selection, target and --expect file. An expect file's patterns are wider
than its bugs (a family, a step), so a variant that passed before and now
fails the same way as the known ones is counted a known bug there; here it
is a new failure. Measured: the published library's branch 37f70e5 against
7bfc760, `--family conv2d` on qemu with 7bfc760's entries: the run's own
summary says 0 new failures and 0 fixed; this says 76 now fail (the FP32
conv2d WG through im2col on every kernel, down to 1x1 shapes) and 66 now
pass (the CHW im2col pad limit, conv2d FW with pads).

A verdict is `pass`, `fail <class>` (failed, error or xfailed: an expected
failure is still a failure, its class the failure's own) or `not run <why>`
(skipped: not_fit, absent, ...). Variants that only one side has are
counted, not compared.

Exit status: 0, or 1 with --fail-on-new-failures when a variant that passed
in OLD fails in NEW; 2 for input that cannot be compared (one line says why).
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from harness.reports import CSV_COLUMNS
from harness.stdout_lines import print_lines

NEEDED = ("test_id", "outcome", "failure_class", "family", "step", "dtype", "target", "message", "expectation")
FAILED = ("failed", "error", "xfailed")
CHANGES = (   # (key, heading), in the order printed
    ("now_failing", "now failing (passed in OLD)"),
    ("now_passing", "now passing (failed in OLD)"),
    ("fails_otherwise", "failing in both, in another class"),
    ("run_old_only", "run in OLD only (NEW did not run them)"),
    ("run_new_only", "run in NEW only (OLD did not run them)"),
)


class CompareError(ValueError):
    """Input that cannot be compared: the message names the file and what is wrong."""


@dataclass(frozen=True)
class Row:
    test_id: str
    group: str        # "family dtype step"
    verdict: str      # pass, fail <class>, not run <why>
    message: str      # the failure's own message, without an expectation's label
    target: str


def verdict_of(outcome: str, failure_class: str) -> str:
    if outcome in ("passed", "xpassed"):
        return "pass"
    if outcome in FAILED:
        return f"fail {failure_class or outcome}"
    return f"not run {failure_class or outcome}"


def failure_message(message: str, failure_class: str, expectation: str) -> str:
    """The failure's own message. An expected failure's holds the failure,
    then " | [known_bug] reason (entry)" (`expectation` is the label; runs
    before 2026-12-07 wrote the label first): that part is left out."""
    at = message.find(f"[{failure_class}] ") if failure_class else -1
    own = message[at:] if at >= 0 else message
    label = own.find(f" | [{expectation}] ") if expectation else -1
    return own[:label] if label >= 0 else own


def read_run(path: Path) -> dict[str, Row]:
    csv_path = path / "results.csv" if path.is_dir() else path
    try:
        with open(csv_path, newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
            if missing:
                raise CompareError(f"{csv_path}: not a run's results.csv (no column {', '.join(missing)}; "
                                   f"a run writes {', '.join(CSV_COLUMNS[:4])}, ...)")
            rows = {}
            for r in reader:
                if r["test_id"] in rows:
                    raise CompareError(f"{csv_path}: {r['test_id']} twice; give one run's results (shards: "
                                       f"`python -m harness merge` first)")
                rows[r["test_id"]] = Row(r["test_id"], f"{r['family']} {r['dtype']} {r['step']}",
                                         verdict_of(r["outcome"], r["failure_class"]),
                                         failure_message(r["message"], r["failure_class"], r["expectation"]),
                                         r["target"])
    except OSError as exc:
        raise CompareError(f"{csv_path}: {exc.strerror or exc}; give a run's reports directory or its "
                           f"results.csv") from None
    except (csv.Error, UnicodeDecodeError) as exc:
        raise CompareError(f"{csv_path}: not a readable results.csv ({exc})") from None
    return rows


def change_of(old: str, new: str) -> str | None:
    """The CHANGES key of a variant's OLD and NEW verdicts (None: unchanged)."""
    if old == new:
        return None
    ran_old, ran_new = not old.startswith("not run"), not new.startswith("not run")
    if ran_old != ran_new:
        return "run_old_only" if ran_old else "run_new_only"
    if not ran_old:
        return None            # skipped on both sides, for other reasons
    if old == "pass":
        return "now_failing"
    return "now_passing" if new == "pass" else "fails_otherwise"


def compare(old: dict[str, Row], new: dict[str, Row], families: set[str] | None = None) \
        -> tuple[dict[str, dict[str, list[tuple[Row, Row]]]], int, int, int]:
    """{change: {group: [(old row, new row)]}}, and how many variants both
    sides have, OLD only and NEW only (of the selected families)."""
    def selected(row: Row) -> bool:
        return families is None or row.group.split()[0] in families

    changes: dict[str, dict[str, list]] = {key: defaultdict(list) for key, _ in CHANGES}
    both = 0
    for test_id in sorted(old.keys() & new.keys()):
        a, b = old[test_id], new[test_id]
        if not selected(b):
            continue
        both += 1
        key = change_of(a.verdict, b.verdict)
        if key:
            changes[key][b.group].append((a, b))
    return (changes, both, sum(selected(r) for i, r in old.items() if i not in new),
            sum(selected(r) for i, r in new.items() if i not in old))


def report(changes, both: int, only_old: int, only_new: int, examples: int = 2) -> list[str]:
    lines = [f"{both:,} variants on both sides; only in OLD: {only_old:,}, only in NEW: {only_new:,} "
             f"(not compared)"]
    for key, heading in CHANGES:
        groups = changes[key]
        total = sum(map(len, groups.values()))
        lines.append(f"{heading}: {total:,}")
        for group, pairs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"  {group:<36} {len(pairs):>6}")
            for a, b in pairs[:examples]:
                shown = b if key != "now_passing" else a
                lines.append(f"      {b.test_id}: {a.verdict} -> {b.verdict}"
                             + (f"; {'OLD' if shown is a else 'NEW'}: {shown.message[:160]}" if shown.message else ""))
    return lines


def parse(argv: list[str]) -> argparse.Namespace:
    cmp = argparse.ArgumentParser(prog="python -m harness verdicts", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    cmp.add_argument("old", type=Path, help="the run before: its reports directory or results.csv")
    cmp.add_argument("new", type=Path, help="the run after")
    cmp.add_argument("--family", action="append", default=None,
                     help="only this family (results.csv's family column); may be repeated")
    cmp.add_argument("--examples", type=int, default=2, help="variants listed per group (default 2)")
    cmp.add_argument("--fail-on-new-failures", action="store_true",
                     help="exit 1 when a variant that passed in OLD fails in NEW")
    return cmp.parse_args(argv)


def run(args) -> tuple[list[str], int]:
    if args.examples < 0:
        raise CompareError(f"--examples {args.examples}: how many variants to list per group, 0 or more")
    old, new = read_run(args.old), read_run(args.new)
    targets = {side: sorted({r.target for r in rows.values()}) for side, rows in (("OLD", old), ("NEW", new))}
    if targets["OLD"] != targets["NEW"]:
        raise CompareError(f"OLD ran on {', '.join(targets['OLD']) or 'nothing'}, NEW on "
                           f"{', '.join(targets['NEW']) or 'nothing'}: verdicts of different targets do not "
                           f"compare (a target's memory layout hides or shows bugs)")
    families = set(args.family) if args.family else None
    known = {r.group.split()[0] for r in (*old.values(), *new.values())}
    if families and not families & known:
        raise CompareError(f"--family {', '.join(sorted(families))}: no variant of that family on either side")
    changes, both, only_old, only_new = compare(old, new, families)
    lines = [f"verdicts: {args.old} -> {args.new} ({', '.join(targets['NEW'])})",
             *report(changes, both, only_old, only_new, args.examples)]
    return lines, 1 if args.fail_on_new_failures and changes["now_failing"] else 0


def main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        lines, status = run(args)
    except CompareError as exc:
        print(f"verdicts: {exc}", file=sys.stderr)
        return 2
    print_lines(lines)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
