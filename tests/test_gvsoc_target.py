"""The GVSOC target without GVSOC: finding the simulator, its command line,
the payload segment, decoding and counting, and how a run's end is
classified, replayed from transcripts of real GVSOC runs
(tests/gvsoc_recordings/, re-recorded with its record.py). The last tests
run GVSOC itself and are skipped, with the reason, where it is missing."""
from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness import failures, riscv_build
from harness.elf_symbols import data_offset
from harness.failures import CaseFailure
from harness.protocol import TransportError, decode_records
from harness.session import Session
from harness.target import BuildError, RawRun
from harness.targets import gvsoc, make_target
from harness.targets.gvsoc import GvsocTarget, elf_with_payload, find_gvsoc, gvsoc_argv, read_exit
from tests.test_mutations import ROOT

RECORDINGS = Path(__file__).parent / "gvsoc_recordings"


def recording(name: str) -> dict:
    return json.loads((RECORDINGS / f"{name}.json").read_text())


def replay(name: str) -> RawRun:
    """A recorded run as the target hands it to the session."""
    rec = recording(name)
    raw = RawRun(rec["stdout"].encode(), rec["stderr"].encode(), rec["returncode"], rec["timed_out"])
    read_exit(raw)
    return raw


def fake_launcher(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


# ---- finding GVSOC -----------------------------------------------------------------

def configured(environ: dict) -> str | None:
    """The target's gvsoc option, as the environment gives it."""
    return gvsoc.options_from_environment(environ).get("gvsoc")


def test_PTL_GVSOC_names_an_install_prefix_or_the_launcher_itself(tmp_path):
    launcher = fake_launcher(tmp_path / "prefix" / "bin" / "gvsoc")
    assert find_gvsoc(configured({"PTL_GVSOC": str(tmp_path / "prefix")}), search_path="") == launcher
    assert find_gvsoc(configured({"PTL_GVSOC": str(launcher)}), search_path="") == launcher


def test_without_PTL_GVSOC_the_launcher_comes_from_PATH(tmp_path):
    launcher = fake_launcher(tmp_path / "bin" / "gvsoc")
    assert find_gvsoc(configured({}), search_path=str(tmp_path / "bin")) == launcher
    assert find_gvsoc(configured({}), search_path=str(tmp_path)) is None


def test_a_missing_gvsoc_names_the_install_script(tmp_path):
    where = configured({"PTL_GVSOC": str(tmp_path / "nowhere")})
    assert find_gvsoc(where, search_path="") is None
    reason = gvsoc.missing_gvsoc_reason(where)
    assert "scripts/install-gvsoc.sh" in reason and str(tmp_path / "nowhere") in reason


def test_target_gvsoc_without_gvsoc_stops_with_one_line_naming_the_install_script(tmp_path):
    env = dict(os.environ, PTL_GVSOC=str(tmp_path / "nowhere"))
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "pool", "-p", "no:xdist", "-q",
                             "--collect-only", "--target", "gvsoc"], capture_output=True, text=True, cwd=ROOT,
                            env=env, timeout=120)
    assert result.returncode == 4, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if "install-gvsoc.sh" in line]
    assert len(lines) == 1 and lines[0].startswith("ERROR: --target gvsoc: GVSOC not found")
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("version, missing", [
    (None, "has no"), ("209c147 separate-fp-regfile cluster-fpus cache-flush fcvt-s-h-rounding",
                        "built without error-mapping"),
    ("209c147", "built without separate-fp-regfile, cluster-fpus, cache-flush, fcvt-s-h-rounding, error-mapping")])
def test_a_gvsoc_without_what_the_install_script_adds_is_unavailable_and_says_to_rerun_it(tmp_path, version,
                                                                                            missing):
    launcher = fake_launcher(tmp_path / "prefix" / "bin" / "gvsoc")
    if version:
        (tmp_path / "prefix" / "VERSION").write_text(version + "\n")
    reason = gvsoc.missing_features_reason(launcher)
    assert missing in reason and "scripts/install-gvsoc.sh" in reason
    (tmp_path / "prefix" / "VERSION").write_text("209c147 " + " ".join(gvsoc.features()) + "\n")
    assert gvsoc.missing_features_reason(launcher) is None


