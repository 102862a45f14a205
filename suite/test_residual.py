"""The residual connection and its sum node against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.residual import ENTRIES


@parametrize_variants(ENTRIES)
def test_residual(variant, ptl):
    ptl.check(variant)
