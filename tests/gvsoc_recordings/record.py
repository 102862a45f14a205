"""Re-records the GVSOC transcripts that tests/test_gvsoc_target.py replays.

    PTL_GVSOC=PREFIX python tests/gvsoc_recordings/record.py [NAME...]

records every transcript, or only the ones named (e.g. past-l1). It
needs GVSOC (scripts/install-gvsoc.sh) and the RISC-V toolchain. Each
recording is one JSON file: the launcher's argv (paths shortened), exit code
(null when killed), stdout, stderr, and for runner runs the payload's CRC
and the case's variants. The self-test programs are
harness/targets/gvsoc/runtime/tests/test_runtime.c, one build per behaviour.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.payload import payload_crc  # noqa: E402
from harness.session import Session  # noqa: E402
from harness.target import DEFAULT_LIBRARY, run_command  # noqa: E402
from harness.targets import make_target  # noqa: E402
from harness.targets.gvsoc import (BUDGET_SYMBOL, SELF_TEST, cycle_budget, elf_with_payload,  # noqa: E402
                                   elf_with_word, gvsoc_argv, layout)
from harness.catalogue.conv2d import CONV2D_KERNEL_SWEEP  # noqa: E402
from harness.catalogue.linalg import MATMUL  # noqa: E402

HERE = Path(__file__).parent
WATCHDOG_BUDGET = 2_000_000
# name: (PTL_TEST_CASE, the watchdog's cycle budget or None for none)
SELF_TESTS = {"team": (0, None), "illegal": (1, None), "unmapped": (2, None), "hang": (3, WATCHDOG_BUDGET),
              "deadlock": (4, WATCHDOG_BUDGET), "hang-unwatched": (3, None), "past-l1": (6, WATCHDOG_BUDGET)}
HANG_TIMEOUT_S = 5.0
# name: (entry, case, core counts) of the runner's runs, kernel 0 each:
# a small matmul whose run holds a 1-core and an 8-core variant, and a case
# whose 57 KiB of buffers do not all fit the L1 heap (a SPILL record).
RUNNER_CASES = {"matmul": (MATMUL, "matmul-fp32-fw-N9xM4xK8-trans_B0-bias0", (1, 8)),
                "spill": (CONV2D_KERNEL_SWEEP,
                          "conv2d-fp32-ig-Ci16xH4xW4xCo32xHk3xWk3xsh1xsw1xL1xR1xU1xD1-HWC0-bias0-dma0-im2col1", (8,))}


def record(name: str, argv: list[str], elf: Path, timeout: float, **extra) -> None:
    raw = run_command(argv, timeout, cwd=elf.parent, tree=True)
    shown = [a.replace(str(elf), "runner.elf") for a in argv]
    shown[shown.index("stdbuf") + 2] = "gvsoc"
    (HERE / f"{name}.json").write_text(json.dumps(
        dict(argv=shown, returncode=raw.returncode, timed_out=raw.timed_out,
             stdout=raw.output.decode(), stderr=raw.stderr.decode(), **extra), indent=1) + "\n")
    print(f"{name}: exit {raw.returncode}, {len(raw.output)} bytes of output, {raw.seconds:.2f} s")


def record_runner(session: Session, name: str, entry, case_id: str, cores: tuple[int, ...], workdir: Path) -> None:
    case = next(c for c in entry.cases() if c.id == case_id)
    variants = [v for v in entry.variants() if v.case == case and v.kernel == 0 and v.cores in cores]
    bundle, artefact = session.bundle_for(case), session.artefact_for(case.dtype)
    payload = session.payload_for(case, variants, bundle, session.layout_for(case, artefact, bundle))
    workdir.mkdir()
    elf = workdir / "runner.elf"
    elf.write_bytes(elf_with_word(elf_with_payload((artefact.path / "runner.elf").read_bytes(), payload,
                                                   layout()["PTL_GVSOC_PAYLOAD_ADDR"]),
                                  BUDGET_SYMBOL, cycle_budget(case_id)))
    record(name, gvsoc_argv(session.target.launcher, elf), elf, 60.0, payload_crc=payload_crc(payload),
           variants=[v.id for v in variants])


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(SELF_TESTS) - set(RUNNER_CASES))
    if unknown:
        print(f"no recording named {', '.join(unknown)}; there are {', '.join([*SELF_TESTS, *RUNNER_CASES])}",
              file=sys.stderr)
        return 2
    wanted = set(names) or {*SELF_TESTS, *RUNNER_CASES}
    target = make_target("gvsoc")   # GVSOC where PTL_GVSOC (or PATH) says
    if target.unavailable_reason():
        print(target.unavailable_reason(), file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        for name, (number, budget) in SELF_TESTS.items():
            if name not in wanted:
                continue
            elf = target.build_program([SELF_TEST], Path(tmp) / name, [f"-DPTL_TEST_CASE={number}"])
            if budget is not None:
                elf.write_bytes(elf_with_word(elf.read_bytes(), BUDGET_SYMBOL, budget))
            record(name, gvsoc_argv(target.launcher, elf), elf, HANG_TIMEOUT_S if number in (3, 4) else 60.0,
                   cycle_budget=budget)

        session = Session(target, DEFAULT_LIBRARY, Path(tmp) / "cache")
        for name, (entry, case_id, cores) in RUNNER_CASES.items():
            if name not in wanted:
                continue
            record_runner(session, name, entry, case_id, cores, Path(tmp) / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
