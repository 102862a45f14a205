"""The RNN layer against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.rnn import ENTRIES


@parametrize_variants(ENTRIES)
def test_rnn(variant, ptl):
    ptl.check(variant)
