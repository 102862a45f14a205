"""The performance gate: a variant whose counts grow beyond a committed
baseline fails as `perf`.

QEMU's instruction counts are exact and deterministic, so the baseline of a
target (reports/baseline/<target>.txt) can gate to the instruction: the
default threshold is 0. A variant with no baseline is reported as new, not
failed; one whose counts shrink is reported as improved.

    python -m harness baseline update [--from results.csv]   rewrite it from a run
    python -m harness baseline update --run                  run the regression, then rewrite it
    python -m harness baseline compare OLD.txt NEW.txt       what got slower between two (harness/baseline_compare.py)

The baseline is one line per case (the variants that share one runner
invocation), sorted, so a changed kernel changes few lines:

    # ptl performance baseline: target qemu, unit instructions
    # toolchain: clang=14.0.6 clang-19=19.1.7 picolibc=1.8 qemu=7.2 riscv64-unknown-elf-gcc=12.2.0
    <case id> <kernel>-c<cores>=<latency>[/<work>] ...

with /<work> left out where it equals the latency (one core). The toolchain
line is the fingerprint of the compilers, C library and emulator that made
the counts (Target.toolchain_fingerprint): the gate refuses a baseline of
another one, since counts of different code do not compare
(--perf-gate-foreign-toolchain=report reports the changes without failing).

`baseline update` takes a whole run only: an interrupted one, a shard, a -k
or -m selection or a subset of the suite is refused unless --partial asks to
merge just its variants into the existing baseline, touching nothing else.
A variant that failed only the gate (class perf) is updated like a passed
one: its results were right, and its counts are the new ones.
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from harness.files import write_atomically
from harness import sharding, team_order
from harness.reports import incomplete
from harness.stdout_lines import print_lines

ROOT = Path(__file__).resolve().parent.parent
BASELINE_DIR = ROOT / "reports" / "baseline"
HEADER = "# ptl performance baseline: target {target}, unit {unit}"
TOOLCHAIN = "# toolchain:"
FOREIGN_CHOICES = ("refuse", "report")    # --perf-gate-foreign-toolchain


class BaselineError(ValueError):
    """A baseline that cannot be read or written: one line for the user."""


@dataclass(frozen=True)
class Counts:
    unit: str
    latency: int
    work: int


def baseline_path(target: str) -> Path:
    return BASELINE_DIR / f"{target}.txt"


def split_id(test_id: str) -> tuple[str, str]:
    """A variant id -> (case id, '<kernel>-c<cores>')."""
    case, kernel, cores = test_id.rsplit("-", 2)
    return case, f"{kernel}-{cores}"


def read_baseline(path: Path) -> dict[str, Counts]:
    """Counts by variant id from a baseline file."""
    out = {}
    unit = None
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise BaselineError(f"{path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if line.startswith("# ptl performance baseline:"):
            unit = line.rsplit("unit ", 1)[-1].strip()
            continue
        if not line.strip() or line.startswith("#"):
            continue
        if unit is None:
            raise BaselineError(f"{path}:{number}: counts before the header line ({HEADER.format(target='T', unit='U')})")
        case, *variants = line.split()
        try:
            for variant in variants:
                name, counts = variant.rsplit("=", 1)
                latency, _, work = counts.partition("/")
                out[f"{case}-{name}"] = Counts(unit, int(latency), int(work or latency))
        except ValueError:
            raise BaselineError(f"{path}:{number}: {variant!r} is not <kernel>-c<cores>=<latency>[/<work>]") from None
    return out


def format_toolchain(toolchain: dict[str, str]) -> str:
    return f"{TOOLCHAIN} " + " ".join(f"{tool}={version}" for tool, version in sorted(toolchain.items()))


def read_toolchain(path: Path) -> dict[str, str] | None:
    """The fingerprint a baseline records, or None when it records none."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise BaselineError(f"{path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if line.startswith(TOOLCHAIN):
            try:
                return dict(item.split("=", 1) for item in line[len(TOOLCHAIN):].split())
            except ValueError:
                raise BaselineError(f"{path}:{number}: the toolchain line is not `{TOOLCHAIN} tool=version ...`") \
                    from None
        if line.strip() and not line.startswith("#"):
            break
    return None


def toolchain_differences(recorded: dict[str, str] | None, here: dict[str, str]) -> str | None:
    """What differs between a baseline's fingerprint and this run's, or None."""
    if recorded is None:
        return "it records no toolchain (rewrite it with `python -m harness baseline update`)"
    changed = [f"{tool} {recorded.get(tool, 'absent')} there, {here.get(tool, 'absent')} here"
               for tool in sorted(recorded.keys() | here.keys()) if recorded.get(tool) != here.get(tool)]
    return "; ".join(changed) or None


def gated(row: dict) -> bool:
    """A variant whose results were right and whose counts only the gate
    refused: its counts are as good as a passed one's."""
    return row["outcome"] == "failed" and row.get("failure_class") == "perf"


def read_results(path: Path) -> tuple[dict[str, Counts], set[str], int]:
    """From a run's results.csv: the counts of its passed variants (and of
    those the gate failed), the targets it ran on, and how many variants did
    not pass."""
    counts, targets, not_passed = {}, set(), 0
    try:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                targets.add(row.get("target") or "?")
                if row["outcome"] != "passed" and not gated(row):
                    not_passed += row["outcome"] != "skipped"
                    continue
                if row.get("latency") and row.get("work"):
                    counts[row["test_id"]] = Counts(row["unit"], int(row["latency"]), int(row["work"]))
    except (OSError, KeyError, ValueError) as exc:
        raise BaselineError(f"{path}: not a readable results.csv ({exc})") from None
    return counts, targets, not_passed


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


VERDICTS = ("regressed", "improved", "new", "same")
LISTED = 50   # ids per verdict kept in summary.json (results.csv has them all, column perf)


def summarise(verdicts: dict[str, str | None], baseline: str, threshold: float, baseline_digest: str | None = None,
              foreign_toolchain: str | None = None) -> dict:
    """The gate's part of summary.json, from each variant's verdict (None:
    not judged, e.g. failed before the gate). foreign_toolchain: how the
    baseline's toolchain differs, when the run only reports."""
    by_kind: dict[str, list[str]] = {kind: [] for kind in VERDICTS}
    for test_id, verdict in sorted(verdicts.items()):
        if verdict:
            by_kind[verdict].append(test_id)
    out: dict = {"baseline": baseline, "threshold": threshold, "baseline_digest": baseline_digest,
                 "foreign_toolchain": foreign_toolchain,
                 "counts": {kind: len(ids) for kind, ids in by_kind.items()}}
    out.update({kind: by_kind[kind][:LISTED] for kind in ("regressed", "improved", "new")})
    return out


def summary_lines(perf: dict | None, listed: int = 10) -> list[str]:
    """The gate's verdict for a terminal or a job summary."""
    if not perf:
        return []
    counts = perf["counts"]
    lines = [f"perf gate (baseline {perf['baseline']}, threshold {perf['threshold']:g}): "
             + ", ".join(f"{counts.get(kind, 0)} {kind}" for kind in VERDICTS)]
    if perf.get("foreign_toolchain"):
        lines.append(f"perf gate REPORT ONLY, nothing failed: the baseline's toolchain differs "
                     f"({perf['foreign_toolchain']})")
    for kind in ("regressed", "improved"):
        lines += [f"perf {kind}: {test_id}" for test_id in perf.get(kind, [])[:listed]]
        if counts.get(kind, 0) > listed:
            lines.append(f"perf {kind}: ... {counts[kind] - listed} more (results.csv, column perf)")
    if counts.get("new"):
        lines.append(f"perf new (no baseline, not gated): {counts['new']} variants, e.g. {perf['new'][0]}; "
                     f"`python -m harness baseline update` records them")
    return lines


def format_baseline(counts: dict[str, Counts], target: str, toolchain: dict[str, str] | None = None) -> str:
    units = {c.unit for c in counts.values()}
    if len(units) != 1:
        raise BaselineError(f"one baseline holds one unit; the run has {', '.join(sorted(units))}")
    by_case: dict[str, list[str]] = defaultdict(list)
    for test_id in sorted(counts):
        case, name = split_id(test_id)
        c = counts[test_id]
        by_case[case].append(f"{name}={c.latency}" if c.latency == c.work else f"{name}={c.latency}/{c.work}")
    lines = [HEADER.format(target=target, unit=units.pop()),
             *([format_toolchain(toolchain)] if toolchain is not None else []),
             "# <case id> <kernel>-c<cores>=<latency>[/<work>]: python -m harness baseline update"]
    lines += [f"{case} {' '.join(variants)}" for case, variants in sorted(by_case.items())]
    return "\n".join(lines) + "\n"


def whole_run(results: Path) -> tuple[dict, list[str]]:
    """The run's summary.json beside its results.csv, and why the run is not
    a whole one (empty when it is)."""
    path = results.parent / "summary.json"
    try:
        summary = json.loads(path.read_text())
        if not isinstance(summary, dict):
            raise ValueError("not a JSON object")
    except OSError:
        raise BaselineError(f"{results}: no readable summary.json beside it, so neither whether the run was whole "
                            f"nor its toolchain is known; update from a run's reports directory") from None
    except ValueError as exc:
        raise BaselineError(f"{path}: not a run's summary ({exc})") from None
    reasons = [reason for reason in (incomplete(summary),) if reason]
    reasons += [f"shard {summary['shard']['index']}/{summary['shard']['count']}"] if summary.get("shard") else []
    reasons += list(summary.get("partial") or [])
    return summary, reasons


def update(results: Path, target: str, out: Path | None = None, partial: bool = False) -> list[str]:
    """Rewrites the target's baseline from a whole run's results.csv (or,
    with partial, merges the run's variants into it); returns the lines that
    say what changed."""
    path = out or baseline_path(target)
    if path.suffix != ".txt":
        raise BaselineError(f"--out {path}: a baseline is a .txt file (its case seconds go beside it, .seconds)")
    summary, reasons = whole_run(results)
    if refusal := team_order.timing_refusal(summary.get("team_order", "free")):
        raise BaselineError(f"{results}: {refusal}, and run again")
    if reasons and not partial:
        raise BaselineError(f"{results} is not a whole run ({'; '.join(reasons)}): nothing changed; add --partial "
                            f"to update only the variants it holds, or update from a whole run")
    new, targets, not_passed = read_results(results)
    if targets - {target}:
        raise BaselineError(f"{results} holds runs on {', '.join(sorted(targets))}, not only {target}")
    if not new:
        raise BaselineError(f"{results} has no passed variant with counts")
    toolchain = summary.get("toolchain")
    if not isinstance(toolchain, dict):
        raise BaselineError(f"{results.parent / 'summary.json'} records no toolchain; re-run with this checkout")
    old = read_baseline(path) if path.exists() else {}
    if partial and old:
        differs = toolchain_differences(read_toolchain(path), toolchain)
        if differs:
            raise BaselineError(f"--partial: {path} was made with another toolchain ({differs}); merging would mix "
                                f"counts of two toolchains: update from a whole run instead")
    changed = sorted(i for i in new.keys() & old.keys() if new[i] != old[i])
    slower = [i for i in changed if judge(new[i], old[i], 0.0)[0] == "regressed"]
    written = {**old, **new} if partial else new
    gone = [] if partial else sorted(old.keys() - new.keys())
    lines = [f"baseline {path}: {len(written)} variants; {len(new.keys() - old.keys())} new, "
             f"{len(gone)} gone, {len(changed)} changed ({len(slower)} slower, {len(changed) - len(slower)} faster)"
             + (f"; --partial: {len(new)} variants of {results} merged, {len(old.keys() - new.keys())} others "
                f"kept as they were" if partial else "")]
    lines += [f"  {i}: latency {old[i].latency} -> {new[i].latency}, work {old[i].work} -> {new[i].work}"
              for i in changed[:20]]
    if len(changed) > 20:
        lines.append(f"  ... and {len(changed) - 20} more")
    if not_passed:
        lines.append(f"  note: {not_passed} variants of {results} did not pass and have no baseline")
    seconds = sharding.measured_costs(results)
    seconds_path = path.with_suffix(".seconds")
    if partial and seconds_path.exists():
        seconds = {**sharding.read_costs(seconds_path), **seconds}
    write_atomically(path, format_baseline(written, target, toolchain).encode())
    sharding.write_costs(seconds, target, seconds_path)
    lines.append(f"case seconds {seconds_path}: {len(seconds)} cases, {sum(seconds.values()):.0f} s "
                 f"in all (what --shard balances)")
    return lines


def run_regression(target: str, workers: str, extra: list[str]) -> Path:
    """The whole regression of lib_c on the target, in a scratch reports dir;
    returns its results.csv."""
    reports = Path(tempfile.mkdtemp(prefix="ptl-baseline-"))
    subprocess.run([sys.executable, "-m", "harness", "regress", "--target", target, "-n", workers,
                    "--reports-dir", str(reports), *extra], cwd=ROOT)
    if not (reports / "results.csv").exists():
        raise BaselineError(f"the regression on {target} wrote no results.csv (see its output above)")
    return reports / "results.csv"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness baseline", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("update", help="rewrite a target's baseline from a run's results.csv")
    up.add_argument("--from", dest="results", type=Path, default=ROOT / "reports" / "results.csv")
    up.add_argument("--run", action="store_true",
                    help="first run the whole regression on the target (extra args go to pytest)")
    up.add_argument("-n", dest="workers", default="auto", help="pytest-xdist workers for --run")
    up.add_argument("--target", default="qemu")
    up.add_argument("--out", type=Path, default=None, help="default reports/baseline/<target>.txt")
    up.add_argument("--partial", action="store_true",
                    help="the run is not a whole one (-k, a shard, interrupted): merge only its variants into the "
                         "existing baseline and leave every other line as it is")
    args, extra = parser.parse_known_args(argv)
    if extra and not args.run:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    results = args.results
    try:
        if args.run:
            results = run_regression(args.target, args.workers, extra)
        lines = update(results, args.target, args.out, args.partial)
    except (BaselineError, sharding.ShardError) as exc:
        print(f"baseline: {exc}", file=sys.stderr)
        return 2
    finally:
        if args.run:
            shutil.rmtree(results.parent, ignore_errors=True)
    print_lines(lines)
    return 0


def add_options(group) -> None:
    """The gate's options, in the plugin's option group."""
    group.addoption("--perf-gate", action="store_true", default=None,
                    help="fail variants whose counts grow beyond the committed baseline (harness/perf_gate.py); "
                         "default: PTL_PERF_GATE (1/0, true/false, yes/no, on/off)")
    group.addoption("--perf-threshold", default=None,
                    help="relative growth the gate allows (default 0: counts are exact on qemu)")
    group.addoption("--perf-baseline", default=None, metavar="FILE",
                    help="default reports/baseline/<target>.txt")
    group.addoption("--perf-gate-foreign-toolchain", default="refuse", choices=FOREIGN_CHOICES,
                    help="a baseline recorded with another toolchain fingerprint: refuse (default, a usage error), "
                         "or report its changes without failing any variant")
