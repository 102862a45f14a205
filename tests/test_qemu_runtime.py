"""Specification of the QEMU runtime and its counting plugin, checked on the
emulator itself. Run: python -m pytest tests/test_qemu_runtime.py -v

Each test builds one small C program on the runtime (tests/*.c) with the
same recipe as the runner (harness.targets.qemu) and runs it on 8 harts.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import team_order, toolchain
from harness.protocol import decode_records
from harness.target import RUNTIME_DIR
from harness.targets import make_target
from harness.targets.host import HOST_RUNTIME
from harness.targets.qemu import COUNTS_NAME, ELF_NAME, TEST_SUPPORT, QemuTarget, layout, parse_profile, symbol_ranges
from bench.qemu_profile import disassembly, split_ranges

TESTS = Path(__file__).resolve().parent.parent / "harness" / "targets" / "qemu" / "runtime" / "tests"

pytestmark = pytest.mark.skipif(toolchain.unavailable_reason() is not None,
                                reason=f"QEMU toolchain: {toolchain.unavailable_reason()}")


@pytest.fixture(scope="module")
def target():
    return QemuTarget()


_built: dict = {}


def build(target, tmp_path_factory, name: str, fp16_format: str = "bf16", flags=()) -> Path:
    key = (name, fp16_format, tuple(flags))
    if key not in _built:
        outdir = tmp_path_factory.mktemp(name)
        target.build_program([TESTS / f"{name}.c", *TEST_SUPPORT], fp16_format, outdir,
                             extra_flags=list(flags))
        _built[key] = outdir
    return _built[key]


def run(target, artefact: Path, tmp_path: Path, timeout: float = 60, console: str | None = None):
    runner = QemuTarget(console) if console else target
    return runner.execute(artefact, None, timeout, tmp_path)


# ---- fork, barrier, determinism -------------------------------------------------------

def test_team_checks_pass_on_1_to_8_harts(target, tmp_path_factory, tmp_path):
    raw = run(target, build(target, tmp_path_factory, "test_team"), tmp_path)
    assert raw.returncode == 0, raw.stderr
    decoded = decode_records(raw.output)
    assert decoded.complete
    assert [v.status for v in decoded.variants] == [0] * 17
    assert "malloc of 1 MiB ok" in decoded.console
    assert sorted(line for line in decoded.console if line.startswith("hello")) == \
        [f"hello from core {c} of 8" for c in range(8)]


def test_counts_are_exact_and_sleeping_harts_count_nothing(target, tmp_path_factory, tmp_path):
    counts = run(target, build(target, tmp_path_factory, "test_team"), tmp_path).region_counts
    assert len(counts) == 17
    # Region 0: BEGIN, ret, li, 1000 x (addi, hint, bnez), li, jal.
    assert counts[0] == [3 * 1000 + 5] + [0] * 7
    for n in range(1, 9):
        for region in (n, 8 + n):   # float work, then barrier stress, on n cores
            assert all(c > 0 for c in counts[region][:n]), (region, counts[region])
            assert counts[region][n:] == [0] * (8 - n), (region, counts[region])


def test_counts_and_output_are_identical_across_runs(target, tmp_path_factory, tmp_path):
    artefact = build(target, tmp_path_factory, "test_team")
    first = run(target, artefact, tmp_path / "a")
    second = run(target, artefact, tmp_path / "b")
    assert first.region_counts == second.region_counts
    assert first.output == second.output


def test_plugin_agrees_with_minstret(target, tmp_path_factory, tmp_path):
    """minstret under -icount shift=0 is QEMU's exact global instruction clock."""
    raw = run(target, build(target, tmp_path_factory, "test_count"), tmp_path)
    assert raw.returncode == 0, raw.stderr
    deltas = [int(m.group(2)) for m in re.finditer(rb"count (\d+) (\d+)", raw.output)]
    plugin = [sum(region) for region in raw.region_counts]
    offset = deltas[0] - plugin[0]
    assert offset == 5  # the csrr/call glue around the markers
    for region in (1, 3, 4):  # device writes with SPLIT, self-IPI + wfi, an 8-hart fork
        assert deltas[region] - plugin[region] == offset, (region, deltas, plugin)
    # Raw device writes without SPLIT: QEMU restarts each one, and the plugin
    # counts the rest of its block twice. The runtime never does this.
    assert plugin[2] > deltas[2] - offset


