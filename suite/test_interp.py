"""Nearest and bilinear interpolation against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.interp import ENTRIES


@parametrize_variants(ENTRIES)
def test_interpolation(variant, ptl):
    ptl.check(variant)
