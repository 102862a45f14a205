"""The farm on many machines: a real labgrid-coordinator and labgrid-exporter
on the loopback export two virtual boards (their ptys, through the ser2net
the exporter starts), the harness reserves and acquires the places by tag,
runs cases on their RFC 2217 ports, and releases the places at the end."""
import json
import shutil

import pytest

from harness.board.labgrid_places import VIRTUAL_PLACE_BOARD
from harness.board.virtual import VirtualFarm
from tests.board_support import labgrid_lab, lab_client, suite_run


def labgrid_inventory(path, coordinator: str, places: int) -> None:
    board = "\n".join(f"{key} = {json.dumps(value)}" for key, value in VIRTUAL_PLACE_BOARD.items())
    path.write_text(f'[labgrid]\ncoordinator = "{coordinator}"\nplaces = {places}\n'
                    f'reserve = {{ farm = "ptl-test" }}\n\n[labgrid.board]\n{board}\n')


@pytest.mark.skipif(shutil.which("ser2net") is None, reason="the labgrid exporter needs ser2net (Debian package "
                                                            "ser2net; .ci/run installs it)")
def test_cases_run_on_reserved_labgrid_places_which_are_released_afterwards(tmp_path):
    with VirtualFarm(2, "pty", tmp_path / "boards") as farm, \
            labgrid_lab(farm, tmp_path / "lab", {"farm": "ptl-test"}) as coordinator:
        inventory = tmp_path / "labgrid.toml"
        labgrid_inventory(inventory, coordinator, places=2)
        result, summary, rows = suite_run(tmp_path, inventory, "-n", "2")
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
        assert summary["outcomes"] == {"passed": 20}
        # Both places took part, under their place names, and nothing is held now.
        boards = summary["boards"]
        assert set(boards) == {"ptl-vb0", "ptl-vb1"}
        assert sum(b["runs"] for b in boards.values()) >= 10   # 10 cases, plus describing a fresh firmware
        assert summary["quarantined"] == []
        who = lab_client(coordinator, "who").strip().splitlines()
        assert len(who) == 1, f"places still acquired after the run:\n{who}"   # the header line only
        places = lab_client(coordinator, "places", "--acquired").strip()
        assert places == "", places
