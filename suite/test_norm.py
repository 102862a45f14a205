"""The normalizations against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.norm import ENTRIES


@parametrize_variants(ENTRIES)
def test_norm(variant, ptl):
    ptl.check(variant)