# ---- command line and payload ------------------------------------------------------------

def test_the_command_line_is_the_recorded_one():
    argv = gvsoc_argv(Path("/opt/gvsoc/bin/gvsoc"), Path("/scratch/run/runner.elf"))
    assert argv == ["stdbuf", "-oL", "/opt/gvsoc/bin/gvsoc", "--target=pulp-open",
                    "--binary=/scratch/run/runner.elf", "run"]
    shortened = [a.replace("/scratch/run/runner.elf", "runner.elf").replace("/opt/gvsoc/bin/gvsoc", "gvsoc")
                 for a in argv]
    for name in ("team", "matmul", "hang"):
        assert recording(name)["argv"] == shortened
    assert gvsoc_argv(Path("g"), Path("e.elf"), line_buffered=False) == ["g", "--target=pulp-open",
                                                                         "--binary=e.elf", "run"]


PAYLOAD_ADDR = 0x1C110000


def tiny_elf(segments: list[tuple[int, int]]) -> bytes:
    """An ELF32 header and program headers: (type, address) each, memsz 0x100."""
    phoff, count = 52, len(segments)
    header = struct.pack("<16sHHIIIIIHHHHHH", b"\x7fELF\x01\x01\x01" + bytes(9), 2, 243, 1, 0x1C000000, phoff,
                         0, 0, 52, 32, count, 40, 0, 0)
    phdrs = b"".join(struct.pack("<8I", kind, 0, addr, addr, 0, 0x100, 4, 4) for kind, addr in segments)
    return header + phdrs + b"code"


def test_the_payload_fills_the_empty_segment_at_its_address_in_a_copy():
    elf = tiny_elf([(1, 0x1C000000), (1, PAYLOAD_ADDR)])
    payload = b"PTLP" + bytes(range(7))
    patched = elf_with_payload(elf, payload, PAYLOAD_ADDR)
    assert patched[:52 + 32] == elf[:52 + 32]                    # header and the other segment unchanged
    kind, offset, vaddr, paddr, filesz, memsz, _, _ = struct.unpack_from("<8I", patched, 52 + 32)
    assert (kind, vaddr, paddr, filesz, memsz) == (1, PAYLOAD_ADDR, PAYLOAD_ADDR, 12, 12)
    assert offset % 16 == 0 and offset >= len(elf)
    assert patched[offset:offset + 12] == payload + bytes(1)


def test_a_payload_larger_than_its_segment_does_not_fit():
    with pytest.raises(CaseFailure) as raised:
        elf_with_payload(tiny_elf([(1, PAYLOAD_ADDR)]), bytes(0x101), PAYLOAD_ADDR)
    assert raised.value.kind == failures.NOT_FIT and "PTL_GVSOC_PAYLOAD_MAX" in raised.value.message


def test_an_elf_without_the_payload_segment_asks_for_a_rebuild():
    with pytest.raises(BuildError, match="no loadable segment at 0x1c110000"):
        elf_with_payload(tiny_elf([(1, 0x1C000000), (6, PAYLOAD_ADDR)]), b"PTLP", PAYLOAD_ADDR)


def test_the_payload_address_is_the_runtime_layouts():
    assert gvsoc.layout()["PTL_GVSOC_PAYLOAD_ADDR"] == PAYLOAD_ADDR


# ---- decoding and counters -----------------------------------------------------------------

def test_every_core_count_of_the_team_test_passed_on_gvsoc():
    run = decode_records(replay("team").output)
    assert run.complete and [v.status for v in run.variants] == [0] * 9


def test_each_region_counts_exactly_the_cores_of_its_team():
    run = decode_records(replay("team").output)
    for n in range(1, 9):
        cycles, instructions = run.region_counts[n - 1]
        assert all(c > 0 for c in cycles[:n]) and all(c == 0 for c in cycles[n:])
        assert all(i > 0 for i in instructions[:n]) and all(i == 0 for i in instructions[n:])
        assert all(c >= i for c, i in zip(cycles, instructions))