def test_a_profile_splits_each_region_by_function(target, tmp_path_factory, tmp_path):
    """profile=: each region's instructions by the function that holds them,
    summed over harts; the split adds up to the region's count."""
    artefact = build(target, tmp_path_factory, "test_team")
    ranges = tmp_path / "ranges.txt"
    ranges.write_text(symbol_ranges(artefact / ELF_NAME))
    raw = target.execute(artefact, None, 60, tmp_path, profile=ranges)
    assert raw.returncode == 0, raw.stderr
    profile = parse_profile((tmp_path / COUNTS_NAME).read_text())
    assert sorted(profile) == list(range(17))
    for region, counts in enumerate(raw.region_counts):
        assert sum(profile[region].values()) == sum(counts), (region, profile[region])
    # Region 0 is main's calibration loop (3 x 1000 instructions and 3 more),
    # after the BEGIN marker and the return of ptl_region_begin.
    assert profile[0]["main"] == 3 * 1000 + 3
    assert sum(profile[0].values()) == 3 * 1000 + 5
    for n in range(1, 9):   # n cores in float_work
        assert profile[n]["float_work"] > 0
    assert "other" not in profile[0]


def test_a_profile_range_may_be_one_instruction(target, tmp_path_factory, tmp_path):
    """A translation block that crosses from one range into another is
    counted range by range, so main cut into one range per instruction
    (bench/qemu_profile.py --by-instruction) counts each instruction of its
    calibration loop 1000 times, not the loop's block at its first one."""
    artefact = build(target, tmp_path_factory, "test_team")
    elf = artefact / ELF_NAME
    functions = symbol_ranges(elf)
    ranges = tmp_path / "ranges.txt"
    ranges.write_text(split_ranges(functions, "main", list(disassembly(elf, functions, "main"))))
    raw = target.execute(artefact, None, 60, tmp_path, profile=ranges)
    assert raw.returncode == 0, raw.stderr
    region = parse_profile((tmp_path / COUNTS_NAME).read_text())[0]
    assert sum(region.values()) == sum(raw.region_counts[0])
    main = sorted(n for name, n in region.items() if name.startswith("pc_"))
    assert main == [1, 1, 1, 1000, 1000, 1000], region


def test_a_static_function_of_two_files_is_cut_in_both(tmp_path):
    """Two static functions of one name (lib_c's conv_mm_ig_team is in the
    FP32 and in the FP16 file): --by-instruction cuts both. Before, the
    disassembly held the first only, and the bench stopped with "does not
    start at its symbol" at the second."""
    sources = []
    for name, body, calls in (("a", "x * 3 + 1", "call_b(x)"), ("b", "x * x - 7", "0")):
        source = tmp_path / f"twin_{name}.c"
        source.write_text(f"int call_a(int x);\nint call_b(int x);\n"
                          f"static __attribute__((noinline)) int twin(int x) {{ return {body}; }}\n"
                          f"int call_{name}(int x) {{ return twin(x) + {calls}; }}\n")
        sources.append(str(source))
    elf = tmp_path / "twins.elf"
    subprocess.run([toolchain.RISCV_GCC, "-march=rv32imac", "-mabi=ilp32", "-O2", "-nostdlib", "-Wl,-e,call_a",
                    "-o", str(elf), *sources], check=True, capture_output=True)
    functions = symbol_ranges(elf)
    twins = [line.split() for line in functions.splitlines() if line.endswith(" twin")]
    assert len(twins) == 2, functions

    code = disassembly(elf, functions, "twin")
    cut = split_ranges(functions, "twin", list(code))

    for start, end, _ in twins:
        assert any(int(start, 16) <= address < int(end, 16) for address in code)
        assert f"{start} " in cut and f" {end} " in cut
    assert " twin\n" not in cut


@pytest.mark.parametrize("text, complaint", [
    ("20 10 backwards\n", "line 1: expected"),
    ("10 20 a\n15 30 overlaps\n", "line 2: expected"),
    ("", "has no ranges"),
])
def test_a_bad_profile_file_is_one_line(target, tmp_path_factory, tmp_path, text, complaint):
    artefact = build(target, tmp_path_factory, "test_team")
    ranges = tmp_path / "ranges.txt"
    ranges.write_text(text)
    raw = target.execute(artefact, None, 60, tmp_path, profile=ranges)
    assert raw.returncode != 0
    lines = [line for line in raw.stderr.decode().splitlines() if line.startswith("ptl_insn_count:")]
    assert len(lines) == 1 and complaint in lines[0], raw.stderr


