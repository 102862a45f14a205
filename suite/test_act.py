"""ReLU, LeakyReLU and Sigmoid against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.act import ENTRIES


@parametrize_variants(ENTRIES)
def test_act(variant, ptl):
    ptl.check(variant)
