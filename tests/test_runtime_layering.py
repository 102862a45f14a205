"""The C runtimes have no circle: for each target, the files of its runtime
and the runner's core (every object but the library and the op units) call
each other in one direction only, read from the symbols of their compiled
objects (nm: what each defines, what it needs). So a file can be
understood, and replaced, from the ones below it: the virtual board swaps
QEMU's payload delivery (targets/qemu/runtime/loader/) for its own
(targets/board/runtime/) without an #ifdef."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness import toolchain
from harness.build_inputs import DEFAULT_LIBRARY, BuildConfig, LibrarySource
from harness.build_units import core_runner_sources, parallel
from harness.targets import board, gvsoc, host, qemu
from tests.graphs import circle

RISCV_NM = toolchain.RISCV_NM


def _qemu():
    return qemu.RUNTIME.toolchain("bf16"), [*(p for p in qemu.runtime_sources() if p.suffix == ".c"),
                                            *qemu.loader_sources()]


def _board():
    return qemu.RUNTIME.toolchain("bf16", board.BOARD_FLAGS), [
        *(p for p in qemu.runtime_sources() if p.suffix == ".c"), *board.VIRTUAL_SOURCES]


def _gvsoc():
    return gvsoc.RUNTIME.toolchain("bf16"), gvsoc.runtime_sources()


def _host():
    config = BuildConfig(LibrarySource.at(DEFAULT_LIBRARY), "bf16", None)
    return host.HostTarget().toolchain(config), sorted(host.HOST_RUNTIME.glob("*.c"))


RUNTIMES = {"qemu": (_qemu, RISCV_NM), "board": (_board, RISCV_NM), "gvsoc": (_gvsoc, RISCV_NM), "host": (_host, "nm")}


def call_graph(units, nm: str, objdir: Path) -> dict[str, set[str]]:
    """file -> the files whose symbols it uses, among these."""
    tools, sources = units
    sources = [*core_runner_sources(), *sources]
    objects = [objdir / f"{i:02d}_{s.name}.o" for i, s in enumerate(sources)]

    def compile_one(job):
        source, obj = job
        result = subprocess.run(tools.compile(source, obj, []), capture_output=True, text=True)
        assert result.returncode == 0, f"{source} does not compile:\n{result.stderr[-2000:]}"
    parallel(compile_one, list(zip(sources, objects)))
    defined, needed = {}, {}
    for source, obj in zip(sources, objects):
        name = str(source.relative_to(source.parents[2])) if "targets" in source.parts else source.name
        needed[name] = set()
        for line in subprocess.run([nm, str(obj)], capture_output=True, text=True, check=True).stdout.splitlines():
            fields = line.split()
            if len(fields) == 2 and fields[0] == "U":
                needed[name].add(fields[1])
            elif len(fields) == 3 and fields[1] in "TDBRSGCV":
                defined[fields[2]] = name
    return {name: {defined[s] for s in symbols if s in defined and defined[s] != name}
            for name, symbols in needed.items()}


@pytest.mark.parametrize("name", sorted(RUNTIMES))
def test_no_file_of_a_runtime_calls_back_into_one_that_calls_it(name, tmp_path):
    units, nm = RUNTIMES[name]
    if shutil.which(nm) is None or (nm == RISCV_NM and shutil.which(toolchain.RISCV_GCC) is None):
        pytest.skip(f"{nm} or the RISC-V compiler is not installed")
    graph = call_graph(units(), nm, tmp_path)
    assert len(graph) > 8, graph      # the runtime and the runner's core were all read
    found = circle(graph)
    assert found is None, f"{name}: " + " -> ".join(found)
