"""The board target on virtual boards (QEMU behind a UART socket): the
serial link survives a faulty cable, a board that fails is retried on
another and quarantined, a wrong result is never retried into a pass, two
processes never share a board, and a suite run over a cable that breaks
loses and repeats no report row.

The firmware builds once into the shared cache (.cache/ptl); each test
starts its own boards."""
import multiprocessing
import shutil
import time

import pytest

from harness import failures
from harness.board.farm import BoardFarm
from harness.board.fault_proxy import FaultSpec
from harness.board.inventory import Board
from harness.board.virtual import VirtualFarm
from harness.failures import CaseFailure
from harness.targets.qemu import QemuTarget
from tests.board_support import board_session, failures_of, inventory_of, run_all, small_cases, suite_run
from tests.mutants import SourceEdit, mutant_library

pytestmark = pytest.mark.skipif(QemuTarget().unavailable_reason() is not None,
                                reason=f"virtual boards run QEMU: {QemuTarget().unavailable_reason()}")


def runs_by_board(session) -> dict[str, int]:
    return {name: c["runs"] for name, c in session.target.farm.summary().items()}


def test_cases_pass_through_a_cable_that_corrupts_and_drops_bytes(tmp_path):
    spec = FaultSpec(corrupt=2e-3, drop=2e-3)
    with VirtualFarm(1, "socket", tmp_path / "boards", faults=spec) as farm:
        session = board_session(inventory_of(farm, tmp_path / "boards.toml"), tmp_path)
        results = run_all(session, small_cases(8))
        injected = sum(farm.proxies["vb0"].counts.values())
    assert failures_of(results) == []
    assert injected > 0, "the proxy injected no fault: the test proves nothing"
    summary = session.target.farm.summary()["vb0"]
    assert summary["resends"] > 0, summary       # the damage was seen and repaired by the link


def test_a_board_that_vanishes_has_its_cases_retried_on_another_and_is_quarantined(tmp_path):
    with VirtualFarm(2, "socket", tmp_path / "boards", faults=FaultSpec()) as farm:
        session = board_session(inventory_of(farm, tmp_path / "boards.toml"), tmp_path, quarantine_after=2)
        farm.proxies["vb0"].vanish()        # the USB serial adapter is unplugged
        cases = small_cases(4)
        results = run_all(session, cases)
    assert failures_of(results) == []
    quarantined = session.target.farm.quarantined()
    assert list(quarantined) == ["vb0"] and "[transport]" in quarantined["vb0"], quarantined
    runs = runs_by_board(session)    # on a fresh cache, one more run describes the new firmware
    assert runs["vb0"] == 0 and runs["vb1"] in (len(cases), len(cases) + 1), runs


def test_a_hung_board_is_reset_and_answers_again(tmp_path):
    with VirtualFarm(1, "socket", tmp_path / "boards") as farm:
        session = board_session(inventory_of(farm, tmp_path / "boards.toml"), tmp_path)
        cases = small_cases(2)
        assert failures_of(run_all(session, cases[:1])) == []
        farm.board("vb0").hang()
        assert failures_of(run_all(session, cases[1:])) == []
        resets = farm.board("vb0").counts["reset"]
    assert resets == 1
    assert session.target.farm.summary()["vb0"]["resets"] == 1


def test_a_wrong_result_is_a_numeric_failure_run_once_and_never_retried(tmp_path):
    # Every linear FW output gets its last element wrong: the board answers
    # whole and well, so the result stands and no other board is asked.
    library = mutant_library(tmp_path / "lib", SourceEdit(
        "sources/pulp_linear_fp32.c", *_last_output_wrong()))
    with VirtualFarm(2, "socket", tmp_path / "boards") as farm:
        session = board_session(inventory_of(farm, tmp_path / "boards.toml"), tmp_path, library=library)
        cases = small_cases(2, cores=(1,))
        results = run_all(session, cases)
    kinds = {r.failure.kind for r in results.values() if r.failure is not None}
    assert kinds == {failures.NUMERIC}, failures_of(results)
    payloads = [e["crc"] for e in session.target.farm.ledger() if e["event"] == "run"]
    assert len(payloads) >= len(cases) and len(set(payloads)) == len(payloads), payloads   # none ran twice
    assert all(c["failures"] == 0 for c in session.target.farm.summary().values())


