"""Target registry: one package per target, found by scanning this folder.

A target's package holds its Python target (the module's TARGET_CLASS, a
harness.target.Target) and its runtime (runtime/: C, assembly, linker
script). A new target is one new folder here.

A target takes its options as constructor keyword arguments and reads no
environment variable itself. A package whose options have variables says
which feeds which in one module-level function,
options_from_environment(environ) -> keyword arguments, checked with
harness/option_values.py (a bad value is an OptionValueError naming the
variable, the value and what is allowed). This module is the one place that
calls it with os.environ: make_target and choose_target, when they are not
given the options.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from functools import lru_cache
from types import ModuleType

from harness.target import Target

# What `--target auto` chooses between, best first (choose_target).
AUTO_CHOICES = ("qemu", "host")


@lru_cache(maxsize=None)
def target_names() -> tuple[str, ...]:
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg and not m.name.startswith("_")))


def candidates(name: str) -> tuple[str, ...]:
    """The targets a --target value may make: auto's choices, or the one it names."""
    return AUTO_CHOICES if name == "auto" else (name,)


def _package(name: str) -> ModuleType:
    if name not in target_names():
        raise ValueError(f"unknown target {name!r}; choose one of {', '.join(target_names())}")
    return importlib.import_module(f"{__name__}.{name}")


def environment_options(name: str) -> dict:
    """The keyword arguments this process's environment gives target `name`
    (its package's options_from_environment; none for a package without
    one). A bad value raises option_values.OptionValueError."""
    read = getattr(_package(name), "options_from_environment", None)
    return read(os.environ) if read is not None else {}


def make_target(name: str, options: dict | None = None) -> Target:
    """Target `name` made with `options`, its constructor's keyword
    arguments; None: those of the environment (environment_options)."""
    package = _package(name)
    return package.TARGET_CLASS(**(environment_options(name) if options is None else options))


def choose_target(name: str, options: dict[str, dict] | None = None) -> Target:
    """A target by name; auto: qemu when its toolchain is installed, else host
    (whose fallback_reason then says why: the run prints it last and records
    it in summary.json). `options` holds make_target's options by target
    name; a target it does not name (or None) takes the environment's."""
    unknown = sorted(set(options or {}) - set(target_names()))
    if unknown:
        raise ValueError(f"options for unknown target(s) {', '.join(unknown)}: options are given by target name, "
                         f"one of {', '.join(target_names())}")

    def make(each: str) -> Target:
        return make_target(each, (options or {}).get(each))

    if name != "auto":
        return make(name)
    best, fallback = AUTO_CHOICES
    try:
        chosen = make(best)
        reason = chosen.unavailable_reason()
        if reason is None:
            return chosen
    except (ImportError, ValueError) as exc:
        reason = str(exc)
    chosen = make(fallback)
    chosen.fallback_reason = f"{best} is not available: {reason}"
    return chosen
