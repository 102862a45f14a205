"""Target registry: one package per target, found by scanning this folder.

A target's package holds its Python target (the module's TARGET_CLASS, a
harness.target.Target) and its runtime (runtime/: C, assembly, linker
script). A new target is one new folder here.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from harness.target import Target

@lru_cache(maxsize=None)
def target_names() -> tuple[str, ...]:
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg and not m.name.startswith("_")))


def make_target(name: str) -> Target:
    if name not in target_names():
        raise ValueError(f"unknown target {name!r}; choose one of {', '.join(target_names())}")
    return importlib.import_module(f"{__name__}.{name}").TARGET_CLASS()


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
