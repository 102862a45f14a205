"""Two baselines side by side: which variants got slower between two
libraries (or two builds of one), by family and by kernel, worst first.

    python -m harness baseline compare OLD.txt NEW.txt [--cores 1,8] [--family matmul]
                                       [--by family|kernel] [--worst 20] [--fail-on-slower]

Each side is a baseline file, as `python -m harness baseline update --from
RUN/results.csv --out F.txt` writes it from a run; the run of another
library is `python -m harness regress --trainlib PATH --reports-dir RUN`.
A variant is slower, the same or faster by the gate's own rule
(perf_gate.judge: its latency or its work grew beyond --threshold, default
0), so that "nothing slower" here is what the gate would say with OLD as its
baseline. Variants that only one side has are counted, not compared. Two
baselines of different units or toolchains do not compare: refused, unless
--foreign-toolchain report.

Exit status: 0, or 1 with --fail-on-slower when a variant of the selection
is slower; 2 for input that cannot be compared (one line says why).
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from harness.perf_gate import BaselineError, Counts, judge, read_baseline, read_toolchain, split_id, \
    toolchain_differences
from harness.stdout_lines import print_lines

VERDICT_OF = {"regressed": "slower", "same": "same", "improved": "faster"}
COLUMNS = ("slower", "same", "faster")


@dataclass(frozen=True)
class Variant:
    test_id: str
    family: str
    kernel: str
    cores: int
    old: Counts
    new: Counts
    verdict: str          # slower, same or faster

    @property
    def growth(self) -> float:
        """The larger relative growth of latency and work (negative: shrank)."""
        return max((self.new.latency - self.old.latency) / max(self.old.latency, 1),
                   (self.new.work - self.old.work) / max(self.old.work, 1))


@dataclass(frozen=True)
class Comparison:
    variants: list[Variant]   # the selection's variants that both sides have
    only_old: int
    only_new: int


def parse_variant(test_id: str) -> tuple[str, str, int]:
    """(family, kernel, cores) of a variant id <family>-...-<kernel>-c<cores>."""
    case, name = split_id(test_id)
    kernel, _, cores = name.rpartition("-c")
    return case.split("-", 1)[0], kernel, int(cores)


def compare(old: dict[str, Counts], new: dict[str, Counts], threshold: float = 0.0,
            cores: set[int] | None = None, families: set[str] | None = None) -> Comparison:
    """The variants of the selection (core counts, families; None: all)
    that both sides have, each with its verdict."""
    def selected(test_id: str) -> bool:
        family, _, n = parse_variant(test_id)
        return (cores is None or n in cores) and (families is None or family in families)

    unknown = sorted(families - {parse_variant(test_id)[0] for test_id in old.keys() | new.keys()}) if families else []
    if unknown:
        raise BaselineError(f"--family {', '.join(unknown)}: no variant of that family in either baseline")
    units = {c.unit for c in old.values()} | {c.unit for c in new.values()}
    if len(units) > 1:
        raise BaselineError(f"the two baselines count in different units ({', '.join(sorted(units))}): "
                            f"they do not compare")
    variants = []
    for test_id in sorted(old.keys() & new.keys()):
        if selected(test_id):
            family, kernel, n = parse_variant(test_id)
            verdict = VERDICT_OF[judge(new[test_id], old[test_id], threshold)[0]]
            variants.append(Variant(test_id, family, kernel, n, old[test_id], new[test_id], verdict))
    return Comparison(variants, sum(map(selected, old.keys() - new.keys())),
                      sum(map(selected, new.keys() - old.keys())))


def _change(old: int, new: int) -> str:
    return f"{100 * (new - old) / old:+.2f}%" if old else "n/a"


def report(result: Comparison, by: str = "family", worst: int = 20) -> list[str]:
    """The comparison for a terminal: totals, a table by family or kernel,
    and the slower variants, the largest relative growth first."""
    v = result.variants
    count = Counter(x.verdict for x in v)
    old_sum, new_sum = sum(x.old.latency for x in v), sum(x.new.latency for x in v)
    lines = [f"{len(v):,} variants on both sides: " + ", ".join(f"{count[c]:,} {c}" for c in COLUMNS)
             + (f"; latency summed {old_sum:,} -> {new_sum:,} ({_change(old_sum, new_sum)})" if v else ""),
             f"only in the old baseline: {result.only_old:,}; only in the new: {result.only_new:,} (not compared)"]
    if not v:
        return lines
    groups: dict[str, list[Variant]] = defaultdict(list)
    for x in v:
        groups[getattr(x, by)].append(x)
    width = max(len(by), *map(len, groups))
    changed = {name: members for name, members in groups.items() if any(x.verdict != "same" for x in members)}
    lines.append(f"{by:<{width}}  {'slower':>7} {'same':>7} {'faster':>7}  latency summed"
                 + (f"  ({len(groups) - len(changed)} more {by} names: all the same)" if len(changed) < len(groups)
                    else ""))
    for name, members in sorted(changed.items(), key=lambda kv: (-sum(x.verdict == "slower" for x in kv[1]), kv[0])):
        c = Counter(x.verdict for x in members)
        change = _change(sum(x.old.latency for x in members), sum(x.new.latency for x in members))
        lines.append(f"{name:<{width}}  {c['slower']:>7} {c['same']:>7} {c['faster']:>7}  {change}")
    slower = sorted((x for x in v if x.verdict == "slower"), key=lambda x: (-x.growth, x.test_id))
    if slower:
        lines.append(f"slower, the largest growth first ({min(worst, len(slower))} of {len(slower)}):")
        lines += [f"  {100 * x.growth:+.2f}%  latency {x.old.latency} -> {x.new.latency}, "
                  f"work {x.old.work} -> {x.new.work}  {x.test_id}" for x in slower[:worst]]
    return lines


def _cores(text: str) -> set[int]:
    try:
        cores = {int(n) for n in text.split(",")}
    except ValueError:
        raise BaselineError(f"--cores {text}: a comma-separated list of core counts, e.g. 1,8") from None
    if min(cores) < 1:
        raise BaselineError(f"--cores {text}: core counts are 1 or more")
    return cores


def parse(argv: list[str]) -> argparse.Namespace:
    cmp = argparse.ArgumentParser(prog="python -m harness baseline compare", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    cmp.add_argument("old", type=Path, help="the baseline before (e.g. of the library a change started from)")
    cmp.add_argument("new", type=Path, help="the baseline after")
    cmp.add_argument("--cores", default=None, help="only these core counts, e.g. 1,8")
    cmp.add_argument("--family", action="append", default=None,
                     help="only this family (the case id's first part); may be repeated")
    cmp.add_argument("--by", choices=("family", "kernel"), default="family", help="the table's rows")
    cmp.add_argument("--worst", type=int, default=20, help="how many slower variants to list")
    cmp.add_argument("--threshold", type=float, default=0.0, help="relative growth that still counts as the same")
    cmp.add_argument("--foreign-toolchain", choices=("refuse", "report"), default="refuse",
                     help="baselines made with different toolchains: refuse (default), or compare anyway")
    cmp.add_argument("--fail-on-slower", action="store_true", help="exit 1 when a variant is slower")
    return cmp.parse_args(argv)


def run(args) -> tuple[list[str], int]:
    """(lines, exit status) of `baseline compare`; BaselineError for input
    that cannot be compared."""
    recorded = {path: read_toolchain(path) for path in (args.old, args.new)}
    missing = [f"{path} records no toolchain" for path, toolchain in recorded.items() if toolchain is None]
    differs = "; ".join(missing) or toolchain_differences(recorded[args.old], recorded[args.new])
    if differs and args.foreign_toolchain == "refuse":
        raise BaselineError(f"{args.old} and {args.new} were made with different toolchains ({differs}); counts of "
                            f"different code do not compare (--foreign-toolchain report compares them anyway)")
    if args.worst < 0:
        raise BaselineError(f"--worst {args.worst}: how many slower variants to list, 0 or more")
    result = compare(read_baseline(args.old), read_baseline(args.new), args.threshold,
                     _cores(args.cores) if args.cores else None, set(args.family) if args.family else None)
    lines = [f"baseline compare: {args.old} -> {args.new}"
             + (f" (toolchains differ: {differs})" if differs else ""),
             *report(result, args.by, args.worst)]
    slower = any(x.verdict == "slower" for x in result.variants)
    return lines, 1 if args.fail_on_slower and slower else 0


def main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        lines, status = run(args)
    except BaselineError as exc:
        print(f"baseline: {exc}", file=sys.stderr)
        return 2
    print_lines(lines)
    return status