def _last_output_wrong() -> tuple[str, str]:
    """The edit to lib_c's FP32 linear FW that the previous test seeds."""
    from harness.target import DEFAULT_LIBRARY
    text = (DEFAULT_LIBRARY / "sources" / "pulp_linear_fp32.c").read_text()
    original = "    pi_cl_team_fork(NUM_CORES, mm_manager, &mgr);\n}\n\nvoid pulp_linear_fp32_bw_cl"
    assert original in text, "the seeded bug's anchor moved; update the test"
    return original, original.replace("&mgr);\n", "&mgr);\n    la->output->data[0] += 1.0f;\n")


def _hold(lock_dir, state_dir, board, seconds, queue):
    farm = BoardFarm([board], state_dir, lock_dir=lock_dir)
    with farm.lease():
        start = time.monotonic()
        time.sleep(seconds)
        queue.put((start, time.monotonic()))


def test_two_processes_never_hold_the_same_board_at_once(tmp_path):
    board = Board("b0", "gap9", "/dev/null", 115200, ("true",))
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    workers = [context.Process(target=_hold, args=(tmp_path / "locks", tmp_path / "state", board, 0.5, queue))
               for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    spans = sorted(queue.get(timeout=5) for _ in workers)
    assert len(spans) == 3
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end, f"two leases of one board overlap: {spans}"


def test_a_quarantined_board_is_never_leased_and_a_farm_of_them_says_why(tmp_path):
    boards = [Board(f"b{i}", "gap9", "/dev/null", 115200, ("true",)) for i in range(2)]
    farm = BoardFarm(boards, tmp_path / "state", lock_dir=tmp_path / "locks", quarantine_after=2)
    with farm.lease() as lease:
        assert lease.board.name == "b0"
        assert not lease.failed(failures.TIMEOUT, "no answer")
        assert lease.failed(failures.TIMEOUT, "no answer")        # the second in a row
    with farm.lease() as lease:
        assert lease.board.name == "b1"
        lease.failed(failures.TRANSPORT, "cable")
        lease.succeeded()                                        # a success resets the count
        assert not lease.failed(failures.TRANSPORT, "cable")
        assert lease.failed(failures.TRANSPORT, "cable")
    with pytest.raises(CaseFailure) as raised:
        with farm.lease():
            pass
    assert raised.value.kind == failures.LOAD and "b0:" in raised.value.message and "b1:" in raised.value.message


def test_a_suite_run_over_cables_that_break_mid_run_loses_and_repeats_no_row(tmp_path):
    # Each board's cable breaks once, 3000 bytes into what the board sends:
    # in the middle of a run. Its case goes to the other board.
    spec = FaultSpec(script=(("from-board", 3000, "disconnect"),))
    with VirtualFarm(2, "socket", tmp_path / "boards", faults=spec) as farm:
        inventory = inventory_of(farm, tmp_path / "boards.toml")
        result, summary, rows = suite_run(tmp_path, inventory, "-n", "2")
        broken = sum(p.counts["from-board disconnect"] for p in farm.proxies.values())
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert broken == 2, "the cables did not break: the test proves nothing"
    ids = [row["test_id"] for row in rows]
    assert len(ids) == len(set(ids)) == summary["outcomes"]["passed"] == 20, (len(ids), summary["outcomes"])
    assert sum(b["failures"] for b in summary["boards"].values()) >= 2, summary["boards"]


@pytest.mark.skipif(shutil.which("ser2net") is None, reason="ser2net (Debian package ser2net) is not installed")
def test_cases_pass_over_rfc2217_through_ser2net(tmp_path):
    with VirtualFarm(1, "rfc2217", tmp_path / "boards") as farm:
        inventory = inventory_of(farm, tmp_path / "boards.toml")
        assert load_serial(inventory).startswith("rfc2217://")
        session = board_session(inventory, tmp_path)
        assert failures_of(run_all(session, small_cases(3))) == []


def load_serial(path) -> str:
    from harness.board.inventory import load
    return load(path).boards[0].serial
