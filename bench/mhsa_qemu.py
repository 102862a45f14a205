"""Multi-head self-attention on QEMU: FW + BW latency instructions per MAC
for every FP32 matmul kernel on 1 and 8 harts, each measured in this run.

The case is the catalogue's largest attention shape that fits a 64 KiB L1
(harness/catalogue/mhsa.py): L 16 tokens, E 16, F 16, 4 heads of 4. MACs are
the products of the layer's matmuls (softmax, transposes and scaling are
work without MACs, so they count against every kernel alike):
  FW 4 E F L + 2 F L^2 (q, k, v, the output projection; scores, A = v P^T)
  BW 8 E F L + 4 F L^2 (dWo, dA, dWq/k/v, dx; dv, dP, dk, dq)
Prints the best and the worst kernel on 1 and on 8 harts and writes every
kernel's figures to reports/bench/mhsa_qemu.csv.

Then the split (issue 27): where the best 1-hart kernel's FW and BW spend
their instructions, by function, from the QEMU counting plugin's profile=
(each measured instruction counted for the function that holds it, from the
runner's symbol table): the matmul (the kernel, its driver and tiles, and
mm_manager) against everything else, and the largest functions outside it.

    python bench/mhsa_qemu.py [--csv PATH] [--cache DIR]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.files import write_atomically  # noqa: E402
from harness.cases import Variant  # noqa: E402
from harness.kernels import kernel_table  # noqa: E402
from harness.session import Session  # noqa: E402
from harness.target import DEFAULT_LIBRARY  # noqa: E402
from harness.targets import make_target  # noqa: E402
from harness.catalogue.mhsa import MHSA  # noqa: E402
from bench.qemu_profile import MATMUL_HELPERS, by_function, split_row  # noqa: E402

SHAPE = dict(L=16, E=16, F=16, heads=4)
CORES = (1, 8)


def macs(step: str) -> int:
    L, E, F = SHAPE["L"], SHAPE["E"], SHAPE["F"]
    return 4 * E * F * L + 2 * F * L * L if step == "fw" else 8 * E * F * L + 4 * F * L * L


def latencies(session: Session) -> dict[tuple[str, int, int], int]:
    """(step, kernel, cores) -> latency instructions; every variant must pass."""
    out = {}
    for case in MHSA.cases():
        if case.dtype != "fp32" or case.shape != SHAPE:
            continue
        variants = [Variant(case, k, c) for k in range(len(kernel_table("fp32"))) for c in CORES]
        for v, r in session.results_for(case, variants).items():
            if not r.passed:
                sys.exit(f"bench: {v.id} failed on qemu: {r.failure}")
            out[(case.step, v.kernel, v.cores)] = r.counters.latency
    return out


TOP_OTHERS = 6


def split(session: Session, kernel: int) -> None:
    """Prints where one variant per step (1 hart) spends its instructions."""
    names = kernel_table("fp32")
    print(f"\nsplit of `{names[kernel]}` on 1 hart, instructions in the measured region by function "
          f"(matmul: the kernels, {MATMUL_HELPERS.pattern})")
    print("| step | instructions | matmul | outside the matmul | largest outside the matmul |")
    print("|---|---|---|---|---|")
    for case in MHSA.cases():
        if case.dtype != "fp32" or case.shape != SHAPE:
            continue
        total, matmul, rest, largest = split_row(by_function(session, Variant(case, kernel, 1)), TOP_OTHERS)
        print(f"| {case.step} | {total} | {matmul} | {rest} | {largest} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, default=ROOT / "reports" / "bench" / "mhsa_qemu.csv")
    parser.add_argument("--cache", type=Path, default=None, help="default: a fresh temporary directory")
    args = parser.parse_args()
    target = make_target("qemu")
    reason = target.unavailable_reason()
    if reason:
        sys.exit(f"bench: target qemu is not available: {reason}")
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(target, DEFAULT_LIBRARY, args.cache or Path(tmp), timeout=600.0)
        counts = latencies(session)
        report(counts, args.csv)
        best_1 = min(range(len(kernel_table("fp32"))),
                     key=lambda k: counts[("fw", k, 1)] + counts[("bw", k, 1)])
        split(session, best_1)


def report(counts: dict[tuple[str, int, int], int], out_csv: Path) -> None:
    total_macs = macs("fw") + macs("bw")
    names = kernel_table("fp32")
    per_mac = {(k, c): (counts[("fw", k, c)] + counts[("bw", k, c)]) / total_macs
               for k in range(len(names)) for c in CORES}
    print(f"MHSA FP32 L{SHAPE['L']} E{SHAPE['E']} F{SHAPE['F']} {SHAPE['heads']} heads on qemu: FW + BW latency "
          f"instructions per MAC ({macs('fw')} + {macs('bw')} MACs)\n")
    print("| harts | best kernel | instr/MAC | worst kernel | instr/MAC | worst / best |")
    print("|---|---|---|---|---|---|")
    for c in CORES:
        ranked = sorted(range(len(names)), key=lambda k: per_mac[(k, c)])
        best, worst = ranked[0], ranked[-1]
        print(f"| {c} | `{names[best]}` | {per_mac[(best, c)]:.2f} | `{names[worst]}` | {per_mac[(worst, c)]:.2f} | "
              f"{per_mac[(worst, c)] / per_mac[(best, c)]:.2f} |")
    for k in sorted(range(len(names)), key=lambda k: per_mac[(k, 1)])[:1]:
        print(f"\n8-hart speedup of the best 1-hart kernel `{names[k]}`: {per_mac[(k, 1)] / per_mac[(k, 8)]:.2f}")
    rows = [["kernel", "index", "harts", "fw_instructions", "bw_instructions", "instructions_per_mac"]]
    rows += [[names[k], k, c, counts[("fw", k, c)], counts[("bw", k, c)], f"{per_mac[(k, c)]:.4f}"]
             for k in range(len(names)) for c in CORES]
    text = "".join(",".join(str(x) for x in row) + "\n" for row in rows)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(out_csv, text.encode())
    print(f"\nevery kernel: {out_csv}")


if __name__ == "__main__":
    main()
