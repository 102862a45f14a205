"""The farm on many machines: a real labgrid-coordinator and labgrid-exporter
on the loopback export two virtual boards (their ptys, through the ser2net
the exporter starts), the harness reserves and acquires the places by tag,
runs cases on their RFC 2217 ports, and releases the places at the end, and
also when the run is interrupted with Ctrl-C or SIGTERM."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from harness.board.virtual import VirtualFarm
from tests.board_support import ROOT, lab_client, labgrid_inventory, labgrid_lab, suite_run


@pytest.mark.skipif(shutil.which("ser2net") is None, reason="the labgrid exporter needs ser2net (Debian package "
                                                            "ser2net; .ci/run installs it)")
def test_cases_run_on_reserved_labgrid_places_which_are_released_afterwards_and_on_ctrl_c(tmp_path):
    with VirtualFarm(2, "pty", tmp_path / "boards") as farm, \
            labgrid_lab(farm, tmp_path / "lab", {"farm": "ptl-test"}) as coordinator:
        inventory = tmp_path / "labgrid.toml"
        labgrid_inventory(inventory, coordinator, places=2, reserve={"farm": "ptl-test"})
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

        # Ctrl-C, and SIGTERM, in the middle of a run release the places too, without a traceback,
        # and leave nothing in the temporary directory.
        scratch = tmp_path / "tmp"
        scratch.mkdir()
        for stop, status in ((signal.SIGINT, 2), (signal.SIGTERM, 2)):   # pytest's interrupted, for both
            output, returncode = _stopped_run(coordinator, inventory, tmp_path / f"stopped-{stop.name}", scratch, stop)
            assert returncode == status, f"{stop.name}: exit {returncode}\n{output[-3000:]}"
            assert "INTERNALERROR" not in output and "Traceback" not in output, output[-3000:]
            places = lab_client(coordinator, "places", "--acquired").strip()
            assert places == "", f"places still acquired after {stop.name}:\n{places}\n{output[-2000:]}"
            left = sorted(p.name for p in scratch.iterdir() if p.name != "ptl-board-locks")   # machine-wide, kept
            assert left == [], f"{stop.name} left {left} in the temporary directory"


def _stopped_run(coordinator, inventory, reports, scratch, stop) -> tuple[str, int]:
    """A board run of many cases, sent `stop` once it holds both places and runs cases."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PTL_BOARD"))}
    env["TMPDIR"] = str(scratch)
    run = subprocess.Popen([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "linalg", "-q", "-p", "no:randomly",
                            "-k", "matmul and fp32", "--target", "board", "--boards", str(inventory),
                            "--ptl-cache", str(ROOT / ".cache" / "ptl"), "--reports-dir", str(reports)],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(lab_client(coordinator, "places", "--acquired").split()) < 2:
            assert run.poll() is None and time.monotonic() < deadline, \
                f"the run never acquired the places (exit {run.poll()}):\n" + \
                (run.stdout.read()[-3000:] if run.poll() is not None else "")
            time.sleep(0.3)
        # Holding both places, the run is in its cases (or about to start them): either way it
        # must release both and leave nothing behind.
        run.send_signal(stop)
        try:
            output, _ = run.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the run did not end within 300 s of {stop.name}")
    finally:
        run.kill()
    return output, run.returncode


def test_an_acquire_refused_while_the_exporter_still_holds_the_resources_is_tried_again(monkeypatch):
    # No coordinator: the client's answers are scripted. The refusal that a
    # place released a moment ago gets is retried; any other answer is final.
    from harness.board import labgrid_places
    from harness.board.labgrid_places import LabgridError, LabgridPlaces
    monkeypatch.setattr(labgrid_places.time, "sleep", lambda seconds: None)
    busy = LabgridError("`labgrid-client acquire` failed: Server error: Error: Failed to acquire resources for "
                        "place p (coordinator c)")
    for answers, raises in (([busy, busy, ""], None), ([LabgridError("place p is not reserved for you")], "not reserved")):
        asked = []

        def client(*args, place=None, timeout=60.0, answers=answers):
            asked.append(args)
            answer = answers[len(asked) - 1]
            if isinstance(answer, Exception):
                raise answer
            return answer
        places = LabgridPlaces.__new__(LabgridPlaces)
        places.client = client
        if raises is None:
            places._acquire("p")
            assert asked == [("acquire",)] * 3
        else:
            with pytest.raises(LabgridError, match=raises):
                places._acquire("p")
            assert asked == [("acquire",)]
