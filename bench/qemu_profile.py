"""Where one variant spends its instructions on QEMU, by function: the
counting plugin's profile= (each instruction of the measured region counted
for the function that holds it, from the runner's symbol table). Shared by
the benches that print a split (mhsa_qemu.py, conv_paths.py --split).

Run on its own, it prints one variant's profile; with --by-instruction, one
function's instructions each with its count (the plugin given one range per
instruction of that function), to see which block of an inlined loop grew:

    python bench/qemu_profile.py VARIANT_ID [--trainlib PATH] [--by-instruction FUNCTION]

VARIANT_ID as the reports name it (results.csv's test_id); the library is
lib_c unless --trainlib says otherwise. Counts are of every hart.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import cache_layout  # noqa: E402
from harness import toolchain  # noqa: E402
from harness.cases import Variant  # noqa: E402
from harness.catalogue import families  # noqa: E402
from harness.failures import CaseFailure  # noqa: E402
from harness.kernels import kernel_table  # noqa: E402
from harness.session import Session  # noqa: E402
from harness.target import DEFAULT_LIBRARY  # noqa: E402
from harness.targets import make_target  # noqa: E402
from harness.targets.qemu import COUNTS_NAME, ELF_NAME, parse_profile, symbol_ranges  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\t(.*)$", re.M)   # objdump -d --no-show-raw-insn

# The matmul's own functions: the kernels of the index tables, the manager
# that dispatches them, and lib_c's tile driver and tiles (static names).
MATMUL_HELPERS = re.compile(r"^(mm_manager|tile_\w+|ptl_mm_\w+|run_long|run_short)$")


def is_matmul(function: str) -> bool:
    # A GCC clone keeps its function's name before a dot: tile_1x5_bt_row.constprop.0
    name = function.split(".", 1)[0]
    return (name in kernel_table("fp32") or name in kernel_table("fp16")
            or bool(MATMUL_HELPERS.match(name)))


def instruction_name(address: int) -> str:
    """The profile's name of one instruction of a function split by split_ranges."""
    return f"pc_{address:x}"


def split_ranges(ranges: str, function: str, starts: list[int]) -> str:
    """symbol_ranges' text with `function`'s range cut at each instruction
    start in `starts` (its disassembly), each piece named instruction_name:
    the plugin then counts that function by instruction."""
    lines, found = [], False
    for line in ranges.splitlines():
        start, end, name = line.split()
        if name != function:
            lines.append(line)
            continue
        found = True
        low, high = int(start, 16), int(end, 16)
        inside = sorted(a for a in starts if low <= a < high)
        if not inside or inside[0] != low:
            raise ValueError(f"the disassembly of {function} does not start at its symbol ({low:#x})")
        lines += [f"{a:x} {b:x} {instruction_name(a)}" for a, b in zip(inside, inside[1:] + [high])]
    if not found:
        raise ValueError(f"the runner has no function {function} with a size (its symbol table, nm -S)")
    return "".join(line + "\n" for line in lines)


def disassembly(elf: Path, ranges: str, function: str) -> dict[int, str]:
    """{address: instruction} of `function` in elf, as objdump prints it; of
    every function of that name (a static function of the FP32 and of the
    FP16 file, say)."""
    code = {}
    for line in ranges.splitlines():
        start, end, name = line.split()
        if name == function:
            listing = subprocess.run([toolchain.RISCV_OBJDUMP, "-d", "--no-show-raw-insn",
                                      f"--start-address=0x{start}", f"--stop-address=0x{end}", str(elf)],
                                     capture_output=True, text=True, check=True).stdout
            code.update((int(m.group(1), 16), m.group(2).strip()) for m in INSTRUCTION.finditer(listing))
    return code


