"""Lines for a reader that may stop early (`... | head`)."""
from __future__ import annotations

import os
import sys


def print_lines(lines: list[str]) -> None:
    """Prints the lines; a reader that closed the pipe has what it wanted:
    no traceback, and no second error when Python flushes stdout at exit."""
    try:
        print("\n".join(lines), flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
