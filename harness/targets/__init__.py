"""Target registry: one module per target."""
from __future__ import annotations

import importlib

from harness.target import Target

_MODULES = {"host": "harness.targets.host", "qemu": "harness.targets.qemu", "gvsoc": "harness.targets.gvsoc",
            "board": "harness.targets.board"}


def target_names() -> list[str]:
    return list(_MODULES)


def make_target(name: str) -> Target:
    if name not in _MODULES:
        raise ValueError(f"unknown target {name!r}; choose one of {', '.join(_MODULES)}")
    return importlib.import_module(_MODULES[name]).TARGET_CLASS()


def choose_target(name: str) -> Target:
    """A target by name; auto: qemu when its toolchain is installed, else host."""
    if name != "auto":
        return make_target(name)
    try:
        qemu = make_target("qemu")
        if qemu.unavailable_reason() is None:
            return qemu
    except (ImportError, ValueError):
        pass
    return make_target("host")
