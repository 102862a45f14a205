"""The board inventory: a TOML file that says which boards exist and how to
reach, flash, reset and power each one.

    [boards.gap9-a]
    platform = "gap9"                      # which firmware it runs (PLATFORMS)
    serial = "/dev/ttyUSB0"                # or socket://host:port, rfc2217://host:port
    baud = 115200
    flash = ["openocd", "-f", "board/gap9.cfg", "-c", "program {firmware} verify reset exit"]
    reset = ["openocd", "-f", "board/gap9.cfg", "-c", "init; reset run; exit"]
    power = ["usbrelay", "gap9-a={state}"]   # {state}: on or off
    max_cores = 8
    l1_bytes = 131072
    tags = ["gap9", "nightly"]

Commands are argv lists, never shell strings. Their {placeholders} are
{firmware} (the runner ELF to flash), {name}, {serial}, {baud}, {python}
(this interpreter), {state} (power only: on or off) and {tag:KEY} (a labgrid
place's tag KEY=value). Instead of an argv, flash, reset and power may name
a driver with a Python API and its parameters, as a table:

    power = {driver = "virtual_board", control = "127.0.0.1:7000"}

(harness/board/drivers/ says what a driver is). A [labgrid] table instead
takes boards from a labgrid coordinator (harness/board/labgrid_places.py).

Every mistake is one InventoryError naming the file, the board and the field.
"""
from __future__ import annotations

import os
import re
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.board import drivers
from harness.toml_input import TomlInputError, read_toml

# Which firmware a board runs, and what its counters count.
PLATFORMS = {
    "qemu-virt": "instructions, all harts",   # the virtual board: QEMU's global instruction count (icount)
    "gap8": "cycles",
    "gap9": "cycles",
    "vega": "cycles",
    "siracusa": "cycles",
}
PLACEHOLDERS = {"firmware", "name", "serial", "baud", "python"}
COMMANDS = tuple(drivers.PROTOCOLS)   # the fields a driver or a command serves: flash, reset, power
FIELDS = {"platform", "serial", "baud", *COMMANDS, "max_cores", "l1_bytes", "tags"}
LABGRID_FIELDS = {"coordinator", "reserve", "places", "board"}
URL_SCHEMES = ("socket://", "rfc2217://", "loop://", "spy://")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class InventoryError(Exception):
    """A malformed inventory or board; the message names the file, board and field."""


@dataclass(frozen=True)
class DriverSpec:
    """A flash, reset or power field that names a driver module and its parameters."""
    driver: str
    params: tuple[tuple[str, str | int | float | bool], ...] = ()

    def table(self) -> dict:
        return {"driver": self.driver, **dict(self.params)}


Field = tuple[str, ...] | DriverSpec     # an argv template, or a driver


@dataclass(frozen=True)
class Board:
    name: str
    platform: str
    serial: str
    baud: int
    flash: Field
    reset: Field = ()
    power: Field = ()
    max_cores: int = 8
    l1_bytes: int = 64 * 1024
    tags: tuple[str, ...] = ()

    @property
    def counter_unit(self) -> str:
        return PLATFORMS[self.platform]

    @property
    def port(self) -> str:
        """The port itself, whatever it is called: a device's resolved path
        (/dev/serial/by-id/... and /dev/ttyUSB0 are one port), or host:port
        of a socket:// or rfc2217:// URL. Leases are keyed by it."""
        return port_of(self.serial)

    def command(self, which: str, **values) -> list[str]:
        """The argv of flash, reset or power with its placeholders filled."""
        template = getattr(self, which)
        if isinstance(template, DriverSpec):
            raise TypeError(f"board {self.name}: field {which!r} is the driver {template.driver!r}, not a command")
        known = {"name": self.name, "serial": self.serial, "baud": str(self.baud), "python": sys.executable,
                 **{k: str(v) for k, v in values.items()}}
        return [_fill(arg, known) for arg in template]


@dataclass
class Inventory:
    path: Path
    boards: list[Board] = field(default_factory=list)
    labgrid: dict | None = None          # the [labgrid] table, checked

    def select(self, tags: list[str]) -> list[Board]:
        return [b for b in self.boards if all(t in b.tags for t in tags)]


def port_of(serial: str) -> str:
    if serial.startswith("/dev/"):
        return os.path.realpath(serial)
    match = re.match(r"^(?:socket|rfc2217)://([^/?#]+)", serial)
    if match:
        host, _, port = match.group(1).rpartition(":")
        host = host.lower().strip("[]")
        return f"{'127.0.0.1' if host in ('localhost', '::1', '') else host}:{port}"
    return serial


def _fill(arg: str, known: dict[str, str]) -> str:
    return string.Formatter().vformat(arg, (), known) if "{" in arg else arg


def _problem(path: Path, board: str | None, name: str | None, text: str) -> InventoryError:
    where = f"board {board}: " if board else ""
    where += f"field {name!r}: " if name else ""
    return InventoryError(f"{path}: {where}{text}")


