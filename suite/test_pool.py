"""Average and max pooling against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.pool import ENTRIES


@parametrize_variants(ENTRIES)
def test_pool(variant, ptl):
    ptl.check(variant)
