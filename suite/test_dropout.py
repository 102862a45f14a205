"""Dropout and the library's random numbers against an independent model."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.dropout import ENTRIES


@parametrize_variants(ENTRIES)
def test_dropout(variant, ptl):
    ptl.check(variant)
