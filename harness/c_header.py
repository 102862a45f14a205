"""Numbers the runtime's C headers state, read from the headers themselves.

The runners and the harness share a wire format, status codes, exit statuses
and memory maps. Each fact is written once, in C, where the runtime needs it
at compile time; Python reads it from there, so the two cannot drift apart.

A header's numbers are its `#define NAME number` lines and its enum entries
`NAME = number` (decimal, hex with an optional `u`, or a character constant
such as 'K').
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


@lru_cache(maxsize=None)
def numbers(header: str | Path) -> dict[str, int]:
    """NAME -> value of every number the header defines; header is a path,
    or a name under runtime/include."""
    path = Path(header) if "/" in str(header) else RUNTIME / "include" / header
    text = _COMMENT.sub(" ", path.read_text())
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
