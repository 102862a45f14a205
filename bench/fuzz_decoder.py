"""The long fuzz profile of the record decoder: 100,000 damaged consoles
(tests/protocol_fuzz.py), counted by outcome.

    python bench/fuzz_decoder.py [--examples N]

It prints how many inputs were rejected with TransportError, decoded
exactly, or flagged incomplete, and how many raised anything else or
decoded to a silent wrong result; it exits non-zero unless those two are 0.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, settings  # noqa: E402

from tests.protocol_fuzz import SilentWrongResult, damage_sample, damages, judge, record_corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        print("recording the corpus on the host target ...", flush=True)
        corpus = record_corpus(Path(cache))
    counts: Counter = Counter()
    examples: dict[str, str] = {}
    start = time.monotonic()

    @settings(max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(damages(len(corpus)))
    def check(sample):
        recording, damaged = damage_sample(corpus, sample)
        try:
            outcome = judge(recording, damaged)
        except SilentWrongResult as exc:
            outcome = "SILENT WRONG RESULT"
            examples.setdefault(outcome, f"{exc} after {sample[1]}")
        except Exception as exc:  # noqa: BLE001 -- counting exactly these is the point
            outcome = f"UNEXPECTED {type(exc).__name__}"
            examples.setdefault(outcome, f"{exc!r} after {sample[1]}")
        counts[outcome] += 1
        total = sum(counts.values())
        if total % 10_000 == 0:
            print(f"  {total} inputs, {time.monotonic() - start:.0f} s", flush=True)

    check()
    total = sum(counts.values())
    print(f"decoder fuzz: {total} damaged consoles from {len(corpus)} real runs in "
          f"{time.monotonic() - start:.0f} s")
    for outcome, n in counts.most_common():
        print(f"  {outcome:28s} {n:7d}  ({n / total:.1%})")
    bad = sum(n for o, n in counts.items() if o.startswith(("SILENT", "UNEXPECTED")))
    print(f"unexpected exceptions: {sum(n for o, n in counts.items() if o.startswith('UNEXPECTED'))}, "
          f"silent wrong results: {counts['SILENT WRONG RESULT']}")
    for outcome, text in examples.items():
        print(f"  first {outcome}: {text}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
