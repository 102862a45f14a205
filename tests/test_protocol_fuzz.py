"""The decoder against damaged consoles, property-based (tests/protocol_fuzz.py
says what is damaged and what the decoder promises). A short profile runs
here; `python bench/fuzz_decoder.py` runs the long one (100,000 inputs) and
prints the counts. PTL_FUZZ_EXAMPLES changes the number of inputs here."""
import os

import pytest
from hypothesis import HealthCheck, given, settings

from tests.protocol_fuzz import damage_sample, damages, judge, record_corpus

EXAMPLES = int(os.environ.get("PTL_FUZZ_EXAMPLES", "3000"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return record_corpus(tmp_path_factory.mktemp("cache"))


def test_the_corpus_is_real_and_varied(corpus):
    names = {r.name for r in corpus}
    assert {"describe", "maxpool-fp32-bw", "avgpool-bf16-fw", "maxpool-fp32-bad-variant"} == names
    assert all(r.output.count(b"@PTL1 ") >= 3 for r in corpus)


def test_damaged_consoles_are_rejected_flagged_or_decoded_exactly(corpus):
    outcomes = {}

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(damages(len(corpus)))
    def check(sample):
        recording, damaged = damage_sample(corpus, sample)
        outcome = judge(recording, damaged)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1

    check()
    # All three outcomes occur: the damages do reach the decoder's checks.
    assert len(outcomes) == 3, outcomes
