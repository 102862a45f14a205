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
import re
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
from harness.targets.qemu import COUNTS_NAME, ELF_NAME, parse_profile, symbol_ranges  # noqa: E402

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


# The matmul's own functions: the kernels of the index table, the manager
# that dispatches them, and lib_c's tile driver and tiles (static names).
MATMUL_HELPERS = re.compile(r"^(mm_manager|tile_\w+|ptl_mm_\w+|run_long|run_short)$")
TOP_OTHERS = 6


def is_matmul(function: str) -> bool:
    return function in kernel_table("fp32") or bool(MATMUL_HELPERS.match(function))


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
        variant = Variant(case, kernel, 1)
        bundle = session.bundle_for(case)
        artefact = session.artefact_for(case.dtype)
        layout = session.layout_for(case, artefact, bundle)
        payload = Session.payload_for(case, [variant], bundle, layout)
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp)
            ranges = workdir / "ranges.txt"
            ranges.write_text(symbol_ranges(artefact.path / ELF_NAME))
            raw = session.target.execute(artefact.path, payload, 600.0, workdir, profile=ranges)
            counts = workdir / COUNTS_NAME
            counts_text = counts.read_text() if counts.exists() else ""
        result = session.judge_one(variant, raw, payload, bundle, layout)
        if not result.passed:
            sys.exit(f"bench: {variant.id} failed on qemu with the profile: {result.failure}")
        regions = parse_profile(counts_text)
        if len(regions) != 1:
            sys.exit(f"bench: expected one measured region with a profile, got {len(regions)}")
        by_function = next(iter(regions.values()))
        total = sum(by_function.values())
        if total != result.counters.latency:
            sys.exit(f"bench: the profile sums to {total} instructions, the region counted "
                     f"{result.counters.latency}")
        matmul = sum(n for f, n in by_function.items() if is_matmul(f))
        others = sorted(((n, f) for f, n in by_function.items() if not is_matmul(f)), reverse=True)
        largest = ", ".join(f"`{f}` {n / total:.1%}" for n, f in others[:TOP_OTHERS])
        print(f"| {case.step} | {total} | {matmul / total:.1%} | {(total - matmul) / total:.1%} | {largest} |")


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
