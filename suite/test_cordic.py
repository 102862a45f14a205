"""CORDIC cosine and sine against float64 cos and sin."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.cordic import ENTRIES


@parametrize_variants(ENTRIES)
def test_cordic(variant, ptl):
    ptl.check(variant)