def test_uart_and_semihosting_consoles_give_the_same_output(target, tmp_path_factory, tmp_path):
    artefact = build(target, tmp_path_factory, "test_team")
    uart = run(target, artefact, tmp_path / "uart", console="uart")
    semihost = run(target, artefact, tmp_path / "semihost", console="semihost")
    assert uart.output == semihost.output
    assert uart.region_counts == semihost.region_counts


# ---- crashes and hangs ---------------------------------------------------------------

def _crash_of(raw):
    decoded = decode_records(raw.output)
    assert decoded.crash is not None, raw.output[-500:]
    return decoded


def test_illegal_instruction_on_hart_3_is_one_crash_record(target, tmp_path_factory, tmp_path):
    raw = run(target, build(target, tmp_path_factory, "test_crash"), tmp_path)
    assert raw.returncode == 12  # PTL_EXIT_TRAP
    decoded = _crash_of(raw)
    pc = int(re.search(rb"crash-pc ([0-9a-f]{8})", raw.output).group(1), 16)
    crash = decoded.crash
    assert (crash.hart, crash.cause, crash.epc, crash.tval) == (3, 2, pc, 0xC0001073)  # unimp
    # The other harts printed concurrently; every line is whole.
    for line in decoded.console:
        assert re.fullmatch(r"crash-pc [0-9a-f]{8}|core \d (step \d|keeps printing)", line), line


def test_a_crash_is_reported_while_another_hart_spins(target, tmp_path_factory, tmp_path):
    """Hart 1 busy-loops for ever (never sleeps); hart 3's trap still ends the
    run with its CRASH record, instead of waiting for the run's timeout."""
    artefact = build(target, tmp_path_factory, "test_crash", flags=["-DPTL_TEST_SPINNING_HART"])
    raw = run(target, artefact, tmp_path, timeout=120)
    assert not raw.timed_out and raw.returncode == 12
    crash = _crash_of(raw).crash
    assert (crash.hart, crash.cause) == (3, 2)


def test_records_of_one_hart_and_the_crash_of_another_never_garble_each_other(target, tmp_path_factory, tmp_path):
    """Hart 0 emits records without end, so the run ends only by hart 3's trap:
    every record arrives whole and in sequence (the decoder checks CRCs and
    numbers), and the CRASH record follows."""
    artefact = build(target, tmp_path_factory, "test_crash", flags=["-DPTL_TEST_EMIT_RACE"])
    raw = run(target, artefact, tmp_path)
    assert raw.returncode == 12
    decoded = _crash_of(raw)   # raises TransportError on a garbled or lost record
    assert decoded.variants[0].errors and decoded.crash.hart == 3


def test_stack_overflow_hits_the_guard(target, tmp_path_factory, tmp_path):
    artefact = build(target, tmp_path_factory, "test_crash", flags=["-DPTL_TEST_STACK_OVERFLOW"])
    raw = run(target, artefact, tmp_path)
    assert raw.returncode == 12
    crash = _crash_of(raw).crash
    nm = subprocess.run([toolchain.RISCV_GCC.replace("gcc", "nm"), str(artefact / "runner.elf")],
                        capture_output=True, text=True).stdout
    stacks_end = int(re.search(r"^([0-9a-f]+) \w __stacks_end$", nm, re.M).group(1), 16)
    guard = stacks_end - 4 * layout()["PTL_QEMU_STACK_SIZE"]   # bottom of hart 3's stack
    assert (crash.hart, crash.cause) == (3, 7)                   # store access fault
    assert guard <= crash.tval < guard + layout()["PTL_QEMU_STACK_GUARD"]


@pytest.mark.parametrize("order", ["free", "reverse", "random:5"])
def test_deadlock_is_killed_at_once(target, tmp_path_factory, tmp_path, order):
    """In a sequenced order too: the cores at the barrier keep waiting for
    the baton, core 0 for the join, and every hart sleeps."""
    raw = run(target, build(target, tmp_path_factory, "test_hang", flags=team_order.defines(order)), tmp_path,
              timeout=60)
    assert raw.timed_out and raw.returncode is None
    assert raw.seconds < 10
    assert b"deadlock" in raw.stderr


