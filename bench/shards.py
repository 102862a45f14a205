"""A sharded qemu regression against an unsharded one, on one machine.

1. The whole regression of lib_c on qemu with the performance gate, unsharded
   (or the reports of such a run, --whole DIR).
2. The same in N shards (--shard I/N), one after the other, each with the
   same workers, as N CI jobs would run them side by side.
3. `python -m harness merge` of the shards.

It prints each shard's seconds against the split's estimate, the balance
(the slowest shard's seconds over the mean: the sharded run's wall time
over the ideal), the gate's verdicts, and whether the merged report gives
every variant the same outcome, failure class and counts as the unsharded
run; it exits 1 when it does not. Usage:

    python bench/shards.py [--shards 4] [-n 2] [--whole DIR] [--out DIR] [pytest args, e.g. -k linear]
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.merge import merge  # noqa: E402

COMPARED = ("outcome", "failure_class", "latency", "work")


def regress(reports: Path, workers: str, extra: list[str]) -> None:
    argv = [sys.executable, "-m", "harness", "regress", "--target", "qemu", "-n", workers, "--perf-gate",
            "--reports-dir", str(reports), *extra]
    print("$", " ".join(argv[1:]), flush=True)
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL)
    if not (reports / "summary.json").exists():
        sys.exit(f"shards: {reports} has no reports; run the command above to see why")


def rows(directory: Path) -> dict[str, dict]:
    with open(directory / "results.csv", newline="") as handle:
        return {row["test_id"]: row for row in csv.DictReader(handle)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("-n", dest="workers", default="2", help="pytest-xdist workers of every run")
    parser.add_argument("--whole", type=Path, default=None, help="reports of an unsharded run to compare with")
    parser.add_argument("--out", type=Path, default=None, help="where the reports go (default: a temporary dir)")
    args, extra = parser.parse_known_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="ptl-shards-"))
    whole = args.whole or out / "whole"
    if args.whole is None:
        regress(whole, args.workers, extra)
    shard_dirs = [out / f"shard-{i}" for i in range(1, args.shards + 1)]
    for i, directory in enumerate(shard_dirs, 1):
        regress(directory, args.workers, ["--shard", f"{i}/{args.shards}", *extra])
    merged = merge(shard_dirs, out / "merged")

    print(f"\nreports in {out}")
    print(f"{'shard':>5} {'variants':>8} {'seconds':>8} {'estimated':>9}")
    for shard in merged["shards"]:
        print(f"{shard['index']:>5} {shard['variants']:>8} {shard['seconds']:>8.1f} {shard['estimated_seconds']:>9.1f}")
    seconds = [s["seconds"] for s in merged["shards"]]
    estimated = [s["estimated_seconds"] for s in merged["shards"]]
    unsharded = json.loads((whole / "summary.json").read_text())["seconds"]
    print(f"balance (slowest shard over the mean): {max(seconds) / statistics.mean(seconds):.3f} measured, "
          f"{max(estimated) / statistics.mean(estimated):.3f} estimated by the split")
    print(f"unsharded {unsharded:.0f} s; slowest shard {max(seconds):.0f} s "
          f"({unsharded / max(seconds):.2f}x faster on {args.shards} machines); shards in all {sum(seconds):.0f} s")
    perf = merged.get("perf") or {}
    print("perf gate, merged:", ", ".join(f"{n} {k}" for k, n in perf.get("counts", {}).items()))

    expected, got = rows(whole), rows(out / "merged")
    differ = sorted(i for i in expected.keys() | got.keys()
                    if i not in expected or i not in got
                    or any(expected[i].get(k) != got[i].get(k) for k in COMPARED))
    print(f"merged vs unsharded: {len(got)} vs {len(expected)} variants; {len(differ)} differ in "
          f"{', '.join(COMPARED)}")
    for test_id in differ[:10]:
        print(f"  {test_id}: unsharded {[expected.get(test_id, {}).get(k) for k in COMPARED]}, "
              f"merged {[got.get(test_id, {}).get(k) for k in COMPARED]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
