"""Throughput of the suite against a per-case-compilation flow, in one run.

1. The matmul + linear catalogue with pytest -n 2 (warm caches, as on a
   second CI run): variants per second.
2. The same variants the way embedded flows run them: for each variant of
   a random sample, compile library + runner with the payload compiled in,
   then run it. Variants per second again.

It prints both and their ratio. Usage:
    python bench/suite_throughput.py [--target host] [--sample 10]
"""
from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import cache_layout  # noqa: E402
from harness.payload import payload_as_c_source  # noqa: E402
from harness.protocol import decode_records  # noqa: E402
from harness.session import Session, fp16_format_of  # noqa: E402
from harness.target import BuildConfig, LibrarySource, DEFAULT_LIBRARY  # noqa: E402
from harness.targets import make_target  # noqa: E402
from harness.catalogue.linalg import ENTRIES  # noqa: E402


def suite_rate(target: str, workers: str) -> tuple[int, float]:
    argv = [sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "linalg", "-n", workers, "-q", "--target", target,
            "--reports-dir", tempfile.mkdtemp(prefix="ptl-bench-"), "-p", "no:randomly"]
    subprocess.run(argv, capture_output=True, cwd=ROOT)  # warm the caches
    start = time.monotonic()
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    seconds = time.monotonic() - start
    match = re.search(r"(\d+) passed", result.stdout)
    if not match:
        sys.exit(f"suite run did not pass:\n{result.stdout[-3000:]}")
    return int(match.group(1)), seconds


def per_case_rate(target_name: str, sample: int, seed: int = 1) -> tuple[int, float]:
    """Compile a dedicated binary for each sampled variant, payload compiled
    in, and run it: the embedded flow, one binary per test."""
    target = make_target(target_name)
    session = Session(target, DEFAULT_LIBRARY, cache_layout.default_root())
    variants = [v for entry in ENTRIES for v in entry.variants()]
    chosen = random.Random(seed).sample(variants, sample)
    start = time.monotonic()
    for number, variant in enumerate(chosen, 1):
        print(f"  per-case build and run {number}/{sample}: {variant.id}", flush=True)
        compile_and_run_one(session, variant)
    return sample, time.monotonic() - start


def compile_and_run_one(session: Session, variant) -> None:
    """The embedded flow for one variant: compile library + runner with its
    payload compiled in, then run that binary."""
    case, target = variant.case, session.target
    bundle = session.bundle_for(case)
    # The runner's description orders the params and tensors (from the suite's build).
    layout = session.layout_for(case, session.artefact_for(case.dtype), bundle)
    payload = session.payload_for(case, [variant], bundle, layout)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "payload_data.c"
        source.write_text(payload_as_c_source(payload))
        target.build(BuildConfig(LibrarySource.at(session.library_path), fp16_format_of(case.dtype)), Path(tmp),
                     embedded_payload=source)
        raw = target.run(Path(tmp), None, 120.0, Path(tmp))
        if not decode_records(raw.output).complete:
            sys.exit(f"per-variant run of {variant.id} did not complete")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="host")
    parser.add_argument("--sample", type=int, default=10, help="variants compiled one by one")
    parser.add_argument("-n", dest="workers", default="2")
    args = parser.parse_args()
    print(f"suite run on {args.target} with -n {args.workers} (twice: the first warms the caches)...", flush=True)
    n_suite, t_suite = suite_rate(args.target, args.workers)
    print(f"  {n_suite} variants in {t_suite:.1f} s", flush=True)
    n_case, t_case = per_case_rate(args.target, args.sample)
    suite_rate_v, case_rate_v = n_suite / t_suite, n_case / t_case
    print(f"target {args.target}")
    print(f"suite (-n {args.workers}, warm caches): {n_suite} variants in {t_suite:.1f} s = {suite_rate_v:.1f} variants/s")
    print(f"per-case compilation (sample of {args.sample}): {n_case} variants in {t_case:.1f} s "
          f"= {case_rate_v:.1f} variants/s")
    print(f"ratio suite / per-case: {suite_rate_v / case_rate_v:.1f}x (goal >= 10x)")


if __name__ == "__main__":
    main()
