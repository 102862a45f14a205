"""Conv2D (im2col and direct paths), im2col, im2row and block transpose against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.conv2d import ENTRIES


@parametrize_variants(ENTRIES)
def test_conv2d(variant, ptl):
    ptl.check(variant)