def load(path: Path) -> Inventory:
    path = Path(path)
    try:
        data = read_toml(path)
    except TomlInputError as exc:
        raise InventoryError(f"board inventory {path}: {exc}") from None
    unknown = set(data) - {"boards", "labgrid"}
    if unknown:
        raise _problem(path, None, None, f"unknown top-level table(s) {sorted(unknown)}: an inventory has "
                                         f"[boards.NAME] tables and optionally [labgrid]")
    tables = data.get("boards", {})
    if not isinstance(tables, dict):
        raise _problem(path, None, "boards", "must be tables [boards.NAME]")
    inventory = Inventory(path, [parse_board(path, name, table) for name, table in tables.items()])
    check_ports(path, inventory.boards)
    if "labgrid" in data:
        inventory.labgrid = _parse_labgrid(path, data["labgrid"])
    if not inventory.boards and inventory.labgrid is None:
        raise _problem(path, None, None, "no boards: add a [boards.NAME] table (or a [labgrid] table)")
    return inventory


def check_ports(path: Path, boards: list[Board]) -> None:
    """One port is one board: two entries for it would not exclude each other."""
    seen: dict[str, Board] = {}
    for board in boards:
        other = seen.setdefault(board.port, board)
        if other is not board:
            raise _problem(path, board.name, "serial", f"{board.serial!r} is the port of board {other.name} too "
                                                       f"({board.port}); one port is one board: remove one entry "
                                                       f"or correct its serial")


