"""The row and vector softmax against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.softmax import ENTRIES


@parametrize_variants(ENTRIES)
def test_softmax(variant, ptl):
    ptl.check(variant)
