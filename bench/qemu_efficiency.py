"""Figures of the embedded default target, each measured in this run.

  determinism  the same case run twice gives identical instruction counts
  efficiency   64x64x64 (B row-major) for every FP32 and FP16 kernel:
               latency instructions per MAC on 1 hart, beside the floor of
               the kernel's register block and the ratio to it; MAC per
               latency instruction on 8 harts; the best kernel at each
  published    with --trainlib PATH: the same table for that library and
               for lib_c, both built in this run by the same compiler with
               the same flags (the one the library's headers compile with),
               so that the ratio compares code, not compilers
  before       with --before COMMIT (of this repository: its lib_c/ is taken
               from git into a temporary directory, removed afterwards) or
               --before PATH (an older lib_c checkout): every kernel index
               of every dtype at 1 and 8 harts, then and now, both built in
               this run by the same harness and compilers, and whether
               every index is at least as fast as before (issue 27); an
               index the older library lacks is new, not compared
  timeout      a deliberately hanging library is classified `timeout`
               within its timeout + 2 s

The floor of a U x V register block with B row-major (K x M) on rv32imf
without PULP's extensions: each k loads U values of A and V of B and issues
U*V fmadd, and B's next row is M floats away, a distance no instruction can
hold as an offset, so a pointer moves once per k; every element of C is
stored once (1/K per MAC):
    1 + (U + V + 1) / (U V) + 1 / K     instructions per MAC
(5x5: 1.456 at K = 64, 4x6 and 6x4: 1.474, 4x4: 1.578). Loop counters,
calls, and the leftover rows and columns of a size the block does not
divide come on top. lib_c/README.md derives it.

Writes reports/bench/kernel_efficiency.csv and kernel_efficiency.svg (a bar
chart of instructions per MAC per kernel, the floors marked). Usage:
    python bench/qemu_efficiency.py [--trainlib ../pulp-trainlib] [--before a6a113c]
                                    [--timeout-check-seconds 3]
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.svg_bars import bar_chart  # noqa: E402
from harness import cache_layout  # noqa: E402
from harness.files import write_atomically  # noqa: E402
from harness.cases import Variant  # noqa: E402
from harness.failures import CaseFailure  # noqa: E402
from harness.kernels import api_kernels, kernel_table  # noqa: E402
from harness.session import Session  # noqa: E402
from harness.target import DEFAULT_LIBRARY, BuildConfig, LibrarySource  # noqa: E402
from harness.targets import make_target  # noqa: E402
from harness.catalogue.linalg import MATMUL  # noqa: E402

SIZE = 64
MACS = SIZE ** 3
HARTS = (1, 8)
GOAL_1H = 1.50      # issue 27: instructions per MAC of the best FP32 kernel, 1 hart
GOAL_8H = 5.0       # issue 27: MAC per latency instruction of the best FP32 kernel, 8 harts
_BLOCK = re.compile(r"(\d+)x(\d+)(?:_[a-z0-9]+)?$")   # 4x6, 4x6_k4, 4x6_spread


def case_64(dtype: str, trans_B: int = 0):
    return next(c for c in MATMUL.cases() if c.dtype == dtype and c.shape["N"] == SIZE
                and c.options["trans_B"] == trans_B)


def block_of(kernel: str) -> tuple[int, int]:
    """The U x V register block a kernel's name says (mm, mm_u2: 1 x 1)."""
    m = _BLOCK.search(kernel)
    return (int(m.group(1)), int(m.group(2))) if m else (1, 1)


def floor_per_mac(kernel: str, k: int = SIZE) -> float:
    """Instructions per MAC a U x V block cannot go below, B row-major (module doc)."""
    u, v = block_of(kernel)
    return 1 + (u + v + 1) / (u * v) + 1 / k


def latencies(session: Session, dtype: str, cores: tuple[int, ...],
              kernels: tuple[int, ...] | None = None) -> dict[tuple[int, int], int]:
    case = case_64(dtype)
    kernels = session.kernels_for(case) if kernels is None else kernels
    variants = [Variant(case, k, c) for k in kernels for c in cores]
    results = session.results_for(case, variants)
    out = {}
    for v, r in results.items():
        if not r.passed:
            sys.exit(f"{v.id} failed on {session.target.name} with {session.library_path}: {r.failure}")
        out[(v.kernel, v.cores)] = r.counters.latency
    return out


