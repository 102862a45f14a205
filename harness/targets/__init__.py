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
    """A target by name; auto: qemu when its toolchain is installed, else host
    (whose fallback_reason then says why: the run prints it last and records
    it in summary.json)."""
    if name != "auto":
        return make_target(name)
    try:
        qemu = make_target("qemu")
        reason = qemu.unavailable_reason()
        if reason is None:
            return qemu
    except (ImportError, ValueError) as exc:
        reason = str(exc)
    host = make_target("host")
    host.fallback_reason = f"qemu is not available: {reason}"
    return host
