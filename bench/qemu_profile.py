"""Where one variant spends its instructions on QEMU, by function: the
counting plugin's profile= (each instruction of the measured region counted
for the function that holds it, from the runner's symbol table). Shared by
the benches that print a split (mhsa_qemu.py, conv_paths.py --split)."""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from harness.cases import Variant
from harness.kernels import kernel_table
from harness.session import Session
from harness.targets.qemu import COUNTS_NAME, ELF_NAME, parse_profile, symbol_ranges

# The matmul's own functions: the kernels of the index tables, the manager
# that dispatches them, and lib_c's tile driver and tiles (static names).
MATMUL_HELPERS = re.compile(r"^(mm_manager|tile_\w+|ptl_mm_\w+|run_long|run_short)$")


def is_matmul(function: str) -> bool:
    # A GCC clone keeps its function's name before a dot: tile_1x5_bt_row.constprop.0
    name = function.split(".", 1)[0]
    return (name in kernel_table("fp32") or name in kernel_table("fp16")
            or bool(MATMUL_HELPERS.match(name)))


def by_function(session: Session, variant: Variant) -> dict[str, int]:
    """{function: instructions} of the variant's one measured region. The
    variant must pass its numeric check, and the profile must add up to the
    region's count; otherwise the bench stops with the reason."""
    case = variant.case
    bundle = session.bundle_for(case)
    artefact = session.artefact_for(case.dtype)
    layout = session.layout_for(case, artefact, bundle)
    payload = Session.payload_for(case, [variant], bundle, layout)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        ranges = workdir / "ranges.txt"
        ranges.write_text(symbol_ranges(artefact.path / ELF_NAME))
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
