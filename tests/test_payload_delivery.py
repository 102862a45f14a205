"""The payload delivery seam (harness/delivery.py): a target asked to
compile each payload in (PTL_PAYLOAD_DELIVERY=compiled-in) builds one runner
per run and gets no bytes at run time, and gives the same verdicts as its
own delivery; on QEMU the same instruction counts too, since only where the
payload comes from changed, not one instruction of a measured region."""
from __future__ import annotations

import pytest

from harness.session import Session
from harness.target import DEFAULT_LIBRARY
from harness.targets import make_target
from tests.board_support import CACHE, small_cases


def outcomes(target_name: str, delivery: str | None, cases) -> tuple[dict, list]:
    """variant id -> (passed, max ULP, latency), and the embedded payloads built."""
    target = make_target(target_name, {} if delivery is None else {"delivery": delivery})
    if target.unavailable_reason():
        pytest.skip(target.unavailable_reason())
    built = []
    build = target.build

    def counting_build(config, outdir, embedded_payload=None):
        built.append(embedded_payload)
        return build(config, outdir, embedded_payload=embedded_payload)
    target.build = counting_build
    session = Session(target, DEFAULT_LIBRARY, CACHE)
    results = {}
    for case, variants in cases:
        for variant, result in session.results_for(case, variants).items():
            results[variant.id] = (result.passed, result.max_ulp, result.counters.latency if result.counters else None)
    return results, [b for b in built if b is not None]


@pytest.mark.parametrize("target_name, same_counts", [("qemu", True), ("host", False)])
def test_a_compiled_in_payload_gives_the_same_verdicts_as_the_targets_own_delivery(target_name, same_counts):
    cases = small_cases(3)
    native, embedded_native = outcomes(target_name, None, cases)
    compiled, embedded = outcomes(target_name, "compiled-in", cases)
    assert embedded_native == [] and len(embedded) == len(cases), (embedded_native, embedded)
    assert all(passed for passed, _, _ in native.values()), native
    if same_counts:
        assert compiled == native
    else:     # the host's counts are nanoseconds of a wall clock
        assert {k: v[:2] for k, v in compiled.items()} == {k: v[:2] for k, v in native.items()}
