"""The performance gate: a variant whose counts grow beyond a committed
baseline fails as `perf`.

QEMU's instruction counts are exact and deterministic, so the baseline of a
target (reports/baseline/<target>.csv: test id, unit, latency, work per
variant) can gate to the instruction: the default threshold is 0. A variant
with no baseline is reported as new, not failed; one whose counts shrink is
reported as improved. `python -m harness baseline update` rewrites a
baseline from a run's results.csv and prints what changed.
"""
from __future__ import annotations

import argparse
import csv
import io
import sys
from dataclasses import dataclass
from pathlib import Path

from golden.bundle import write_atomically

ROOT = Path(__file__).resolve().parent.parent
BASELINE_DIR = ROOT / "reports" / "baseline"
COLUMNS = ("test_id", "unit", "latency", "work")


class BaselineError(ValueError):
    """A baseline that cannot be read or written: one line for the user."""


@dataclass(frozen=True)
class Counts:
    unit: str
    latency: int
    work: int


def baseline_path(target: str) -> Path:
    return BASELINE_DIR / f"{target}.csv"


def read_counts(path: Path, passed_only: bool = False) -> dict[str, Counts]:
    """Counts by test id from a baseline or a results.csv (rows without
    counts are left out; from a results.csv, with passed_only, failed rows too)."""
    out = {}
    try:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                if passed_only and row.get("outcome", "passed") != "passed":
                    continue
                if row.get("latency") and row.get("work"):
                    out[row["test_id"]] = Counts(row["unit"], int(row["latency"]), int(row["work"]))
    except (OSError, KeyError, ValueError) as exc:
        raise BaselineError(f"{path}: not a readable baseline or results.csv ({exc})") from None
    return out


def judge(measured: Counts, base: Counts | None, threshold: float) -> tuple[str, str]:
    """(verdict, text): verdict is new, same, improved or regressed; text says
    by how much (empty for new and same)."""
    if base is None or base.unit != measured.unit:
        return "new", ""
    grown = [(name, now, was) for name, now, was in (("latency", measured.latency, base.latency),
                                                      ("work", measured.work, base.work))
             if now > was * (1 + threshold)]
    if grown:
        return "regressed", "; ".join(f"{name} {now} {measured.unit} > baseline {was} (+{100 * (now - was) / was:.2f}%)"
                                      if was else f"{name} {now} {measured.unit} > baseline 0"
                                      for name, now, was in grown)
    if measured.latency < base.latency or measured.work < base.work:
        return "improved", f"latency {base.latency} -> {measured.latency}, work {base.work} -> {measured.work}"
    return "same", ""


def write_baseline(counts: dict[str, Counts], path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for test_id in sorted(counts):
        c = counts[test_id]
        writer.writerow((test_id, c.unit, c.latency, c.work))
    write_atomically(path, buffer.getvalue().encode())


def update(results: Path, target: str, out: Path | None = None) -> list[str]:
    """Rewrites the target's baseline from a run's results.csv; returns the
    lines that say what changed."""
    path = out or baseline_path(target)
    try:
        with open(results, newline="") as handle:
            targets = {row.get("target") for row in csv.DictReader(handle)}
    except OSError as exc:
        raise BaselineError(f"{results}: {exc.strerror or exc}") from None
    if targets - {target}:
        raise BaselineError(f"{results} holds runs on {', '.join(sorted(t or '?' for t in targets))}, "
                            f"not only {target}")
    new = read_counts(results, passed_only=True)
    if not new:
        raise BaselineError(f"{results} has no passed variant with counts")
    old = read_counts(path) if path.exists() else {}
    changed = sorted(i for i in new.keys() & old.keys() if new[i] != old[i])
    lines = [f"baseline {path}: {len(new)} variants; {len(new.keys() - old.keys())} new, "
             f"{len(old.keys() - new.keys())} gone, {len(changed)} changed"]
    lines += [f"  {i}: latency {old[i].latency} -> {new[i].latency}, work {old[i].work} -> {new[i].work}"
              for i in changed[:20]]
    if len(changed) > 20:
        lines.append(f"  ... and {len(changed) - 20} more")
    write_baseline(new, path)
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness baseline", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("update", help="rewrite a target's baseline from a run's results.csv")
    up.add_argument("--from", dest="results", type=Path, default=ROOT / "reports" / "results.csv")
    up.add_argument("--target", default="qemu")
    up.add_argument("--out", type=Path, default=None, help="default reports/baseline/<target>.csv")
    args = parser.parse_args(argv)
    try:
        lines = update(args.results, args.target, args.out)
    except BaselineError as exc:
        print(f"baseline: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0
