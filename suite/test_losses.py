"""Losses (MSE, L1, berHu, CrossEntropy) and the optimizer (SGD) against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.losses import ENTRIES


@parametrize_variants(ENTRIES)
def test_losses(variant, ptl):
    ptl.check(variant)