def determinism(cache: Path) -> None:
    counts = []
    for _ in range(2):  # two sessions: nothing shared but the caches
        session = Session(make_target("qemu"), DEFAULT_LIBRARY, cache)
        counts.append(latencies(session, "fp32", HARTS))
    same = counts[0] == counts[1]
    print(f"determinism: two runs of {len(counts[0])} variants (64x64x64 fp32, "
          f"{len(kernel_table('fp32'))} kernels x 1 and 8 harts): "
          f"{'identical instruction counts' if same else 'COUNTS DIFFER'}")
    if not same:
        sys.exit(1)


def rows_of(library: str, dtype: str, lat: dict[tuple[int, int], int]) -> list[dict]:
    rows = []
    for k, name in enumerate(kernel_table(dtype)):
        if (k, 1) not in lat:
            continue
        one, eight = lat[(k, 1)], lat[(k, 8)]
        floor = floor_per_mac(name) if dtype != "bf16" else None  # bf16 is arithmetic in software
        rows.append({"library": library, "dtype": dtype, "kernel_index": k, "kernel": name,
                     "latency_1h": one, "latency_8h": eight, "instr_per_mac_1h": f"{one / MACS:.4f}",
                     "floor_1h": "" if floor is None else f"{floor:.4f}",
                     "ratio_to_floor": "" if floor is None else f"{one / MACS / floor:.3f}",
                     "mac_per_instr_8h": f"{MACS / eight:.3f}", "speedup_8h": f"{one / eight:.3f}"})
    return rows


def print_rows(rows: list[dict]) -> None:
    print(f"  {'dtype':5} {'idx':>3} {'kernel':20} {'instr/MAC 1h':>12} {'floor':>6} {'ratio':>6} "
          f"{'MAC/instr 8h':>12} {'speedup':>8}")
    for r in rows:
        print(f"  {r['dtype']:5} {r['kernel_index']:>3} {r['kernel']:20} {float(r['instr_per_mac_1h']):>12.3f} "
              f"{r['floor_1h'][:5] or '-':>6} {r['ratio_to_floor'][:5] or '-':>6} "
              f"{float(r['mac_per_instr_8h']):>12.2f} {float(r['speedup_8h']):>8.2f}")


def dtypes_built(session: Session) -> tuple[str, ...]:
    if "fp16" not in session.target.capabilities.fp16_formats:
        print("  fp16: not built (clang with Zfh missing)")
        return ("fp32", "bf16")
    return ("fp32", "fp16", "bf16")


def efficiency(cache: Path) -> tuple[list[dict], dict[str, dict]]:
    """lib_c's table, and its latencies {dtype: {(kernel, harts): instructions}}."""
    session = Session(make_target("qemu"), DEFAULT_LIBRARY, cache)
    rows = []
    print(f"\nlib_c, {SIZE}x{SIZE}x{SIZE}, B row-major: latency instructions per MAC on 1 hart, the floor of the "
          f"kernel's block (module doc) and the ratio to it; MAC per latency instruction on 8 harts")
    lat = {}
    for dtype in dtypes_built(session):
        lat[dtype] = latencies(session, dtype, HARTS)
        rows += rows_of("lib_c", dtype, lat[dtype])
    print_rows(rows)
    return rows, lat


@contextlib.contextmanager
def older_library(spec: str):
    """The lib_c to compare with: a directory as it is, or a commit of this
    repository, whose lib_c/ is extracted into a temporary directory that is
    removed afterwards (nothing is added to the repository)."""
    if Path(spec).is_dir():
        yield Path(spec).resolve()
        return
    git = ["git", "-C", str(ROOT)]
    rev = subprocess.run(git + ["rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"],
                         capture_output=True, text=True)
    if rev.returncode != 0:
        sys.exit(f"--before: {spec} is neither a directory nor a commit of {ROOT}")
    with tempfile.TemporaryDirectory(prefix="ptl-before-") as tmp:
        archive = subprocess.run(git + ["archive", rev.stdout.strip(), "lib_c"], capture_output=True)
        if archive.returncode != 0:
            sys.exit(f"--before: commit {spec} has no lib_c/ ({archive.stderr.decode().strip()})")
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield Path(tmp) / "lib_c"


