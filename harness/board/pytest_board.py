"""The board farm's part of the pytest plugin: its options, the session's
state directory, labgrid places held for the run, and the summary.

The controller makes the state directory and, for a [labgrid] inventory,
reserves and acquires the places and writes the inventory of their boards.
It writes all of it, and the farm's options, into the environment
(PTL_BOARDS, PTL_BOARD_STATE, PTL_BOARD_ATTEMPTS, ...), which the xdist
workers inherit: the transport from the controller to its workers. In each
process the board target gets them as constructor arguments, from the board
package's options_from_environment (harness/targets/board), which
make_target calls when the plugin makes its target.
Places are released at the end of the session, also on Ctrl-C, on a crash
(atexit) and on SIGTERM; the state directory is removed then too.

SIGTERM ends the run as Ctrl-C does: harness/pytest_plugin.py raises it as a
KeyboardInterrupt (pytest's interrupted path, exit status 2), so the reports
of the cases that finished are written and the places released.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from harness import option_values
from harness.board.inventory import InventoryError, load, write
from harness.targets.board import ATTEMPTS, QUARANTINE_AFTER, farm_options_from_environment

STATE_KEY = pytest.StashKey[dict]()


def add_options(parser) -> None:
    group = parser.getgroup("ptl-board", "board farm (--target board)")
    group.addoption("--boards", default=os.environ.get("PTL_BOARDS"), metavar="FILE.toml",
                    help="board inventory (harness/board/inventory.py); env PTL_BOARDS")
    group.addoption("--board-tags", default=os.environ.get("PTL_BOARD_TAGS", ""), metavar="TAG,...",
                    help="use only the boards that have all these tags")
    group.addoption("--board-attempts", default=None,
                    help="boards a case may try when a board or its link fails (transport, timeout, load); "
                         "default PTL_BOARD_ATTEMPTS, else 3")
    group.addoption("--board-quarantine-after", default=None,
                    help="consecutive failures that quarantine a board for the session; "
                         "default PTL_BOARD_QUARANTINE_AFTER, else 3")


# option -> (the board target's keyword, its default); each a whole number of at least 1
COUNTS = {"board_attempts": ("attempts", ATTEMPTS), "board_quarantine_after": ("quarantine_after", QUARANTINE_AFTER)}


def check_numbers(config) -> None:
    """The farm's number options (harness/option_values.py), replaced by
    their values; one not given is the board target's, from the environment
    (PTL_BOARD_ATTEMPTS, ...: the board package's options_from_environment)
    or its default. The board target's variables and the labgrid
    reservation's are checked whatever the target."""
    expected = "a whole number of at least 1"
    try:
        from_environment = farm_options_from_environment(os.environ)
        for option, (keyword, default) in COUNTS.items():
            given = getattr(config.option, option)
            setattr(config.option, option,
                    from_environment.get(keyword, default) if given is None
                    else option_values.number(f"--{option.replace('_', '-')}", given, expected, integer=True,
                                              minimum=1))
        option_values.env_number("PTL_LABGRID_RESERVE_TIMEOUT", 120.0, "a positive number of seconds", above=0)
    except option_values.OptionValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def configure(config) -> None:
    """Before the target is made: checks the options, puts them where the
    board target's options_from_environment reads them, and in the
    controller sets up the session's state (and labgrid places)."""
    if config.getoption("target") != "board":
        return
    boards = config.getoption("boards")
    if not boards:
        raise pytest.UsageError("--target board needs a board inventory: --boards FILE.toml (or PTL_BOARDS); "
                                "`python -m harness boards serve` starts virtual boards and writes one")
    os.environ["PTL_BOARD_ATTEMPTS"] = str(config.getoption("board_attempts"))
    os.environ["PTL_BOARD_QUARANTINE_AFTER"] = str(config.getoption("board_quarantine_after"))
    os.environ["PTL_BOARD_TAGS"] = config.getoption("board_tags")
    if hasattr(config, "workerinput"):
        return   # the controller's environment says the rest
    try:
        inventory = load(Path(boards))
    except InventoryError as exc:
        raise pytest.UsageError(str(exc)) from None
    state = {"dir": Path(tempfile.mkdtemp(prefix="ptl-board-session-")), "places": None}
    config.stash[STATE_KEY] = state      # unconfigure removes it, whatever happens next
    os.environ["PTL_BOARD_STATE"] = str(state["dir"])
    os.environ["PTL_BOARDS"] = str(Path(boards).resolve())
    if inventory.labgrid is not None:
        from harness.board.labgrid_places import LabgridError, LabgridPlaces
        places = LabgridPlaces(inventory)
        try:
            acquired = places.acquire()
        except LabgridError as exc:
            places.release()
            raise pytest.UsageError(f"labgrid: {exc}") from None
        state["places"] = places
        resolved = state["dir"] / "labgrid-boards.toml"
        write([*inventory.boards, *acquired], resolved, f"boards of {boards}, with the labgrid places acquired "
                                                        f"for this session")
        os.environ["PTL_BOARDS"] = str(resolved)


def unconfigure(config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if not state:
        return
    try:
        if state["places"] is not None:
            state["places"].release()
    finally:
        shutil.rmtree(state["dir"], ignore_errors=True)


def quarantined(target) -> list[str]:
    """Names of the boards quarantined in this session (the summary's list)."""
    if getattr(target, "name", None) != "board" or not target.boards:
        return []
    return sorted(target.farm.quarantined())


def summary(target) -> dict | None:
    """Per board: runs, failures, resends, resets, flashes (None off the board target)."""
    if getattr(target, "name", None) != "board" or not target.boards:
        return None
    return target.farm.summary()


def summary_lines(target) -> list[str]:
    counts = summary(target)
    if not counts:
        return []
    lines = ["ptl boards: " + "; ".join(f"{name} {c['runs']} runs, {c['failures']} failures, "
                                        f"{c['resends']} resends, {c['resets']} resets, {c['power_cycles']} power cycles, "
                                        f"{c['flashes']} flashes, {c['hangs']} hung cases"
                                        for name, c in sorted(counts.items()))]
    for name, why in sorted(target.farm.quarantined().items()):
        # The whole reason, a flash tool's stderr included: it is what the lab needs to fix the board.
        lines.append(f"ptl board QUARANTINED: {name}: " + "\n    ".join(why.splitlines()))
    return lines