def test_a_worker_adds_up_its_shares_of_every_fork_in_a_region():
    run = decode_records(replay("team").output)
    one_fork, three_forks = run.region_counts[7][1], run.region_counts[8][1]
    for core in range(1, 8):
        assert 2 * one_fork[core] < three_forks[core] <= 3 * one_fork[core]


def test_counters_are_cycles_with_latency_the_max_and_work_the_sum_over_cores():
    rec, raw = recording("matmul"), replay("matmul")
    run = decode_records(raw.output, rec["payload_crc"])
    this = SimpleNamespace(target=GvsocTarget())
    one, eight = (Session._counters(this, out, raw, run) for out in run.variants)
    assert rec["variants"][0].endswith("-c1") and rec["variants"][1].endswith("-c8")
    cycles, instructions = run.region_counts[0]
    assert one.unit == "cycles" and one.per_core == cycles and cycles[1:] == [0] * 7
    assert one.latency == one.work == cycles[0] and one.instructions == instructions[0]
    cycles, instructions = run.region_counts[1]
    assert all(c > 0 for c in cycles)
    assert (eight.latency, eight.work, eight.instructions) == (max(cycles), sum(cycles), sum(instructions))


def test_a_stale_recording_answers_another_payload():
    with pytest.raises(TransportError, match="answers another payload"):
        decode_records(replay("matmul").output, recording("matmul")["payload_crc"] ^ 1)


def counts_line(seq: int, body: bytes) -> bytes:
    import zlib
    crc = zlib.crc32(struct.pack("<I", seq) + b"K" + body)
    return b"@PTL1 %08x K %s %08x\n" % (seq, body.hex().encode(), crc)


def test_a_counts_record_of_the_wrong_length_or_repeated_is_not_believed():
    good = struct.pack("<II", 0, 2) + struct.pack("<4I", 10, 20, 5, 6)
    assert decode_records(counts_line(0, good)).region_counts == {0: ([10, 20], [5, 6])}
    with pytest.raises(TransportError, match="COUNTS body"):
        decode_records(counts_line(0, good[:-4]))
    with pytest.raises(TransportError, match="second COUNTS record for region 0"):
        decode_records(counts_line(0, good) + counts_line(1, good))


def spill_line(seq: int, body: bytes) -> bytes:
    import zlib
    crc = zlib.crc32(struct.pack("<I", seq) + b"S" + body)
    return b"@PTL1 %08x S %s %08x\n" % (seq, body.hex().encode(), crc)


def test_a_spill_record_gives_its_regions_l2_bytes_and_a_bad_one_is_not_believed():
    good = struct.pack("<II", 3, 4096)
    assert decode_records(spill_line(0, good)).region_l2_bytes == {3: 4096}
    with pytest.raises(TransportError, match="SPILL body has 4 bytes"):
        decode_records(spill_line(0, good[:4]))
    with pytest.raises(TransportError, match="second SPILL record for region 3"):
        decode_records(spill_line(0, good) + spill_line(1, good))


def test_a_region_without_a_spill_record_ran_with_nothing_in_L2():
    rec, raw = recording("matmul"), replay("matmul")
    run = decode_records(raw.output, rec["payload_crc"])
    this = SimpleNamespace(target=GvsocTarget())
    assert [Session._counters(this, out, raw, run).l2_bytes for out in run.variants] == [0, 0]


def test_a_case_too_large_for_L1_reports_what_of_its_heap_was_in_L2():
    """57 KiB of buffers (conv2d IG's im2col), about 50 KiB of L1 heap: the
    rest in L2, named by a SPILL record for the variant's region."""
    rec, raw = recording("spill"), replay("spill")
    run = decode_records(raw.output, rec["payload_crc"])
    this = SimpleNamespace(target=GvsocTarget())
    (out,) = run.variants
    l2_bytes = Session._counters(this, out, raw, run).l2_bytes
    assert out.status == 0 and 0 < l2_bytes < 58368, l2_bytes


# ---- how a run ends ------------------------------------------------------------------------

def missing(name: str) -> CaseFailure:
    raw = replay(name)
    this = SimpleNamespace(timeout=5.0, target=GvsocTarget())
    return Session._missing_result(this, 0, decode_records(raw.output), raw, "variant: x")


