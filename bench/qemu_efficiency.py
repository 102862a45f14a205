"""Figures of the embedded default target, each measured in this run.

  determinism  the same case run twice gives identical instruction counts
  efficiency   64x64x64 on 1 hart: latency instructions per MAC for every
               FP32 and FP16 kernel; best vs mm; 8-hart speedup and MAC per
               latency instruction of the best kernel
  timeout      a deliberately hanging library is classified `timeout`
               within its timeout + 2 s

Writes reports/bench/kernel_efficiency.csv and kernel_efficiency.svg (a bar
chart of instructions per MAC per kernel). Usage:
    python bench/qemu_efficiency.py [--timeout-check-seconds 3]
"""
from __future__ import annotations

import argparse
import csv
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.svg_bars import bar_chart  # noqa: E402
from harness.files import write_atomically  # noqa: E402
from harness.cases import Variant  # noqa: E402
from harness.kernels import kernel_table  # noqa: E402
from harness.session import Session  # noqa: E402
from harness.target import DEFAULT_LIBRARY  # noqa: E402
from harness.targets import make_target  # noqa: E402
from suite.catalogue.linalg import MATMUL  # noqa: E402

SIZE = 64
MACS = SIZE ** 3


def case_64(dtype: str, trans_B: int = 0):
    return next(c for c in MATMUL.cases() if c.dtype == dtype and c.shape["N"] == SIZE
                and c.options["trans_B"] == trans_B)


def latencies(session: Session, dtype: str, cores: tuple[int, ...]) -> dict[tuple[int, int], int]:
    case = case_64(dtype)
    variants = [Variant(case, k, c) for k in range(len(kernel_table(dtype))) for c in cores]
    results = session.results_for(case, variants)
    out = {}
    for v, r in results.items():
        if not r.passed:
            sys.exit(f"{v.id} failed on qemu: {r.failure}")
        out[(v.kernel, v.cores)] = r.counters.latency
    return out


def determinism(cache: Path) -> None:
    counts = []
    for _ in range(2):  # two sessions: nothing shared but the caches
        session = Session(make_target("qemu"), DEFAULT_LIBRARY, cache)
        counts.append(latencies(session, "fp32", (1, 8)))
    same = counts[0] == counts[1]
    print(f"determinism: two runs of {len(counts[0])} variants (64x64x64 fp32, 24 kernels x 1 and 8 harts): "
          f"{'identical instruction counts' if same else 'COUNTS DIFFER'}")
    if not same:
        sys.exit(1)


def efficiency(cache: Path, out_csv: Path) -> None:
    session = Session(make_target("qemu"), DEFAULT_LIBRARY, cache)
    rows = []
    print(f"\nlatency instructions per MAC, {SIZE}x{SIZE}x{SIZE}, 1 hart (and 8 harts)")
    print(f"  {'dtype':5} {'idx':>3} {'kernel':20} {'instr/MAC 1h':>12} {'instr/MAC 8h':>12} {'speedup':>8}")
    best = {}
    for dtype in ("fp32", "fp16", "bf16"):
        if dtype == "fp16" and "fp16" not in session.target.capabilities.fp16_formats:
            print("  fp16: not built (clang with Zfh missing)")
            continue
        lat = latencies(session, dtype, (1, 8))
        for k, name in enumerate(kernel_table(dtype)):
            one, eight = lat[(k, 1)], lat[(k, 8)]
            rows.append({"dtype": dtype, "kernel_index": k, "kernel": name, "latency_1h": one,
                         "latency_8h": eight, "instr_per_mac_1h": f"{one / MACS:.4f}",
                         "instr_per_mac_8h": f"{eight / MACS:.4f}", "speedup_8h": f"{one / eight:.3f}"})
            print(f"  {dtype:5} {k:>3} {name:20} {one / MACS:>12.3f} {eight / MACS:>12.3f} {one / eight:>8.2f}")
        k_best = min(range(len(kernel_table(dtype))), key=lambda k: lat[(k, 1)])
        best[dtype] = (k_best, lat)
    buffer = tempfile.SpooledTemporaryFile(mode="w+")
    writer = csv.DictWriter(buffer, list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    buffer.seek(0)
    write_atomically(out_csv, buffer.read().encode())

    svg = out_csv.with_suffix(".svg")
    groups: dict[str, list[tuple[str, float]]] = {}
    for row in rows:
        if row["dtype"] != "bf16":  # software bfloat16 is ~50 instr/MAC: it would flatten the chart
            groups.setdefault(f"{row['dtype']}, 1 hart", []).append((row["kernel"], float(row["instr_per_mac_1h"])))
    bar_chart(svg, f"QEMU rv32: latency instructions per MAC, {SIZE}x{SIZE}x{SIZE} (lower is better)",
              "instr/MAC", groups, goal=2.0)

    k, lat = best["fp32"]
    name = kernel_table("fp32")[k]
    gain = lat[(0, 1)] / lat[(k, 1)]
    per_mac = lat[(k, 1)] / MACS
    speedup = lat[(k, 1)] / lat[(k, 8)]
    mac_per_instr = MACS / lat[(k, 8)]
    print(f"\nfp32 best kernel on 1 hart: {name} (#{k})")
    print(f"  mm / best latency, 1 hart:       {gain:.2f}x   (target >= 2.4x)")
    print(f"  instructions per MAC, 1 hart:    {per_mac:.3f}   (goal <= 2.0)")
    print(f"  8-hart speedup:                  {speedup:.2f}x   (target >= 6.5x)")
    print(f"  MAC per latency instr, 8 harts:  {mac_per_instr:.2f}   (target >= 4.0)")
    print(f"  table: {out_csv}, chart: {svg}")


def timeout_check(cache: Path, seconds: float) -> None:
    """A library whose K loop never ends must come back as `timeout`."""
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "lib"
        shutil.copytree(DEFAULT_LIBRARY, lib)
        source = lib / "sources" / "pulp_mm_tiles_fp32.c"
        text = source.read_text()
        hang = "        while (a0 != a_end) {"
        if hang not in text:
            sys.exit("timeout check: the K loop of the fp32 tiles changed; update bench/qemu_efficiency.py")
        source.write_text(text.replace(hang, "        while (a0 != a_end || 1) {"))
        session = Session(make_target("qemu"), lib, cache, timeout=seconds)
        case = case_64("fp32")
        variant = Variant(case, 12, 1)
        session.artefact_for("fp32")  # build outside the timed part
        start = time.monotonic()
        result = session.results_for(case, [variant])[variant]
        elapsed = time.monotonic() - start
    kind = result.failure.kind if result.failure else "passed"
    ok = kind == "timeout" and elapsed <= seconds + 2
    print(f"\ntimeout: hanging case classified '{kind}' after {elapsed:.2f} s "
          f"(timeout {seconds:g} s, limit {seconds + 2:g} s): {'ok' if ok else 'FAILED'}")
    if not ok:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout-check-seconds", type=float, default=3.0)
    parser.add_argument("--csv", default=str(ROOT / "reports" / "bench" / "kernel_efficiency.csv"))
    args = parser.parse_args()
    target = make_target("qemu")
    reason = target.unavailable_reason()
    if reason:
        sys.exit(f"the qemu target is not available: {reason}")
    cache = ROOT / ".cache" / "ptl"
    determinism(cache)
    efficiency(cache, Path(args.csv))
    timeout_check(cache, args.timeout_check_seconds)


if __name__ == "__main__":
    main()
