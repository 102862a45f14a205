"""The board target without boards: what it reports when a board's own
tools fail, and how its leases are keyed. Cheap: no QEMU, no firmware."""
import sys
import textwrap

from harness import failures
from harness.board import pytest_board
from harness.failures import CaseFailure
from harness.targets.board import BoardTarget

FLASH_FAILS = ("import sys; sys.stderr.write('Open On-Chip Debugger 0.12.0\\\\nInfo : probe found\\\\n"
               "Error: target gap9.cpu: examination failed\\\\n'); sys.exit(1)")


def test_the_quarantine_line_keeps_the_flash_tools_whole_stderr(tmp_path):
    (tmp_path / "boards.toml").write_text(textwrap.dedent(f"""\
        [boards.gap9-a]
        platform = "gap9"
        serial = "/dev/null"
        flash = ["{sys.executable}", "-c", "{FLASH_FAILS}"]
        """))
    target = BoardTarget(inventory=tmp_path / "boards.toml", state_dir=tmp_path / "state", attempts=1,
                         quarantine_after=1)
    (tmp_path / "fw").mkdir()
    (tmp_path / "fw" / "runner.elf").write_bytes(b"\x7fELF")
    try:
        target.run(tmp_path / "fw", b"payload", 5, tmp_path)
        raise AssertionError("a failed flash passed")
    except CaseFailure as failure:
        assert failure.kind == failures.LOAD
        assert failure.delivery == {"attempts": 1, "boards": "gap9-a", "failed_attempts": "load"}
    text = "\n".join(pytest_board.summary_lines(target))
    assert "ptl board QUARANTINED: gap9-a:" in text, text
    for line in ("Open On-Chip Debugger 0.12.0", "Info : probe found", "Error: target gap9.cpu: examination failed"):
        assert line in text, f"the quarantine line lost {line!r}:\n{text}"


def test_leases_are_keyed_by_the_port_so_two_names_for_one_port_exclude_each_other(tmp_path):
    import pytest
    from harness.board.farm import BoardFarm
    from harness.board.inventory import Board
    a = Board("bench-a", "gap9", "socket://localhost:4001", 115200, ("true",))
    b = Board("bench-b", "gap9", "rfc2217://127.0.0.1:4001", 115200, ("true",))   # the same port, another name
    first = BoardFarm([a], tmp_path / "s1", lock_dir=tmp_path / "locks")
    second = BoardFarm([b], tmp_path / "s2", lock_dir=tmp_path / "locks")     # another session, same machine
    assert first.lock_path(a) == second.lock_path(b)
    with first.lease():
        with pytest.raises(CaseFailure) as raised:
            with second.lease(wait=0.3):
                pass
    assert raised.value.kind == failures.TIMEOUT
    with second.lease() as lease:                 # free again once the first is released
        assert lease.board.name == "bench-b"
