"""torch for the golden models, imported when a model first uses it.

The catalogue imports every golden module to name its models, so a plain
`import torch` there cost every process about 1.1 s, also the many that
compute no model: a run whose bundles are cached, a `--collect-only`, a
usage error, the harness's own commands. `from golden.lazy_torch import
torch, F` stands for `import torch` and `import torch.nn.functional as F`:
the first use of an attribute imports the module and keeps the attribute, so
later uses are plain attribute reads. Nothing at a golden module's top level
may use them (tests/test_golden_imports.py checks that importing the
catalogue leaves torch unimported).
"""
from __future__ import annotations

import importlib


class _Module:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):   # only for what is not kept yet
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


torch = _Module("torch")
F = _Module("torch.nn.functional")
