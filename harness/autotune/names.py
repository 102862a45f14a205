"""How network and layer names become C identifiers and file names.

A network's names are free text in its TOML file; the tuner's C header
turns them into macros (`<LAYER>_TILE_CO_FW`, the include guard
`PTL_AUTOTUNE_<NETWORK>_H`) and its reports into file names (`<network>.h`,
`heatmap_<layer>_<step>.svg`). Both mappings are deterministic:

  C identifier  upper case; every character that is not an ASCII letter,
                digit or underscore becomes `_`; a result that starts with a
                digit or an underscore (reserved in C), or is empty, gets the
                prefix `LAYER_`. Every macro is a prefix and a suffix, so a
                layer named after a C keyword (`if`) is no keyword (`IF_...`).
  file name     every character other than an ASCII letter, digit, `_` or
                `-` becomes `_`, so no name holds a `/`, `..` or a leading
                dot, and every file stays in the reports dir. Two names with
                the same file name have the same C identifier.

Two layers whose names map to the same identifier (`if` and `IF`, `conv-1`
and `conv_1`) would define the same macros with different values: that is an
error naming both, before anything runs.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

_NOT_C = re.compile(r"[^A-Za-z0-9_]")
_NOT_FILE = re.compile(r"[^A-Za-z0-9_-]")


class NameCollision(ValueError):
    """Two layer names that map to the same C identifier."""


def c_identifier(name: str) -> str:
    """The upper-case C identifier a name becomes (the prefix of its macros)."""
    ident = _NOT_C.sub("_", name).upper()
    if not ident or ident[0].isdigit() or ident[0] == "_":
        ident = "LAYER_" + ident
    return ident


def file_stem(name: str) -> str:
    """A file name for a name: no path separators, no dots, never empty."""
    return _NOT_FILE.sub("_", name) or "_"


def macro_prefixes(layer_names: Iterable[str], where: str = "") -> dict[str, str]:
    """layer name -> its macro prefix; NameCollision names two layers whose
    prefixes are the same."""
    prefixes: dict[str, str] = {}
    owner: dict[str, str] = {}
    for name in layer_names:
        ident = c_identifier(name)
        if ident in owner and owner[ident] != name:
            raise NameCollision(f"{where}layers {owner[ident]!r} and {name!r} both become the C macro prefix "
                                f"{ident}_ in the tuner's header; expected names that differ in more than case "
                                f"and punctuation: rename one of them")
        owner[ident], prefixes[name] = name, ident
    return prefixes


def include_guard(network: str) -> str:
    """The header's include guard: PTL_AUTOTUNE_<NETWORK>_H, valid for any name."""
    return f"PTL_AUTOTUNE_{_NOT_C.sub('_', network).upper()}_H"