# ---- sequenced team orders (PTL_TEAM_ORDER) ---------------------------------------------

FORKS = (8, 3, 8)   # test_team_order.c: the cores of each fork; 4 phases each


def phase_orders(target, tmp_path_factory, tmp_path, order: str) -> list[list[str]]:
    """Per fork, per phase, the cores in the order they started the phase."""
    artefact = build(target, tmp_path_factory, "test_team_order", flags=team_order.defines(order))
    raw = run(target, artefact, tmp_path / order.replace(":", "-"))
    assert raw.returncode == 0, raw.stderr
    lines = [line.split(": ") for line in raw.output.decode().splitlines() if line.startswith("fork ")]
    assert [int(head.split()[1]) for head, _ in lines] == list(FORKS)
    return [phases.split() for _, phases in lines]


def expected(order: str, n: int, phase: int) -> str:
    cores = list(range(n))
    if order == "reverse":
        cores.reverse()
    if order == "rotate":
        cores = cores[phase % n:] + cores[:phase % n]
    return "".join(map(str, cores))


@pytest.mark.parametrize("order", ["forward", "reverse", "rotate"])
def test_a_sequenced_order_runs_one_core_at_a_time_in_that_order(target, tmp_path_factory, tmp_path, order):
    assert phase_orders(target, tmp_path_factory, tmp_path, order) == \
        [[expected(order, n, phase) for phase in range(4)] for n in FORKS]


def test_random_orders_are_permutations_drawn_afresh_from_the_seed(target, tmp_path_factory, tmp_path):
    runs = {order: phase_orders(target, tmp_path_factory, tmp_path, order)
            for order in ("random:1", "random:2")}
    for forks in runs.values():
        for n, phases in zip(FORKS, forks):
            assert all(sorted(p) == list(expected("forward", n, 0)) for p in phases), phases
        drawn = [p for phases in forks for p in phases]
        assert len(set(drawn)) > 4, drawn       # not one order over and over
    assert runs["random:1"] != runs["random:2"]
    assert runs["random:1"] == phase_orders(target, tmp_path_factory, tmp_path / "again", "random:1")


def test_the_host_team_runs_the_same_orders(target, tmp_path_factory, tmp_path):
    """One meaning per word (ptl_team_order.h): the host's pthreads team,
    given the order in its environment, runs the phases as the harts do."""
    program = tmp_path / "test_team_order"
    subprocess.run(["gcc", "-O1", "-pthread", f"-I{RUNTIME_DIR / 'include'}", "-DNUM_CORES=ptl_num_cores",
                    *map(str, sorted(HOST_RUNTIME.glob("*.c"))), str(TESTS / "test_team_order.c"),
                    *map(str, TEST_SUPPORT), "-o", str(program), "-lm"], check=True)
    for order in ("reverse", "rotate", "random:1"):
        host = subprocess.run([str(program)], capture_output=True, text=True, check=True, timeout=60,
                              env={"PTL_TEAM_ORDER": order}).stdout
        assert [line.split(": ")[1].split() for line in host.splitlines()] == \
            phase_orders(target, tmp_path_factory, tmp_path, order), order


def test_the_default_build_compiles_no_sequencing(target, tmp_path_factory, tmp_path):
    """The machine's own order: its counts are the performance baseline's,
    so the default runtime must not change with the sequenced one."""
    orders = phase_orders(target, tmp_path_factory, tmp_path, "free")
    assert all(sorted(p) == list(expected("forward", n, 0)) for n, phases in zip(FORKS, orders) for p in phases)
    artefact = build(target, tmp_path_factory, "test_team_order")
    symbols = subprocess.run([toolchain.RISCV_NM, str(artefact / ELF_NAME)], capture_output=True, text=True,
                             check=True).stdout
    assert "pass_baton" not in symbols and "seq" not in symbols.split()


def test_busy_hang_is_killed_at_the_timeout(target, tmp_path_factory, tmp_path):
    artefact = build(target, tmp_path_factory, "test_hang", flags=["-DPTL_TEST_SPIN"])
    raw = run(target, artefact, tmp_path, timeout=2)
    assert raw.timed_out and raw.returncode is None
    assert 2 <= raw.seconds < 8
    assert b"hang test starts" in raw.output


