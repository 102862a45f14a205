"""Boards from a labgrid coordinator: the farm on many machines.

Each board is a labgrid place whose tags say what it is and whose
NetworkSerialPort (a labgrid exporter runs ser2net on the board's serial
device) is its console. The inventory's [labgrid] table says which
coordinator, how many places and which tags to reserve them by, and the
fields every place's board shares (platform, flash/reset/power templates,
which may use the place's tags as {tag:KEY}).

For a run, the harness reserves the places (waiting while others hold
them), acquires them, reads each place's serial port, and releases them at
the end: also on Ctrl-C, on an exception (atexit) and on SIGTERM. Only a
SIGKILL leaves them acquired; `labgrid-client -p PLACE release` frees one.

It drives labgrid through `labgrid-client`, the interface labgrid documents
(reserve, acquire, show, release, cancel-reservation).
"""
from __future__ import annotations

import ast
import atexit
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness import option_values
from harness.board.inventory import Board, Inventory, board_from_place



def reserve_timeout() -> float:
    """Seconds to wait for a reservation: PTL_LABGRID_RESERVE_TIMEOUT, else 120."""
    return option_values.env_number("PTL_LABGRID_RESERVE_TIMEOUT", 120.0, "a positive number of seconds", above=0)


# Seconds an acquire is tried again while the exporter still holds a place's
# resources from its last holder (a place released a moment before).
ACQUIRE_RETRY_S = 20.0


class LabgridError(Exception):
    """labgrid could not give the places; the message says what it answered."""


def client_program() -> str:
    beside = Path(sys.executable).parent / "labgrid-client"
    found = str(beside) if beside.exists() else shutil.which("labgrid-client")
    if found is None:
        raise LabgridError("labgrid-client is not installed (pip install labgrid, see pyproject.toml)")
    return found


class LabgridPlaces:
    def __init__(self, inventory: Inventory):
        self.inventory = inventory
        self.config = inventory.labgrid
        self.coordinator = self.config["coordinator"]
        self.held: list[tuple[str, str]] = []      # (place, reservation token)
        self._released = False

    def client(self, *args: str, place: str | None = None, timeout: float = 60.0) -> str:
        argv = [client_program(), "-x", self.coordinator, *(["-p", place] if place else []), *args]
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise LabgridError(f"`labgrid-client {' '.join(args)}` did not answer within {timeout:g} s "
                               f"(coordinator {self.coordinator})") from None
        if result.returncode != 0:
            text = (result.stderr or result.stdout).strip().splitlines()
            raise LabgridError(f"`labgrid-client {' '.join(args)}` failed: {text[-1] if text else 'no output'} "
                               f"(coordinator {self.coordinator})")
        return result.stdout

    def acquire(self) -> list[Board]:
        """Reserves, acquires and describes the places; releases what it got
        if any step fails."""
        atexit.register(self.release)
        _release_on_sigterm()
        tags = [f"{k}={v}" for k, v in self.config["reserve"].items()]
        boards = []
        try:
            for _ in range(self.config["places"]):
                out = self.client("reserve", "--wait", "--shell", *tags, timeout=reserve_timeout())
                match = re.search(r"LG_TOKEN=(\S+)", out)
                if not match:
                    raise LabgridError(f"reserve answered without a token: {out.strip()!r}")
                token = match.group(1)
                place = self._allocated(token)
                self.held.append((place, token))   # first: an acquire cut short by Ctrl-C is released too
                self._acquire(place)
                boards.append(self.board_of(place))
        except BaseException:                      # LabgridError, and KeyboardInterrupt half way
            self.release()
            raise
        return boards

    def _acquire(self, place: str) -> None:
        """Acquires a reserved place. Right after another client released it,
        the exporter may still hold its resources for a moment (the
        coordinator answers "Failed to acquire resources"): that answer is
        retried for ACQUIRE_RETRY_S, any other fails at once."""
        deadline = time.monotonic() + ACQUIRE_RETRY_S
        while True:
            try:
                self.client("acquire", place=place)
                return
            except LabgridError as exc:
                if "Failed to acquire resources" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(0.5)

    def _allocated(self, token: str) -> str:
        out = self.client("show", place=f"+{token}")
        match = re.match(r"Place '([^']+)'", out.strip())
        if not match:
            raise LabgridError(f"reservation {token} names no place: {out.strip()[:200]!r}")
        return match.group(1)

    def board_of(self, place: str) -> Board:
        """The acquired place as a board: its tags and exported serial port."""
        out = self.client("show", place=place)
        tags = {}
        tag_line = re.search(r"^\s*tags:\s*(.*)$", out, re.MULTILINE)
        for item in (tag_line.group(1).split(",") if tag_line else []):
            key, _, value = item.strip().partition("=")
            if key:
                tags[key] = value
        params = _serial_port_params(out)
        if params is None or not params.get("port"):
            raise LabgridError(f"place {place} exports no usable NetworkSerialPort (labgrid-client -p {place} show)")
        serial = f"rfc2217://{params['host']}:{params['port']}"
        return board_from_place(self.inventory, place, serial, tags)

    def release(self) -> None:
        """Releases every place held and cancels the reservations; safe to call twice."""
        while self.held:
            place, token = self.held.pop()
            try:
                self.client("release", place=place, timeout=30)
            except LabgridError as exc:
                print(f"ptl: labgrid: {exc}", file=sys.stderr)
            try:
                self.client("cancel-reservation", token, timeout=30)
            except LabgridError:
                pass   # an allocated reservation that was used may be gone already


def _serial_port_params(show: str) -> dict | None:
    """The params of the NetworkSerialPort in `labgrid-client show` output."""
    lines = show.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Acquired resource") and "NetworkSerialPort" in line:
            block = []
            for following in lines[i + 1:]:
                if following and not following[0].isspace():
                    break
                block.append(following)
            try:
                return ast.literal_eval("\n".join(block).strip()).get("params")
            except (ValueError, SyntaxError):
                return None
    return None


_installed = False


def _release_on_sigterm() -> None:
    """SIGTERM becomes SystemExit, so atexit releases the places."""
    global _installed
    if _installed or signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    _installed = True


# ---- virtual boards as labgrid places (tests, and the README's walk-through) ---------------

def exporter_config(boards) -> str:
    """labgrid-exporter's YAML for virtual boards with pty consoles: one
    group per board, its pty as a RawSerialPort (the exporter serves it
    through ser2net)."""
    return "".join(f"{b.name}:\n  RawSerialPort:\n    port: {b.tty}\n    speed: 115200\n" for b in boards)


def place_commands(boards, exporter: str, control: str, tags: dict[str, str]) -> list[list[str]]:
    """labgrid-client arguments that make one place per virtual board, tagged
    with `tags` plus where its control server is."""
    commands = []
    for b in boards:
        place = f"ptl-{b.name}"
        commands += [["-p", place, "create"],
                     ["-p", place, "add-match", f"{exporter}/{b.name}/NetworkSerialPort"],
                     ["-p", place, "set-tags", *(f"{k}={v}" for k, v in tags.items()),
                      f"vboard={b.name}", f"control={control}"]]
    return commands


VIRTUAL_PLACE_BOARD = {
    "platform": "qemu-virt",
    "flash": ["{python}", "-m", "harness", "boards", "control", "{tag:control}", "{tag:vboard}", "flash", "{firmware}"],
    "reset": ["{python}", "-m", "harness", "boards", "control", "{tag:control}", "{tag:vboard}", "reset"],
    "power": ["{python}", "-m", "harness", "boards", "control", "{tag:control}", "{tag:vboard}", "power", "{state}"],
}
