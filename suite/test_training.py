"""Training runs on the device, step by step against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.training import ENTRIES


@parametrize_variants(ENTRIES)
def test_training(variant, ptl):
    ptl.check(variant)
