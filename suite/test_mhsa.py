"""Multi-head self-attention against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.mhsa import ENTRIES


@parametrize_variants(ENTRIES)
def test_mhsa(variant, ptl):
    ptl.check(variant)
