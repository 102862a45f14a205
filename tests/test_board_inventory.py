"""The board inventory: every mistake is one message naming the file, the
board and the field, and the board target and the pytest option turn it
into a usage error without a traceback."""
import os
import subprocess
import sys

import pytest

from harness.board import drivers
from harness.board.inventory import InventoryError, load, write
from harness.targets.board import BoardTarget

GOOD = """\
[boards.gap9-a]
platform = "gap9"
serial = "/dev/ttyUSB0"
baud = 115200
flash = ["openocd", "-f", "board/gap9.cfg", "-c", "program {firmware} verify reset exit"]
reset = ["openocd", "-f", "board/gap9.cfg", "-c", "init; reset run; exit"]
power = ["usbrelay", "gap9-a={state}"]
max_cores = 8
l1_bytes = 131072
tags = ["gap9", "nightly"]
"""


def inventory(tmp_path, text: str):
    path = tmp_path / "boards.toml"
    path.write_text(text)
    return path


def edited(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


def test_a_good_inventory_reads_back_and_writes_the_same_boards(tmp_path):
    boards = load(inventory(tmp_path, GOOD)).boards
    assert [(b.name, b.platform, b.serial, b.max_cores, b.tags) for b in boards] == \
        [("gap9-a", "gap9", "/dev/ttyUSB0", 8, ("gap9", "nightly"))]
    assert boards[0].command("flash", firmware="/x/runner.elf")[-1] == "program /x/runner.elf verify reset exit"
    assert boards[0].command("power", state="off") == ["usbrelay", "gap9-a=off"]
    again = tmp_path / "again.toml"
    write(boards, again)
    assert load(again).boards == boards


@pytest.mark.parametrize("text, field, words", [
    (edited('serial = "/dev/ttyUSB0"\n', ""), "serial", "missing"),
    (edited('"/dev/ttyUSB0"', '"http://farm:4000"'), "serial", "neither a device"),
    (edited('platform = "gap9"', 'platform = "gap10"'), "platform", "not one of"),
    (edited('flash = ["openocd", "-f", "board/gap9.cfg", "-c", "program {firmware} verify reset exit"]',
            'flash = "openocd -f board/gap9.cfg"'), "flash", "expected list"),
    (edited("{firmware}", "{elf}"), "flash", "unknown placeholder {elf}"),
    (edited('"gap9-a={state}"', '"gap9-a={firmware"'), "power", "bad placeholder"),
    (edited("max_cores = 8", "max_cores = 9"), "max_cores", "must be 1..8"),
    (edited("baud = 115200", 'baud = "fast"'), "baud", "expected int"),
    (edited("tags = [", "colour = 1\ntags = ["), "colour", "unknown field"),
], ids=["missing-serial", "bad-url", "platform", "shell-string", "placeholder", "brace", "cores", "baud",
        "unknown-field"])
def test_each_mistake_names_the_file_the_board_and_the_field(tmp_path, text, field, words):
    path = inventory(tmp_path, text)
    with pytest.raises(InventoryError) as raised:
        load(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: board gap9-a: field '{field}': "), message
    assert words in message, message


@pytest.mark.parametrize("text, words", [
    ("[boards.a\nplatform = 1\n", "board inventory"),
    ("", "no boards"),
    ("[farm]\nx = 1\n", "unknown top-level table"),
    ('[labgrid]\nreserve = {board = "gap9"}\n[labgrid.board]\nplatform = "gap9"\nserial = "/dev/x"\n'
     'flash = ["x"]\n', "comes from the place's exported serial port"),
])
def test_a_malformed_file_is_one_message_naming_it(tmp_path, text, words):
    path = inventory(tmp_path, text)
    with pytest.raises(InventoryError) as raised:
        load(path)
    assert str(path) in str(raised.value) and words in str(raised.value), raised.value


def test_a_missing_command_makes_the_target_unavailable_naming_board_and_field(tmp_path):
    text = edited('"openocd", "-f", "board/gap9.cfg", "-c", "program', '"ptl-no-such-flasher", "-c", "program')
    reason = BoardTarget(inventory=inventory(tmp_path, text), state_dir=tmp_path / "state").unavailable_reason()
    assert reason is not None and "board gap9-a: field flash: ptl-no-such-flasher" in reason, reason


def test_the_pytest_option_reports_a_bad_inventory_as_a_usage_error_without_a_traceback(tmp_path):
    path = inventory(tmp_path, edited('"/dev/ttyUSB0"', '"http://farm:4000"'))
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "act", "--collect-only", "-q",
                             "--target", "board", "--boards", str(path)], capture_output=True, text=True,
                            timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 4, output           # pytest's usage error
    assert "board gap9-a: field 'serial'" in output, output
    assert "Traceback" not in output, output


def test_without_an_inventory_the_board_target_says_how_to_get_one(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "act", "--collect-only", "-q",
                             "--target", "board"], capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "PTL_BOARDS"})
    output = result.stdout + result.stderr
    assert result.returncode == 4 and "--boards FILE.toml" in output and "boards serve" in output, output
    assert "Traceback" not in output, output


