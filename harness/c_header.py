"""Numbers the runtime's C headers state, read from the headers themselves.

The runners and the harness share a wire format, status codes, exit statuses
and memory maps. Each fact is written once, in C, where the runtime needs it
at compile time; Python reads it from there, so the two cannot drift apart.

A header's numbers are its `#define NAME number` lines and its enum entries
`NAME = number` (decimal, hex with an optional `u`, or a character constant
such as 'K'); its strings are its `#define NAME "text"` lines.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

RUNTIME = Path(__file__).resolve().parent / "runtime"

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_VALUE = r"(0x[0-9a-fA-F]+|\d+|'.')u?"
_DEFINE = re.compile(rf"^[ \t]*#define[ \t]+(\w+)[ \t]+{_VALUE}[ \t]*$", re.M)
_ENUM_ENTRY = re.compile(rf"\b(\w+)\s*=\s*{_VALUE}\s*[,}}]")
_STRING = re.compile(r'^[ \t]*#define[ \t]+(\w+)[ \t]+"([^"\\]*)"[ \t]*$', re.M)


def _path(header: str | Path) -> Path:
    return Path(header) if "/" in str(header) else RUNTIME / "include" / header


@lru_cache(maxsize=None)
def numbers(header: str | Path) -> dict[str, int]:
    """NAME -> value of every number the header defines; header is a path,
    or a name under runtime/include."""
    text = _COMMENT.sub(" ", _path(header).read_text())
    found = {}
    for pattern in (_DEFINE, _ENUM_ENTRY):
        for match in pattern.finditer(text):
            value = match.group(2)
            found[match.group(1)] = ord(value[1]) if value.startswith("'") else int(value, 0)
    return found


def number(header: str | Path, name: str) -> int:
    """One number of a header; KeyError naming the header when it has none."""
    values = numbers(header)
    if name not in values:
        raise KeyError(f"{Path(header).name} defines no {name}")
    return values[name]


def prefixed(header: str | Path, prefix: str) -> dict[str, int]:
    """The numbers whose names start with prefix, keyed by the rest."""
    return {name[len(prefix):]: value for name, value in numbers(header).items() if name.startswith(prefix)}


def string(header: str | Path, name: str) -> str:
    """A `#define NAME "text"` of a header (no escapes); KeyError naming the header when it has none."""
    found = dict(_STRING.findall(_COMMENT.sub(" ", _path(header).read_text())))
    if name not in found:
        raise KeyError(f"{Path(header).name} defines no string {name}")
    return found[name]
