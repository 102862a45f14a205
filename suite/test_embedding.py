"""The FP16 embedding lookup against PyTorch's indexing."""
from harness.pytest_plugin import parametrize_variants
from suite.catalogue.embedding import ENTRIES


@parametrize_variants(ENTRIES)
def test_embedding(variant, ptl):
    ptl.check(variant)