@pytest.mark.parametrize("first, second", [
    ("/dev/ttyUSB0", "/dev/../dev/ttyUSB0"),                 # one device under two paths
    ("socket://localhost:4001", "rfc2217://127.0.0.1:4001"),   # one TCP port under two names
])
def test_one_port_under_two_board_names_is_an_error_naming_both(tmp_path, first, second):
    text = GOOD.replace('serial = "/dev/ttyUSB0"', f'serial = "{first}"') + \
        GOOD.replace("[boards.gap9-a]", "[boards.gap9-b]").replace('serial = "/dev/ttyUSB0"', f'serial = "{second}"')
    with pytest.raises(InventoryError) as raised:
        load(inventory(tmp_path, text))
    message = str(raised.value)
    assert "\n" not in message and "gap9-a" in message and "gap9-b" in message and "'serial'" in message, message


def test_a_device_and_its_symlink_are_one_port(tmp_path):
    device = tmp_path / "dev-ttyUSB0"
    device.write_text("")
    link = tmp_path / "by-id-usb-FTDI"
    link.symlink_to(device)
    from harness.board.inventory import port_of
    # /dev/serial/by-id/... is a symlink to /dev/ttyUSB*: resolved, both are the device.
    assert port_of(str(link).replace(str(tmp_path), "/dev/../" + str(tmp_path))) == str(device.resolve())


DRIVER = 'power = {driver = "virtual_board", control = "127.0.0.1:7000", board = "vb3"}'


def test_a_field_may_name_a_python_driver_whose_table_reads_back_and_writes_the_same(tmp_path):
    boards = load(inventory(tmp_path, edited('power = ["usbrelay", "gap9-a={state}"]', DRIVER))).boards
    switch = drivers.make(boards[0], "power")
    assert (type(switch).__name__, switch.control, switch.name) == ("VirtualBoardDriver", "127.0.0.1:7000", "vb3")
    assert isinstance(drivers.flasher(boards[0]), drivers.Flasher)     # the argv fields stay commands
    again = tmp_path / "again.toml"
    write(boards, again)
    assert load(again).boards == boards


@pytest.mark.parametrize("table, words", [
    ('{driver = "ptl_no_such_driver"}', "no driver 'ptl_no_such_driver'"),
    ('{control = "127.0.0.1:7000"}', "names a driver"),
    ('{driver = "virtual_board", control = 7000}', "needs control"),
    ('{driver = "virtual_board", control = "h:1", colour = "red"}', "unknown parameter(s) ['colour']"),
    ('{driver = "serial_port"}', "is not a board driver"),
    ('{driver = "virtual_board", control = "h:1", board = ["vb0"]}', "must be a string, number or boolean"),
], ids=["unknown", "no-driver-key", "bad-param", "unknown-param", "not-a-driver", "param-type"])
def test_a_bad_driver_table_is_one_message_naming_the_board_and_field(tmp_path, table, words):
    path = inventory(tmp_path, edited('["usbrelay", "gap9-a={state}"]', table))
    with pytest.raises(InventoryError) as raised:
        load(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: board gap9-a: field 'power': "), message
    assert words in message, message


def test_a_new_driver_is_one_module_anywhere_on_the_path(tmp_path, monkeypatch):
    # A power switch with a Python API, outside the harness: one module with make().
    (tmp_path / "lab_relay.py").write_text(
        "from pathlib import Path\n"
        "class Relay:\n"
        "    def __init__(self, log):\n"
        "        self.log = Path(log)\n"
        "    def power(self, on):\n"
        "        with self.log.open('a') as f:\n"
        "            f.write('on\\n' if on else 'off\\n')\n"
        "    def reset(self):\n"
        "        raise OSError('relay 3 does not answer')\n"
        "def make(board, field, params):\n"
        "    return Relay(params['log'])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    log = tmp_path / "relay.log"
    table = f'{{driver = "lab_relay", log = "{log}"}}'
    board = load(inventory(tmp_path, edited('["usbrelay", "gap9-a={state}"]', table))).boards[0]
    switch = drivers.power_switch(board)
    switch.power(False)
    switch.power(True)
    assert log.read_text() == "off\non\n"
    # What a driver raises is the board's load failure, in one line.
    board = load(inventory(tmp_path, edited('["openocd", "-f", "board/gap9.cfg", "-c", "init; reset run; exit"]',
                                            table))).boards[0]
    with pytest.raises(drivers.BoardFault) as raised:
        drivers.resetter(board).reset()
    assert raised.value.kind == "load" and raised.value.message == \
        "board gap9-a: field 'reset': reset() failed: OSError: relay 3 does not answer", raised.value.message
    # The same module lacks flash(): named as such when a field needs it.
    path = inventory(tmp_path, edited('["openocd", "-f", "board/gap9.cfg", "-c", "program {firmware} verify reset exit"]',
                                      table))
    with pytest.raises(InventoryError, match="field 'flash': driver 'lab_relay' has no flash"):
        load(path)