def test_the_launchers_exit_becomes_the_programs_status():
    assert replay("illegal").returncode == 12          # PTL_EXIT_TRAP, reported on stderr by the launcher
    assert recording("illegal")["returncode"] == 1
    assert replay("team").returncode == 0


def test_an_amo_on_a_pulp_core_is_a_crash_with_cause_pc_and_core():
    failure = missing("illegal")
    assert failure.kind == failures.CRASH
    assert re.search(r"trap cause 2 at pc 0x1c0[0-9a-f]{5} \(tval 0x0\) on core 3", failure.message)


def test_an_access_to_an_unmapped_address_is_a_crash_naming_address_and_pc():
    raw = replay("unmapped")
    assert raw.returncode == 1
    assert re.search(rb"unmapped address 0x30000000 by the instruction at pc 0x1c0[0-9a-f]{5}\n", raw.stderr)
    failure = missing("unmapped")
    assert failure.kind == failures.CRASH and "exit status 1" in failure.message
    assert "unmapped address 0x30000000" in failure.message


# One word past the end of L1 (ptl_gvsoc.h), where self-test 6 stores.
PAST_L1 = f"{gvsoc.layout()['PTL_GVSOC_L1_BASE'] + gvsoc.layout()['PTL_GVSOC_L1_SIZE']:#x}"


def test_an_access_just_past_l1_is_a_crash_naming_address_and_pc_not_a_hang():
    """One word past the end of L1, in a measured region with a budget: an
    address in the cluster's range that nothing holds. GVSOC without the
    install script's error-mapping patch spun there at one simulated instant
    until the wall-clock timeout (the FC's watchdog never ticked)."""
    assert recording("past-l1")["cycle_budget"] == 2_000_000
    raw = replay("past-l1")
    assert raw.returncode == 1 and not raw.timed_out
    assert re.search(rf"unmapped address {PAST_L1} by the instruction at pc 0x1c0[0-9a-f]{{5}}\n".encode(), raw.stderr)
    failure = missing("past-l1")
    assert failure.kind == failures.CRASH and f"unmapped address {PAST_L1}" in failure.message


@pytest.mark.parametrize("name", ["hang", "deadlock"])
def test_the_fc_watchdog_stops_a_hang_or_a_deadlock_at_its_cycle_budget_as_a_timeout(name):
    """Spinning or all asleep in a measured region: the FC's timer still
    ticks, and the FC ends the run after the region's budget of simulated
    cycles (2,000,000 in the recording), keeping the output so far."""
    assert recording(name)["cycle_budget"] == 2_000_000 and recording(name)["returncode"] == 1
    raw = replay(name)
    assert raw.timed_out and raw.returncode is None
    assert decode_records(raw.output).n_variants == 1     # the BEGIN record, before the hang
    failure = missing(name)
    assert failure.kind == failures.TIMEOUT
    assert re.search(r"no end in sight: measured region 0 still open after 2[0-9]{6} SoC cycles, past its "
                     r"budget of 2000000 \(a hang, a livelock or a deadlock; the FC's watchdog", failure.message)


def test_without_a_budget_a_hang_runs_into_the_wall_clock_timeout_which_keeps_the_output_so_far():
    raw = replay("hang-unwatched")
    assert recording("hang-unwatched")["cycle_budget"] is None
    assert raw.timed_out and raw.returncode is None and not raw.stop_reason
    assert decode_records(raw.output).n_variants == 1     # the BEGIN record, line-buffered, survived the kill
    assert missing("hang-unwatched").kind == failures.TIMEOUT


def test_a_cases_budget_follows_its_work_on_qemu_within_the_floor_and_the_ceiling():
    work = gvsoc.qemu_work()
    small = next(case for case, n in work.items() if n * gvsoc.BUDGET_PER_INSTRUCTION < gvsoc.BUDGET_FLOOR)
    large = max(work, key=work.get)
    middle = next(case for case, n in work.items()
                  if gvsoc.BUDGET_FLOOR < n * gvsoc.BUDGET_PER_INSTRUCTION < gvsoc.CYCLE_BUDGET)
    assert gvsoc.cycle_budget(small) == gvsoc.BUDGET_FLOOR
    assert gvsoc.cycle_budget(middle) == work[middle] * gvsoc.BUDGET_PER_INSTRUCTION
    assert gvsoc.cycle_budget(large) <= gvsoc.CYCLE_BUDGET
    assert gvsoc.cycle_budget("a-case-no-baseline-knows") == gvsoc.CYCLE_BUDGET