def before(cache: Path, older: Path, label: str, now: dict[str, dict]) -> bool:
    """Every kernel index of an older lib_c beside today's, at 1 and 8 harts,
    both built in this run by the same harness and compilers. True when no
    index takes more latency instructions now than then."""
    session = Session(make_target("qemu"), older, cache)
    print(f"\nlib_c at {label} (before) beside lib_c (now), {SIZE}x{SIZE}x{SIZE}, B row-major, latency instructions "
          f"(max over harts), both built in this run by the same harness and compilers")
    print(f"  {'dtype':5} {'idx':>3} {'kernel':20} {'before 1h':>10} {'now 1h':>10} {'change':>8} "
          f"{'before 8h':>10} {'now 8h':>10} {'change':>8}")
    slower, compared, new = [], 0, 0
    for dtype in now:
        then = latencies(session, dtype, HARTS)
        for k, name in enumerate(kernel_table(dtype)):
            if (k, 1) not in now[dtype]:
                continue
            if (k, 1) not in then:
                new += 1
                print(f"  {dtype:5} {k:>3} {name:20} {'new: the older library lacks it':>50}")
                continue
            compared += 1
            cells = []
            for harts in HARTS:
                old, cur = then[(k, harts)], now[dtype][(k, harts)]
                cells.append(f"{old:>10} {cur:>10} {(cur - old) / old:>+8.2%}")
                if cur > old:
                    slower.append(f"{dtype} {name} at {harts} hart{'s' if harts > 1 else ''}")
            print(f"  {dtype:5} {k:>3} {name:20} " + " ".join(cells))
    verdict = "yes" if not slower else "NO, slower: " + ", ".join(slower)
    print(f"  every kernel index at least as fast as before ({compared} compared at 1 and 8 harts, {new} new): "
          f"{verdict}")
    return not slower


def summary(lat: dict[tuple[int, int], int]) -> bool:
    names = kernel_table("fp32")
    kernels = sorted({k for k, _ in lat})
    k1 = min(kernels, key=lambda k: lat[(k, 1)])
    k8 = min(kernels, key=lambda k: lat[(k, 8)])
    per_mac, mac_per_instr = lat[(k1, 1)] / MACS, MACS / lat[(k8, 8)]
    best_api = min((k for k in kernels if k in api_kernels("fp32")), key=lambda k: lat[(k, 1)])
    print(f"\nfp32, lib_c, {SIZE}x{SIZE}x{SIZE}:")
    print(f"  best on 1 hart:  {names[k1]} (#{k1}), {per_mac:.3f} instructions per MAC, floor "
          f"{floor_per_mac(names[k1]):.3f} ({per_mac / floor_per_mac(names[k1]):.3f}x)   goal <= {GOAL_1H:.2f}: "
          f"{'met' if per_mac <= GOAL_1H else 'NOT met'}")
    print(f"  best on 8 harts: {names[k8]} (#{k8}), {mac_per_instr:.2f} MAC per latency instruction, "
          f"{lat[(k8, 1)] / lat[(k8, 8)]:.2f}x its 1-hart count   goal >= {GOAL_8H:.1f}: "
          f"{'met' if mac_per_instr >= GOAL_8H else 'NOT met'}")
    print(f"  best of the published API's indices (0-23) on 1 hart: {names[best_api]} (#{best_api}), "
          f"{lat[(best_api, 1)] / MACS:.3f}; mm / best: {lat[(0, 1)] / lat[(k1, 1)]:.2f}x")
    return per_mac <= GOAL_1H and mac_per_instr >= GOAL_8H


def one_compiler_target(compiler: str, target: str = "qemu"):
    """A target building with one named compiler of its candidates only."""
    base = type(make_target(target))

    class OneCompiler(base):
        def compiler_candidates(self, config: BuildConfig):
            return [c for c in super().compiler_candidates(config) if c.name == compiler]
    return OneCompiler()


def compiler_for(trainlib: Path, target: str = "qemu") -> str:
    """The compiler the harness picks for a library's FP32 build: the first of
    the target's candidates that compiles its headers."""
    return make_target(target).compiler_choice(BuildConfig(LibrarySource.at(trainlib), "bf16", None)).compiler.name


