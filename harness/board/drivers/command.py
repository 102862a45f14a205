"""The command driver: a board's flash, reset or power field as an argv
template of the inventory, run as a program (openocd, a relay tool,
labgrid-client, ...). Its {placeholders} are filled per call
(harness/board/inventory.py lists them); {state} is on or off."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from harness import failures
from harness.board.drivers.base import BoardFault

COMMAND_TIMEOUT = 120.0
STDERR_LINES = 200      # of a failed command's output kept in its message (and the quarantine line)


def make(board, field: str, params: dict) -> "Command":
    argv = params.get("argv")
    if set(params) != {"argv"} or not isinstance(argv, tuple) or not argv:
        raise ValueError("the command driver takes one parameter, argv: a non-empty list of strings")
    return Command(board, field, argv)


class Command:
    def __init__(self, board, field: str, argv: tuple[str, ...], timeout: float = COMMAND_TIMEOUT):
        self.board, self.field, self.argv, self.timeout = board, field, argv, timeout

    def flash(self, firmware: Path) -> None:
        self.run(firmware=firmware)

    def reset(self) -> None:
        self.run()

    def power(self, on: bool) -> None:
        self.run(state="on" if on else "off")

    def missing(self) -> str | None:
        program = self.board.command(self.field, firmware="x", state="on")[0]
        if shutil.which(program) is None and not Path(program).is_file():
            return f"{program} is not installed"
        return None

    def run(self, **values) -> str:
        """Runs the command; returns its output. Raises BoardFault(load) when
        it is missing, fails or hangs."""
        board, which = self.board, self.field
        argv = board.command(which, **values)
        shown = " ".join(argv)
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout,
                                    stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise BoardFault(failures.LOAD, f"board {board.name}: field '{which}': program {argv[0]!r} not found "
                                            f"(install it, or fix the inventory)") from None
        except subprocess.TimeoutExpired:
            raise BoardFault(failures.LOAD, f"board {board.name}: field '{which}': `{shown}` did not finish "
                                            f"within {self.timeout:g} s") from None
        except OSError as exc:
            raise BoardFault(failures.LOAD, f"board {board.name}: field '{which}': cannot run {argv[0]!r}: "
                                            f"{exc.strerror or exc}") from None
        if result.returncode != 0:
            lines = (result.stderr or result.stdout).strip().splitlines()
            if len(lines) > STDERR_LINES:     # a tool that printed its whole log: its end says why
                lines = [f"({len(lines) - STDERR_LINES} earlier lines left out)", *lines[-STDERR_LINES:]]
            tail = "\n  ".join(lines) or "(no output)"
            raise BoardFault(failures.LOAD, f"board {board.name}: field '{which}': `{shown}` failed "
                                            f"(exit {result.returncode}):\n  {tail}")
        return result.stdout
