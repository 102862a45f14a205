"""Shared pieces of the board-farm tests: virtual boards, a session on them,
small cases, suite runs in a subprocess, and a labgrid lab on the loopback."""
from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from harness.board.inventory import write
from harness.board.virtual import VirtualFarm, free_port, wait_listening
from harness.payload import encode_payload, payload_crc
from harness.runner_contract import DESCRIBE_OP
from harness.session import Session
from harness.target import DEFAULT_LIBRARY
from harness.targets.board import BoardTarget
from harness.catalogue import linalg

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "ptl"       # shared with the other tests and runs: the firmware builds once
# 20 variants in 10 cases of one build (fp32): linear FW through the naive and the 4x4 kernel.
SUITE_SLICE = "linear and not linear_layer and fp32 and fw and c8 and (mm-c8 or mm_unroll_4x4)"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    """A labgrid program: beside this interpreter (its venv), else on PATH, as the harness finds labgrid-client."""
    beside = BIN / name
    return str(beside) if beside.exists() else (shutil.which(name) or str(beside))


def board_session(inventory: Path, tmp_path: Path, library: Path = DEFAULT_LIBRARY, timeout: float = 60,
                  **options) -> Session:
    target = BoardTarget(inventory=inventory, state_dir=tmp_path / "state", **options)
    return Session(target, library, CACHE, timeout=timeout)


def inventory_of(farm, path: Path, boards=None) -> Path:
    write(boards if boards is not None else farm.inventory(), path)
    return path


def small_cases(count: int, cores: tuple[int, ...] = (1, 8)) -> list[tuple]:
    """(case, variants) of the smallest fp32 linear FW cases, naive kernel only."""
    cases: dict = {}
    for v in linalg.LINEAR.variants():
        c = v.case
        if c.dtype == "fp32" and c.step == "fw" and v.kernel_name == "mm" and v.cores in cores:
            cases.setdefault(c, []).append(v)
    ordered = sorted(cases, key=lambda c: sum(c.footprint.values()))
    return [(c, cases[c]) for c in ordered[:count]]


def run_all(session: Session, cases) -> dict:
    results = {}
    for case, variants in cases:
        results.update(session.results_for(case, variants))
    return results


def describe_firmware(workdir: Path) -> None:
    """Builds the fp32 firmware into CACHE and has it described (its
    contract saved with it) on one healthy virtual board, so that a later
    run's board sends case output from its first byte."""
    with VirtualFarm(1, "socket", workdir / "boards") as farm:
        session = board_session(inventory_of(farm, workdir / "boards.toml"), workdir)
        results = run_all(session, small_cases(1, cores=(1,)))
    assert failures_of(results) == [], failures_of(results)


def case_runs(session: Session) -> dict[str, int]:
    """Per board, the runs of case payloads in the farm's ledger. The payload
    that describes a firmware new to the cache (its kernel table) is a run
    too, but only when the cache lacks it: a fresh clone's first test sees
    one more run than a warm cache does, so it is not counted here."""
    describe = payload_crc(encode_payload(DESCRIBE_OP, [], [], []))
    counts = {name: 0 for name in session.target.farm.summary()}
    for entry in session.target.farm.ledger():
        if entry["event"] == "run" and entry["crc"] != describe:
            counts[entry["board"]] += 1
    return counts


def failures_of(results: dict) -> list[str]:
    return [f"{v.id}: {r.failure}" for v, r in results.items() if not r.passed]


def suite_run(tmp_path: Path, inventory: Path, *extra: str, select: str = SUITE_SLICE,
              timeout: float = 600) -> tuple[subprocess.CompletedProcess, dict, list[dict]]:
    """pytest on the linalg family (suite/test_ops.py --family linalg) against the board target; returns the
    process, summary.json and the CSV rows."""
    reports = tmp_path / "reports"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PTL_BOARD"))}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "linalg", "-q",
                             "-p", "no:randomly", "-k", select, "--target", "board", "--boards", str(inventory),
                             "--ptl-cache", str(CACHE), "--reports-dir", str(reports), *extra],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    summary = json.loads((reports / "summary.json").read_text()) if (reports / "summary.json").exists() else {}
    rows = list(csv.DictReader(open(reports / "results.csv"))) if (reports / "results.csv").exists() else []
    return result, summary, rows


@contextlib.contextmanager
def labgrid_lab(farm, workdir: Path, tags: dict[str, str]):
    """A labgrid-coordinator and a labgrid-exporter on the loopback, the
    farm's boards exported (pty consoles) and made places with `tags`.
    Yields the coordinator's address."""
    from harness.board.labgrid_places import exporter_config, place_commands
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    address = f"127.0.0.1:{port}"
    processes = []
    try:
        processes.append(subprocess.Popen([_tool("labgrid-coordinator"), "-l", address], cwd=workdir,
                                          stdout=open(workdir / "coordinator.log", "w"), stderr=subprocess.STDOUT,
                                          start_new_session=True))
        assert wait_listening(port, 30, processes[0]), (workdir / "coordinator.log").read_text()
        (workdir / "exporter.yaml").write_text(exporter_config(farm.boards))
        processes.append(subprocess.Popen([_tool("labgrid-exporter"), "-c", address, "-n", "ptl-lab",
                                           "--hostname", "127.0.0.1", str(workdir / "exporter.yaml")], cwd=workdir,
                                          stdout=open(workdir / "exporter.log", "w"), stderr=subprocess.STDOUT,
                                          start_new_session=True))
        deadline = time.monotonic() + 30
        while not all(f"ptl-lab/{b.name}/NetworkSerialPort" in lab_client(address, "resources")
                      for b in farm.boards):
            assert time.monotonic() < deadline, (workdir / "exporter.log").read_text()
            time.sleep(0.2)
        for args in place_commands(farm.boards, "ptl-lab", farm.control_address, tags):
            lab_client(address, *args)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def labgrid_inventory(path: Path, coordinator: str, places: int, reserve: dict[str, str]) -> None:
    """An inventory that takes `places` places with the tags `reserve` from
    the coordinator, each a virtual board (VIRTUAL_PLACE_BOARD)."""
    from harness.board.labgrid_places import VIRTUAL_PLACE_BOARD
    board = "\n".join(f"{key} = {json.dumps(value)}" for key, value in VIRTUAL_PLACE_BOARD.items())
    tags = ", ".join(f"{key} = {json.dumps(value)}" for key, value in reserve.items())
    path.write_text(f'[labgrid]\ncoordinator = "{coordinator}"\nplaces = {places}\n'
                    f'reserve = {{ {tags} }}\n\n[labgrid.board]\n{board}\n')


def lab_client(address: str, *args: str) -> str:
    result = subprocess.run([_tool("labgrid-client"), "-x", address, *args], capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, f"labgrid-client {' '.join(args)}: {result.stderr}"
    return result.stdout