def test_a_hang_inside_a_measured_region_stops_at_its_instruction_budget(target, tmp_path_factory, tmp_path,
                                                                       monkeypatch):
    """A spinning hart never sleeps, so no deadlock warning comes; the plugin's
    budget stops the run after that many instructions, long before the wall
    clock, and at the same instruction on every run."""
    monkeypatch.setenv("PTL_QEMU_INSN_BUDGET", "2000000")   # as a run gives it: the target from the environment
    artefact = build(target, tmp_path_factory, "test_hang", flags=["-DPTL_TEST_SPIN_IN_REGION"])
    runs = [make_target("qemu").execute(artefact, None, 60, tmp_path / str(k)) for k in range(2)]
    for raw in runs:
        assert raw.timed_out and raw.returncode is None and not raw.deadlock
        assert raw.seconds < 30
        assert "instruction budget exceeded in region 0: more than 2000000 instructions" in raw.stop_reason
        assert b"hang test starts" in raw.output
    counts = [(tmp_path / str(k) / COUNTS_NAME).read_text() for k in range(2)]
    assert counts[0] == counts[1] and counts[0].startswith("unclosed 0 ")
    spent = sum(int(x) for x in counts[0].splitlines()[0].split()[2:])
    assert 2_000_000 < spent <= 2_000_000 + 16     # cut within the straight-line segment that crossed it


@pytest.mark.parametrize("text", ["abc", "0", "-5", "1.5", "nan", "inf"])
def test_a_bad_instruction_budget_is_one_line_naming_the_variable(monkeypatch, text):
    monkeypatch.setenv("PTL_QEMU_INSN_BUDGET", text)
    with pytest.raises(ValueError, match="PTL_QEMU_INSN_BUDGET=.*: must be a positive whole number"):
        make_target("qemu")


def test_fork_beyond_the_harts_present_is_an_error_not_a_hang(target, tmp_path_factory, tmp_path):
    artefact = build(target, tmp_path_factory, "test_team")
    argv = target.qemu_argv(artefact, None, tmp_path / COUNTS_NAME)
    argv[argv.index("-smp") + 1] = "4"
    result = subprocess.run(argv, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 3
    errors = decode_records(result.stdout).case_errors
    assert any("more cores than harts" in e for e in errors), errors


# ---- IEEE binary16 on Zfh --------------------------------------------------------------

needs_zfh = pytest.mark.skipif(not toolchain.clang_has_zfh(), reason="clang with Zfh is not installed")


@needs_zfh
def test_fp16_build_runs_half_precision_instructions(target, tmp_path_factory, tmp_path):
    artefact = build(target, tmp_path_factory, "test_fp16", "fp16")
    objdump = shutil.which("llvm-objdump") or shutil.which("llvm-objdump-14")
    if objdump:  # GNU objdump loses Zfh after start.S's arch mapping symbol
        listing = subprocess.run([objdump, "-d", "--mattr=+zfh", str(artefact / "runner.elf")],
                                 capture_output=True, text=True).stdout
        assert re.search(r"\bflh\b", listing) and re.search(r"\bfmadd\.h\b", listing)
    raw = run(target, artefact, tmp_path)
    assert raw.returncode == 0, raw.output
    assert b"core 3: 5100/100" in raw.output


@needs_zfh
def test_fp16_build_traps_without_zfh(target, tmp_path_factory, tmp_path):
    artefact = build(target, tmp_path_factory, "test_fp16", "fp16")
    argv = target.qemu_argv(artefact, None, tmp_path / COUNTS_NAME)
    argv[argv.index("-cpu") + 1] = "rv32,d=false"
    result = subprocess.run(argv, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 12
    crash = decode_records(result.stdout).crash
    assert crash.cause == 2


def test_payload_window_fits_below_qemus_device_tree():
    values = layout()
    end = values["PTL_QEMU_PAYLOAD_ADDR"] + values["PTL_QEMU_PAYLOAD_MAX"]
    # QEMU places the device tree in the top 2 MiB of RAM.
    assert end <= values["PTL_QEMU_RAM_BASE"] + values["PTL_QEMU_RAM_SIZE"] - 2 * 1024 * 1024
