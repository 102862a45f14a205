"""Pointwise, depthwise and transposed convolutions against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.conv_dw_pw import ENTRIES


@parametrize_variants(ENTRIES)
def test_conv_dw_pw(variant, ptl):
    ptl.check(variant)
