"""Every catalogue entry against PyTorch, one test per variant: the generic
test of OpInfo's kind. The entries are harness/catalogue's, one module per
family; `--family pool,linalg` collects only those families, and `-k pool`
or `-m family_pool` selects a family's tests among all."""
from harness.pytest_plugin import variant_params


def pytest_generate_tests(metafunc):
    if "variant" in metafunc.fixturenames:
        metafunc.parametrize("variant", variant_params(metafunc.config, metafunc.definition))


def test_op(variant, ptl):
    ptl.check(variant)
