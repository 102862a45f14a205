"""The FP32 tensor utilities against numpy/PyTorch float64."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.utils import ENTRIES


@parametrize_variants(ENTRIES)
def test_utils(variant, ptl):
    ptl.check(variant)
