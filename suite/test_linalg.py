"""Matmul kernels and the linear layer against PyTorch."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.linalg import ENTRIES


@parametrize_variants(ENTRIES)
def test_linalg(variant, ptl):
    ptl.check(variant)
