"""Casts between FP32 and the FP16 formats, bit exact."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.cast import ENTRIES


@parametrize_variants(ENTRIES)
def test_cast(variant, ptl):
    ptl.check(variant)
