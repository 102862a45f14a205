"""Number and on/off values of options and environment variables, checked
one way.

A value comes as text (from a command line or the environment) and is
refused unless it is finite and in range, in one line that names the option
or variable, the value, and what is allowed:

    --perf-threshold nan: must be a finite fraction of 0 or more (0.05 allows 5% growth)
    PTL_RUN_TIMEOUT=abc: must be a positive number of seconds

An on/off variable takes 1/0, true/false, yes/no, on/off (any case); empty
or unset is its default, anything else is refused.
"""
from __future__ import annotations

import math
import os

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


class OptionValueError(ValueError):
    """A bad option or environment value: one line for the user."""


def label(name: str, text) -> str:
    """`--option value` for an option, `VARIABLE=value` for an environment variable."""
    return f"{name} {text}" if name.startswith("-") else f"{name}={text}"


def number(name: str, text, expected: str, *, integer: bool = False, minimum: float | None = None,
           above: float | None = None, maximum: float | None = None) -> int | float:
    """text as an int (integer) or a finite float within [minimum, maximum]
    (or beyond `above`); else OptionValueError `<name> <text>: must be <expected>`."""
    try:
        value = int(str(text).strip()) if integer else float(str(text).strip())
    except ValueError:
        raise OptionValueError(f"{label(name, text)}: must be {expected}") from None
    if (not math.isfinite(value) or (minimum is not None and value < minimum)
            or (above is not None and not value > above) or (maximum is not None and value > maximum)):
        raise OptionValueError(f"{label(name, text)}: must be {expected}")
    return value


def choice(name: str, text, choices) -> str:
    """One of `choices`, as given."""
    if text not in choices:
        raise OptionValueError(f"{label(name, text)}: must be one of {', '.join(choices)}")
    return text


def switch(name: str, text) -> bool:
    """An on/off value: the usual spellings, `0` is off."""
    word = str(text).strip().lower()
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    raise OptionValueError(f"{label(name, text)}: must be on or off ({'/'.join(TRUE)} or {'/'.join(FALSE)})")


def core_counts(name: str, text: str | None, max_cores: int) -> tuple[int, ...]:
    """A comma-separated list of core counts, each 1..max_cores; None or
    empty: the target's maximum alone."""
    if text is None or not str(text).strip():
        return (max_cores,)
    expected = f"comma-separated core counts, each between 1 and {max_cores} (the target's cores), e.g. 1,{max_cores}"
    parts = [part.strip() for part in str(text).split(",")]
    if not all(parts):
        raise OptionValueError(f"{label(name, text)}: must be {expected}")
    return tuple(sorted({_core(name, text, part, expected, max_cores) for part in parts}))


def _core(name: str, text: str, part: str, expected: str, max_cores: int) -> int:
    try:
        return number(name, part, expected, integer=True, minimum=1, maximum=max_cores)
    except OptionValueError:
        raise OptionValueError(f"{label(name, text)}: must be {expected}") from None


def from_env(variable: str, default, parse, environ=None):
    """An environment variable's value through parse(variable, text), or
    default when it is unset or empty."""
    text = (os.environ if environ is None else environ).get(variable, "")
    return default if not text.strip() else parse(variable, text)


def env_number(variable: str, default, expected: str, environ=None, **limits):
    return from_env(variable, default, lambda name, text: number(name, text, expected, **limits), environ)


def env_switch(variable: str, default: bool = False, environ=None) -> bool:
    return from_env(variable, default, switch, environ)


def given(options: dict) -> dict:
    """The options a source gave: those not None. An unset or empty variable
    reads as None, and its option keeps the constructor's default."""
    return {name: value for name, value in options.items() if value is not None}