def published(cache: Path, trainlib: Path) -> list[dict]:
    """The published library beside lib_c, both built by the compiler that the
    published headers compile with (the harness's usual choice for it)."""
    compiler = compiler_for(trainlib)
    rows = []
    print(f"\n{trainlib} beside lib_c, both built by {compiler} with the same flags "
          f"(fp32, {SIZE}x{SIZE}x{SIZE}, the API's {len(api_kernels('fp32'))} kernels)")
    lat = {}
    for name, library in (("published", trainlib), ("lib_c", DEFAULT_LIBRARY)):
        session = Session(one_compiler_target(compiler), library, cache)
        lat[name] = latencies(session, "fp32", HARTS, kernels=api_kernels("fp32"))
        rows += rows_of(f"{name} ({compiler})", "fp32", lat[name])
    names = kernel_table("fp32")
    print(f"  {'idx':>3} {'kernel':18} {'published 1h':>12} {'lib_c 1h':>9} {'ratio':>6} "
          f"{'published 8h':>12} {'lib_c 8h':>9} {'ratio':>6}   (instructions per MAC; ratio published / lib_c)")
    for k in api_kernels("fp32"):
        p1, l1 = lat["published"][(k, 1)] / MACS, lat["lib_c"][(k, 1)] / MACS
        p8, l8 = lat["published"][(k, 8)] / MACS, lat["lib_c"][(k, 8)] / MACS
        print(f"  {k:>3} {names[k]:18} {p1:>12.3f} {l1:>9.3f} {p1 / l1:>6.2f} {p8:>12.3f} {l8:>9.3f} {p8 / l8:>6.2f}")
    best = {n: min(api_kernels("fp32"), key=lambda k: lat[n][(k, 1)]) for n in lat}
    for n, k in best.items():
        print(f"  best of {n}: {names[k]} (#{k}), {lat[n][(k, 1)] / MACS:.3f} instructions per MAC on 1 hart")
    return rows


def write_reports(rows: list[dict], out_csv: Path) -> None:
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
            groups.setdefault(f"{row['library']}, {row['dtype']}, 1 hart", []).append(
                (row["kernel"], float(row["instr_per_mac_1h"])))
    bar_chart(svg, f"QEMU rv32: latency instructions per MAC, {SIZE}x{SIZE}x{SIZE} (lower is better)",
              "instr/MAC", groups, goal=GOAL_1H)
    print(f"  table: {out_csv}, chart: {svg}")


def timeout_check(cache: Path, seconds: float) -> None:
    """A library whose K loop never ends must come back as `timeout`."""
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "lib"
        shutil.copytree(DEFAULT_LIBRARY, lib)
        source = lib / "sources" / "pulp_mm_tiles_fp32.c"
        text = source.read_text()
        # The loop of every tile that starts from zero, kernel 12's at 64^3 among them.
        hang = "#define PTL_LOOP_zero(KU, U, V, L) while (a0 != a_end) {"
        if hang not in text:
            sys.exit("timeout check: the K loop of the fp32 tiles changed; update bench/qemu_efficiency.py")
        source.write_text(text.replace(hang, hang.replace("a0 != a_end", "a0 != a_end || 1")))
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
    parser.add_argument("--trainlib", type=Path, default=None,
                        help="a PULP-TrainLib checkout to measure beside lib_c, with the same compiler and flags")
    parser.add_argument("--before", default=None, metavar="COMMIT|PATH",
                        help="an older lib_c (a commit of this repository, or a checkout): every kernel index "
                             "then and now, at 1 and 8 harts")
    parser.add_argument("--csv", default=str(ROOT / "reports" / "bench" / "kernel_efficiency.csv"))
    args = parser.parse_args()
    target = make_target("qemu")
    reason = target.unavailable_reason()
    if reason:
        sys.exit(f"the qemu target is not available: {reason}")
    with older_library(args.before) if args.before is not None else contextlib.nullcontext() as older:
        for option, path in (("--trainlib", args.trainlib), ("--before", older)):
            try:
                if path is not None:
                    LibrarySource.at(path)
            except CaseFailure as exc:
                sys.exit(f"{option}: {exc.message}")
        cache = cache_layout.default_root()
        determinism(cache)
        rows, lat = efficiency(cache)
        met = summary(lat["fp32"])
        if older is not None:
            met = before(cache, older, args.before, lat) and met
    if args.trainlib is not None:
        rows += published(cache, args.trainlib.resolve())
    write_reports(rows, Path(args.csv))
    timeout_check(cache, args.timeout_check_seconds)
    print(f"\ngoals of issue 27 on QEMU: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