def parse_board(path: Path, name: str, table, extra_placeholders: set[str] = frozenset()) -> Board:
    if not NAME.match(name):
        raise _problem(path, name, None, "a board name is letters, digits, '.', '_' and '-'")
    if not isinstance(table, dict):
        raise _problem(path, name, None, "must be a table of fields")
    unknown = set(table) - FIELDS
    if unknown:
        raise _problem(path, name, sorted(unknown)[0], f"unknown field; a board has {sorted(FIELDS)}")

    def need(key: str, kind, default=None, required=False):
        if key not in table:
            if required:
                raise _problem(path, name, key, "missing (required)")
            return default
        value = table[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise _problem(path, name, key, f"expected {kind.__name__}, got {value!r}")
        return value

    platform = need("platform", str, required=True)
    if platform not in PLATFORMS:
        raise _problem(path, name, "platform", f"{platform!r} is not one of {', '.join(PLATFORMS)}")
    serial = need("serial", str, required=True)
    if not (serial.startswith(URL_SCHEMES) or serial.startswith("/dev/") or serial.startswith("COM")):
        raise _problem(path, name, "serial", f"{serial!r} is neither a device (/dev/ttyUSB0) nor a URL "
                                             f"({', '.join(s + '...' for s in URL_SCHEMES)})")
    baud = need("baud", int, default=115200)
    if baud <= 0:
        raise _problem(path, name, "baud", f"must be a positive rate, got {baud}")
    commands = {}
    allowed = PLACEHOLDERS | set(extra_placeholders)
    for which in COMMANDS:
        if isinstance(table.get(which), dict):
            commands[which] = _driver_spec(path, name, which, table[which])
            continue
        argv = need(which, list, default=[], required=which == "flash")
        if not all(isinstance(a, str) for a in argv) or (which == "flash" and not argv):
            raise _problem(path, name, which, f"must be a non-empty list of strings (an argv, not a shell "
                                              f"string), got {argv!r}")
        for arg in argv:
            _check_placeholders(path, name, which, arg, allowed | ({"state"} if which == "power" else set()))
        commands[which] = tuple(argv)
    cores = need("max_cores", int, default=8)
    if not 1 <= cores <= 8:
        raise _problem(path, name, "max_cores", f"must be 1..8, got {cores}")
    l1 = need("l1_bytes", int, default=64 * 1024)
    if l1 <= 0:
        raise _problem(path, name, "l1_bytes", f"must be a positive number of bytes, got {l1}")
    tags = need("tags", list, default=[])
    if not all(isinstance(t, str) for t in tags):
        raise _problem(path, name, "tags", f"must be a list of strings, got {tags!r}")
    board = Board(name, platform, serial, baud, commands["flash"], commands["reset"], commands["power"],
                  cores, l1, tuple(tags))
    for which in COMMANDS:
        if isinstance(getattr(board, which), DriverSpec):
            try:
                drivers.make(board, which)    # the module imports and takes its parameters
            except ValueError as exc:
                raise _problem(path, name, which, str(exc)) from None
    return board


def _driver_spec(path: Path, board: str, which: str, table: dict) -> DriverSpec:
    driver = table.get("driver")
    if not isinstance(driver, str) or not driver:
        raise _problem(path, board, which, f"a table here names a driver: {{driver = \"MODULE\", ...}}; "
                                           f"got {table!r}")
    params = {k: v for k, v in table.items() if k != "driver"}
    bad = [k for k, v in params.items() if not isinstance(v, (str, int, float, bool))]
    if bad:
        raise _problem(path, board, which, f"driver parameter {bad[0]!r} must be a string, number or boolean, "
                                           f"got {params[bad[0]]!r}")
    return DriverSpec(driver, tuple(sorted(params.items())))


def _check_placeholders(path: Path, board: str, which: str, arg: str, allowed: set[str]) -> None:
    try:
        names = [(f, spec) for _, f, spec, _ in string.Formatter().parse(arg) if f is not None]
    except ValueError as exc:
        raise _problem(path, board, which, f"bad placeholder in {arg!r}: {exc} (write {{{{ for a brace)") from None
    for placeholder, spec in names:
        if placeholder == "tag" and spec and "tag:*" in allowed:
            continue   # {tag:KEY}: a labgrid place's tag
        if placeholder == "tag":
            raise _problem(path, board, which, f"{{tag:...}} in {arg!r} names a labgrid place's tag; it belongs "
                                               f"in [labgrid.board] only")
        if placeholder not in allowed or spec:
            raise _problem(path, board, which, f"unknown placeholder {{{placeholder}}} in {arg!r}; "
                                               f"known: {', '.join('{' + p + '}' for p in sorted(allowed))}")


def _parse_labgrid(path: Path, table) -> dict:
    if not isinstance(table, dict):
        raise _problem(path, "labgrid", None, "[labgrid] must be a table")
    unknown = set(table) - LABGRID_FIELDS
    if unknown:
        raise _problem(path, "labgrid", sorted(unknown)[0], f"unknown field; [labgrid] has {sorted(LABGRID_FIELDS)}")
    coordinator = table.get("coordinator", "127.0.0.1:20408")
    if not isinstance(coordinator, str) or ":" not in coordinator:
        raise _problem(path, "labgrid", "coordinator", f"expected 'HOST:PORT', got {coordinator!r}")
    reserve = table.get("reserve")
    if not isinstance(reserve, dict) or not reserve or not all(isinstance(v, str) for v in reserve.values()):
        raise _problem(path, "labgrid", "reserve", "expected the tags to reserve places by, e.g. "
                                                   "reserve = {board = \"gap9\"}")
    places = table.get("places", 1)
    if not isinstance(places, int) or isinstance(places, bool) or places < 1:
        raise _problem(path, "labgrid", "places", f"expected how many places to hold (>= 1), got {places!r}")
    board = table.get("board")
    if not isinstance(board, dict):
        raise _problem(path, "labgrid", "board", "expected [labgrid.board]: the fields every place's board "
                                                 "shares (platform, flash, ...), without serial")
    if "serial" in board:
        raise _problem(path, "labgrid", "board.serial", "comes from the place's exported serial port; remove it")
    # Checked now with a stand-in port, so a mistake shows before any place is reserved.
    parse_board(path, "labgrid-place", {**board, "serial": "rfc2217://host:1"}, {"tag:*"})
    return {"coordinator": coordinator, "reserve": dict(reserve), "places": places, "board": dict(board)}


def board_from_place(inventory: Inventory, place: str, serial: str, tags: dict[str, str]) -> Board:
    """The board of an acquired labgrid place: the [labgrid.board] fields,
    the place's serial port and its tags."""
    table = {**inventory.labgrid["board"], "serial": serial}
    table.setdefault("tags", sorted(f"{k}={v}" for k, v in tags.items()))

    def fill(match: re.Match) -> str:
        if match.group(1) not in tags:
            raise _problem(inventory.path, place, "labgrid.board", f"{{tag:{match.group(1)}}}: labgrid place "
                                                                  f"{place} has no tag {match.group(1)!r} "
                                                                  f"(its tags: {tags})")
        return tags[match.group(1)]
    for which in COMMANDS:
        if isinstance(table.get(which), list):
            table[which] = [re.sub(r"\{tag:([^}]+)\}", fill, arg) for arg in table[which]]
        elif isinstance(table.get(which), dict):
            table[which] = {k: re.sub(r"\{tag:([^}]+)\}", fill, v) if isinstance(v, str) else v
                            for k, v in table[which].items()}
    return parse_board(inventory.path, place, table)


def write(boards: list[Board], path: Path, header: str = "") -> str:
    """An inventory file for these boards (the virtual farm, acquired places)."""
    lines = [f"# {line}" for line in header.splitlines()]
    for b in boards:
        lines += ["", f"[boards.{b.name}]", f"platform = {_toml(b.platform)}", f"serial = {_toml(b.serial)}",
                  f"baud = {b.baud}"]
        for which in COMMANDS:
            spec = getattr(b, which)
            if isinstance(spec, DriverSpec):
                lines.append(f"{which} = {{{', '.join(f'{k} = {_toml(v)}' for k, v in spec.table().items())}}}")
            elif spec:
                lines.append(f"{which} = [{', '.join(_toml(a) for a in spec)}]")
        lines += [f"max_cores = {b.max_cores}", f"l1_bytes = {b.l1_bytes}",
                  f"tags = [{', '.join(_toml(t) for t in b.tags)}]"]
    text = "\n".join(lines).lstrip("\n") + "\n"
    if path is not None:
        Path(path).write_text(text)
    return text


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
