"""GVSOC cycles next to QEMU instructions, for every FP32 matmul kernel.

64x64x64 FP32 matmul (trans_B=0), every kernel, on 1 and 8 cores:
GVSOC latency cycles per MAC, the 8-core speedup in cycles, QEMU latency
instructions per MAC (1 core), and cycles per instruction (GVSOC cycles /
QEMU instructions, 1 core). Each figure is measured in this run (the caches
make a repeat cheap). Needs GVSOC (PTL_GVSOC or PATH) and QEMU.

    python bench/gvsoc_cycles.py [--csv reports/bench/gvsoc_cycles.csv]
"""
from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.qemu_efficiency import MACS, SIZE, latencies  # noqa: E402
from harness.kernels import kernel_table  # noqa: E402
from harness.session import Session  # noqa: E402
from harness.target import DEFAULT_LIBRARY  # noqa: E402
from harness.targets import make_target  # noqa: E402

CORES = (1, 8)


def measure(target_name: str, cache: Path) -> dict[tuple[int, int], int]:
    target = make_target(target_name)
    reason = target.unavailable_reason()
    if reason:
        sys.exit(f"bench: target {target_name} is not available: {reason}")
    return latencies(Session(target, DEFAULT_LIBRARY, cache, timeout=600.0), "fp32", CORES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, default=ROOT / "reports" / "bench" / "gvsoc_cycles.csv")
    parser.add_argument("--cache", type=Path, default=None, help="default: a fresh temporary directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or Path(tmp)
        cycles, instructions = measure("gvsoc", cache), measure("qemu", cache)
    rows = []
    for k, name in enumerate(kernel_table("fp32")):
        c1, c8, i1 = cycles[k, 1], cycles[k, 8], instructions[k, 1]
        rows.append((name, c1 / MACS, c8 / MACS, c1 / c8, i1 / MACS, c1 / i1))
    header = ("kernel", "gvsoc cycles/MAC 1 core", "gvsoc cycles/MAC 8 cores", "8-core speedup",
              "qemu instructions/MAC 1 core", "cycles per instruction")
    print(f"FP32 matmul {SIZE}x{SIZE}x{SIZE}, trans_B=0, latency (max over cores)\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, a, b, s, i, r in rows:
        print(f"| `{name}` | {a:.2f} | {b:.3f} | {s:.2f} | {i:.2f} | {r:.2f} |")
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    print(f"\nwritten: {args.csv}")


if __name__ == "__main__":
    main()
