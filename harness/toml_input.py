"""Reading a TOML file a user wrote (network descriptions, --expect files)."""
from __future__ import annotations

import tomllib
from pathlib import Path


class TomlInputError(Exception):
    """The file cannot be read or is not TOML; the message says which, without the path."""


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise TomlInputError(f"cannot read it: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TomlInputError(f"not valid TOML: {exc}") from None
