"""The board farm's part of the pytest plugin: its options, the session's
state directory, labgrid places held for the run, and the summary.

The controller makes the state directory and, for a [labgrid] inventory,
reserves and acquires the places and writes the inventory of their boards.
It hands all of it to the target, and to the xdist workers, through the
environment (PTL_BOARDS, PTL_BOARD_STATE, ...), which workers inherit.
Places are released at the end of the session, also on Ctrl-C, on a crash
(atexit) and on SIGTERM; the state directory is removed then too.

SIGTERM ends the run as Ctrl-C does (the reports and summary of the cases
that finished are written, the places released), with exit status 143. It
is raised as a KeyboardInterrupt: a SystemExit inside the test loop is
pytest's INTERNALERROR (a traceback, exit status 3), and pytest.exit's
exception is an Exception, which the board link's handlers of a failing
port would take for a broken cable.
"""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from harness.board.inventory import InventoryError, load, write

STATE_KEY = pytest.StashKey[dict]()


def add_options(parser) -> None:
    group = parser.getgroup("ptl-board", "board farm (--target board)")
    group.addoption("--boards", default=os.environ.get("PTL_BOARDS"), metavar="FILE.toml",
                    help="board inventory (harness/board/inventory.py); env PTL_BOARDS")
    group.addoption("--board-tags", default=os.environ.get("PTL_BOARD_TAGS", ""), metavar="TAG,...",
                    help="use only the boards that have all these tags")
    group.addoption("--board-attempts", type=int, default=int(os.environ.get("PTL_BOARD_ATTEMPTS", 3)),
                    help="boards a case may try when a board or its link fails (transport, timeout, load)")
    group.addoption("--board-quarantine-after", type=int,
                    default=int(os.environ.get("PTL_BOARD_QUARANTINE_AFTER", 3)),
                    help="consecutive failures that quarantine a board for the session")


def configure(config) -> None:
    """Before the target is made: checks the options, and in the controller
    sets up the session's state (and labgrid places)."""
    if config.getoption("target") != "board":
        return
    boards = config.getoption("boards")
    if not boards:
        raise pytest.UsageError("--target board needs a board inventory: --boards FILE.toml (or PTL_BOARDS); "
                                "`python -m harness boards serve` starts virtual boards and writes one")
    for option in ("board_attempts", "board_quarantine_after"):
        if config.getoption(option) < 1:
            raise pytest.UsageError(f"--{option.replace('_', '-')} {config.getoption(option)}: must be at least 1")
    os.environ["PTL_BOARD_ATTEMPTS"] = str(config.getoption("board_attempts"))
    os.environ["PTL_BOARD_QUARANTINE_AFTER"] = str(config.getoption("board_quarantine_after"))
    os.environ["PTL_BOARD_TAGS"] = config.getoption("board_tags")
    if hasattr(config, "workerinput"):
        return   # the controller's environment says the rest
    try:
        inventory = load(Path(boards))
    except InventoryError as exc:
        raise pytest.UsageError(str(exc)) from None
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
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


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is; pytest ends the session as on Ctrl-C."""


_terminated = False


def _exit_on_sigterm(signum, frame) -> None:
    global _terminated
    _terminated = True
    signal.signal(signal.SIGTERM, signal.SIG_DFL)     # a second SIGTERM ends it at once
    raise Terminated("stopped by SIGTERM: the reports are those of the cases that finished; the board leases "
                     "and labgrid places are released")


def exit_status(session) -> None:
    """At the end of a session that SIGTERM stopped: exit status 128 + SIGTERM, as a killed process's."""
    if _terminated:
        session.exitstatus = 128 + signal.SIGTERM


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
