"""Splitting one regression over machines: `--shard I/N` runs a
deterministic share of the selected variants, balanced by the recorded cost
of each case, and `python -m harness merge` joins the shards' reports.

A case (all the variants of one shape, dtype, step and options) is the unit:
its variants share one runner invocation, so they stay on one shard. Cases
go to shards by longest processing time first: the costliest case to the
least loaded shard, ties broken by case id, so every shard computes the
same assignment from the same selection and the same costs.

What a case costs, in seconds (`--shard-costs FILE`):
  - by default, the committed record reports/baseline/<target>.seconds (else
    qemu's): the measured seconds of every case of a whole run, written by
    `python -m harness baseline update` beside the performance baseline.
    Being committed, it is the same on every machine, so every shard splits
    alike;
  - or a previous run's results.csv (its variants' durations added up per
    case), given to every shard alike.
A case with no record costs the median of the recorded cases that are
selected; with no record at all, every case costs the same.
Not used: the results database (.cache/ptl/results.sqlite) is local to each
machine, so shards on two machines could split differently; and the exact
work counts of the performance baseline predict a case's seconds poorly
(R^2 = 0.01 over the 4,167 cases of a whole qemu run: the costliest, the
chained training runs, take 20-30 s for 2 variants and 4-8 M instructions,
while a 54-variant 64^3 matmul case of 744 M instructions takes 4 s).
"""
from __future__ import annotations

import csv
import hashlib
import heapq
import os
import statistics
from collections import defaultdict
from pathlib import Path

from harness.files import write_atomically

BASELINE_DIR = Path(__file__).resolve().parent.parent / "reports" / "baseline"
COSTS_HEADER = "# ptl case seconds (--shard balances by them):"

# Written beside a shard's reports: its spec, the selection's identity, the
# costs' identity, and the test ids of its share.
SHARD_FILE = "shard.json"


class ShardError(ValueError):
    """A malformed --shard or costs file: one line for the user."""


def parse_shard(text: str) -> tuple[int, int]:
    """'I/N' -> (I, N), 1 <= I <= N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ShardError(f"--shard wants I/N, e.g. 2/4; got {text!r}") from None
    if not 1 <= index <= count:
        raise ShardError(f"--shard {text}: I must be between 1 and N")
    return index, count


def case_of(test_id: str) -> str:
    """The case id of a variant id (`<case>-<kernel>-c<cores>`)."""
    return test_id.rsplit("-", 2)[0]


def measured_costs(path: Path) -> dict[str, float]:
    """Seconds per case from a results.csv (the variants' durations added up)."""
    costs: dict[str, float] = defaultdict(float)
    try:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                costs[case_of(row["test_id"])] += float(row.get("duration_s") or 0.0)
    except (OSError, KeyError, ValueError) as exc:
        raise ShardError(f"{path}: not a readable results.csv ({exc})") from None
    return dict(costs)


def costs_path(target: str) -> Path:
    return BASELINE_DIR / f"{target}.seconds"


def default_costs_file(target: str) -> Path | None:
    for name in (target, "qemu"):
        if costs_path(name).exists():
            return costs_path(name)
    return None


def write_costs(costs: dict[str, float], target: str, path: Path) -> None:
    """The record of case seconds, two significant digits (a re-run's noise
    changes fewer lines)."""
    lines = [f"{COSTS_HEADER} target {target}; python -m harness baseline update writes it",
             *(f"{case} {max(seconds, 0.001):.2g}" for case, seconds in sorted(costs.items()))]
    write_atomically(path, ("\n".join(lines) + "\n").encode())


def read_costs(path: Path) -> dict[str, float]:
    costs = {}
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ShardError(f"--shard-costs {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            case, seconds = line.split()
            costs[case] = float(seconds)
        except ValueError:
            raise ShardError(f"{path}:{number}: not '<case id> <seconds>': {line[:80]!r}") from None
    return costs


def load_costs(path: Path | None) -> dict[str, float]:
    """The costs of a --shard-costs file: a results.csv or a record of case seconds."""
    if path is None:
        return {}
    try:
        with open(path) as handle:
            first = handle.readline()
    except OSError as exc:
        raise ShardError(f"--shard-costs {path}: {exc.strerror or exc}") from None
    return measured_costs(path) if first.startswith("test_id,") else read_costs(path)


def case_costs(cases: dict[str, int], recorded: dict[str, float]) -> dict[str, float]:
    """The cost of every selected case (its variant count given), with the
    fallback for cases without a record."""
    known = [recorded[c] for c in cases if c in recorded]
    default = statistics.median(known) if known else 1.0
    return {c: recorded.get(c, default) for c in cases}


def assign(costs: dict[str, float], n: int) -> dict[str, int]:
    """Shard (1..n) of each case: longest processing time first."""
    loads = [(0.0, shard) for shard in range(1, n + 1)]
    heapq.heapify(loads)
    out = {}
    for case in sorted(costs, key=lambda c: (-costs[c], c)):
        load, shard = heapq.heappop(loads)
        out[case] = shard
        heapq.heappush(loads, (load + costs[case], shard))
    return out


def ids_digest(ids) -> str:
    """The identity of a set of test ids: every shard of one run records the
    same for the whole selection."""
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


def costs_digest(costs: dict[str, float]) -> str:
    """The identity of the costs a split used: shards split with other costs
    do not fit together."""
    return hashlib.sha256("\n".join(f"{c} {costs[c]:.6g}" for c in sorted(costs)).encode()).hexdigest()


def add_options(group) -> None:
    """--shard and --shard-costs, in the plugin's option group."""
    group.addoption("--shard", default=os.environ.get("PTL_SHARD"), metavar="I/N",
                    help="run the I-th of N shares of the selection, balanced by recorded case costs "
                         "(harness/sharding.py); `python -m harness merge` joins the shards' reports")
    group.addoption("--shard-costs", default=os.environ.get("PTL_SHARD_COSTS"), metavar="FILE",
                    help="the case seconds that balance the shards: a record like the committed default "
                         "reports/baseline/<target>.seconds, or a previous run's results.csv")