def by_function(session: Session, variant: Variant, by_instruction: str | None = None,
                listing: dict[int, str] | None = None) -> dict[str, int]:
    """{function: instructions} of the variant's one measured region; with
    by_instruction, that function's instructions are counted one by one
    (named instruction_name), and `listing`, when given, receives their
    disassembly. The variant must pass its numeric check, and the profile
    must add up to the region's count; otherwise the bench stops with the
    reason."""
    case = variant.case
    bundle = session.bundle_for(case)
    artefact = session.artefact_for(case.dtype)
    layout = session.layout_for(case, artefact, bundle)
    payload = Session.payload_for(case, [variant], bundle, layout)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        ranges = workdir / "ranges.txt"
        elf = artefact.path / ELF_NAME
        text = symbol_ranges(elf)
        if by_instruction:
            code = disassembly(elf, text, by_instruction)
            try:
                text = split_ranges(text, by_instruction, list(code))
            except ValueError as exc:
                sys.exit(f"bench: {exc}")
            if listing is not None:
                listing.update(code)
        ranges.write_text(text)
        raw = session.target.execute(artefact.path, payload, 600.0, workdir, profile=ranges)
        counts = workdir / COUNTS_NAME
        counts_text = counts.read_text() if counts.exists() else ""
    result = session.judge_one(variant, raw, payload, bundle, layout)
    if not result.passed:
        sys.exit(f"bench: {variant.id} failed on qemu with the profile: {result.failure}")
    regions = parse_profile(counts_text)
    if len(regions) != 1:
        sys.exit(f"bench: expected one measured region with a profile, got {len(regions)}")
    functions = next(iter(regions.values()))
    total = sum(functions.values())
    if total != result.counters.latency:
        sys.exit(f"bench: the profile sums to {total} instructions, the region counted "
                 f"{result.counters.latency}")
    return functions


def split_row(functions: dict[str, int], top: int) -> tuple[int, str, str, str]:
    """(total, matmul share, the rest's share, the largest functions outside
    the matmul with their shares) for one table row."""
    total = sum(functions.values())
    matmul = sum(n for f, n in functions.items() if is_matmul(f))
    others = sorted(((n, f) for f, n in functions.items() if not is_matmul(f)), reverse=True)
    largest = ", ".join(f"`{f}` {n / total:.1%}" for n, f in others[:top])
    return total, f"{matmul / total:.1%}", f"{(total - matmul) / total:.1%}", largest


def find_variant(variant_id: str) -> Variant:
    """The catalogue's variant of that id, or the bench stops saying so."""
    for entries in families().values():
        for entry in entries:
            for variant in entry.variants():
                if variant.id == variant_id:
                    return variant
    sys.exit(f"bench: no variant {variant_id!r} in the catalogue (ids as results.csv's test_id)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variant", help="a variant id, e.g. im2col-fp32-fw-...-direct-c1")
    parser.add_argument("--trainlib", type=Path, default=DEFAULT_LIBRARY, help="library (default lib_c)")
    parser.add_argument("--by-instruction", metavar="FUNCTION",
                        help="count FUNCTION instruction by instruction (its name in the runner's symbols)")
    args = parser.parse_args()
    variant = find_variant(args.variant)
    session = Session(make_target("qemu"), args.trainlib.resolve(), cache_layout.default_root())
    listing: dict[int, str] = {}
    try:
        profile = by_function(session, variant, args.by_instruction, listing)
    except CaseFailure as exc:   # the library does not build, or the variant does not run
        sys.exit(f"bench: {variant.id}: {exc}")
    total = sum(profile.values())
    print(f"{variant.id}, {args.trainlib}: {total} instructions in the measured region, all harts")
    for address, instruction in sorted(listing.items()):
        count = profile.pop(instruction_name(address), 0)
        if count:
            print(f"{count:8d}  {address:08x}  {instruction}")
    if listing:
        print(f"{sum(profile.values()):8d}  the other functions, summed:")
    for function, count in sorted(profile.items(), key=lambda item: -item[1]):
        print(f"{count:8d}  {function}")


if __name__ == "__main__":
    main()