def test_the_budget_is_written_into_the_runs_copy_of_the_elf_and_only_a_word_with_bytes_can_be(tmp_path):
    elf = GvsocTarget().build_program([gvsoc.SELF_TEST], tmp_path, ["-DPTL_TEST_CASE=3"]).read_bytes()
    at = data_offset(elf, gvsoc.BUDGET_SYMBOL)
    assert elf[at:at + 4] == b"\xff\xff\xff\xff"                # NO_BUDGET, as compiled
    patched = gvsoc.elf_with_word(elf, gvsoc.BUDGET_SYMBOL, 123456789)
    assert len(patched) == len(elf) and patched[at:at + 4] == struct.pack("<I", 123456789)
    assert patched[:at] == elf[:at] and patched[at + 4:] == elf[at + 4:]
    with pytest.raises(BuildError, match="in .bss"):
        gvsoc.elf_with_word(elf, "team", 1)                      # the team's state: .l1_bss, no file bytes
    with pytest.raises(BuildError, match="no symbol"):
        gvsoc.elf_with_word(elf, "no_such_symbol", 1)


def test_the_target_says_what_it_is():
    caps = GvsocTarget().capabilities
    assert (caps.counter_unit, caps.max_cores, caps.payload_delivery, caps.fp16_formats) == \
        ("cycles", 8, "loader", riscv_build.fp16_formats())


# ---- on a real GVSOC ---------------------------------------------------------------------------

# Where the environment says GVSOC is (PTL_GVSOC, else PATH), as a run finds it.
needs_gvsoc = pytest.mark.skipif(make_target("gvsoc").unavailable_reason() is not None,
                                 reason=f"needs GVSOC: {make_target('gvsoc').unavailable_reason()}")


@needs_gvsoc
def test_live_the_team_test_passes_and_counts_every_core(tmp_path):
    target = make_target("gvsoc")
    elf = target.build_program([gvsoc.SELF_TEST], tmp_path, ["-DPTL_TEST_CASE=0"])
    raw = target.run(tmp_path, None, 60.0, tmp_path / "run")
    assert elf.exists() and raw.returncode == 0, raw.stderr.decode()
    run = decode_records(raw.output)
    assert [v.status for v in run.variants] == [0] * 9
    assert all(c > 0 for c in run.region_counts[7][0])


@needs_gvsoc
def test_live_the_cluster_dma_moves_1d_and_2d_copies_between_l2_and_l1(tmp_path):
    target = make_target("gvsoc")
    target.build_program([gvsoc.SELF_TEST], tmp_path, ["-DPTL_TEST_CASE=5"])
    raw = target.run(tmp_path, None, 60.0, tmp_path / "run")
    assert raw.returncode == 0, raw.stderr.decode()
    assert [v.status for v in decode_records(raw.output).variants] == [0, 0, 0]


@needs_gvsoc
def test_live_an_access_just_past_l1_ends_the_run_at_once(tmp_path):
    target = make_target("gvsoc")
    target.build_program([gvsoc.SELF_TEST], tmp_path, ["-DPTL_TEST_CASE=6"])
    raw = target.run(tmp_path, None, 60.0, tmp_path / "run")
    assert not raw.timed_out and raw.returncode == 1, raw.stderr.decode()
    assert f"unmapped address {PAST_L1}".encode() in raw.stderr


@needs_gvsoc
def test_live_an_amo_crashes_on_core_3(tmp_path):
    target = make_target("gvsoc")
    target.build_program([gvsoc.SELF_TEST], tmp_path, ["-DPTL_TEST_CASE=1"])
    raw = target.run(tmp_path, None, 60.0, tmp_path / "run")
    crash = decode_records(raw.output).crash
    assert raw.returncode == 12 and (crash.hart, crash.cause) == (3, 2)
