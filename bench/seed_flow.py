"""The published AutoTuner's flow for one configuration: the honest baseline.

For every configuration (tile shape x step x cores x kernel) the published
AutoTuner (tools/AutoTuner in pulp-trainlib, via each test's
utils/profile_optimized.py) runs, in a copy of the layer's test:

    rm -r BUILD/; make clean get_golden all run ...

that is, for that one configuration:
  1. get_golden: a fresh `python3 utils/GM.py`, which imports torch, runs the
     PyTorch golden model for that shape and writes its data as C;
  2. all: compiles the test's main.c and net.c, and the library sources its
     Makefile lists (6 for a depthwise/pointwise layer), from scratch;
  3. run: runs that program once.

SeedProgram does the same with the harness's parts:
  1. a fresh `python -m bench.seed_flow golden SPEC OUT` computes the case's
     golden bundle (torch, no cache);
  2. the runner's core and the target's runtime, the one op unit of the
     layer (our main.c and net.c), the payload as C, and the library sources
     that op links, all compiled anew with the suite's compiler and flags, as
     many at once as the machine has cores (the published flow runs several
     configurations at once, bwruntest -p, which on this machine amounts to
     the same), no object cache;
  3. one run on the target, its output judged as every case's.

What the Makefile lists by hand is found once, untimed, before the first
configuration: the library sources the op links (the link map of a link
against the whole library) and the op unit's compile probes.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from golden.bundle import ReferenceBundle  # noqa: E402
from harness.build_units import (LIBRARY_ERRORS, Toolchain, core_runner_sources, library_flags,  # noqa: E402
                                 op_unit_sources, parallel, unit_flags, unit_of, unit_table, unit_table_object)
from harness.cases import Case, OpEntry, Variant  # noqa: E402
from harness.payload import payload_as_c_source  # noqa: E402
from harness.session import Session, VariantResult, compute_bundle, fp16_format_of  # noqa: E402
from harness.target import LibrarySource  # noqa: E402

CATALOGUE_MODULES = ("conv2d", "conv_dw_pw", "linalg", "pool")   # the layer kinds' entries
_ARCHIVE_MEMBER = re.compile(r"libseed\.a\(m(\d+)\.o\)")   # a member the link map says was included


@dataclass(frozen=True)
class Timing:
    golden: float     # the fresh golden process
    build: float      # compile and link
    run: float        # the target run and its verdict

    @property
    def total(self) -> float:
        return self.golden + self.build + self.run


class SeedProgram:
    """One op unit's program, built and run per configuration as the seed does."""

    def __init__(self, session: Session, case: Case, workdir: Path):
        if session.target.name != "qemu":
            raise SystemExit(f"the seed's flow is built here for the qemu target, not {session.target.name}")
        from harness.targets.qemu import runtime_sources   # the qemu target's runtime (start-up, console)
        self.session, self.workdir = session, workdir
        self.library = LibrarySource.at(session.library_path)
        self.unit, self.dtype = unit_of(case.entry.unit, case.dtype).split("/")
        fmt = fp16_format_of(case.dtype)
        self.toolchain: Toolchain = session.target.toolchain(fmt, ["-DPTL_EMBEDDED_PAYLOAD"])
        self.core = [*core_runner_sources(), *(p for p in runtime_sources() if p.suffix == ".c")]
        self.unit_flags = unit_flags(self.toolchain, self.library, self.unit, self.dtype, workdir / "probes")
        self.sources = self._linked_library_sources(workdir / "trace")
        # The simulator's side (the counting plugin, the manifest) is the suite's: not the program's.
        self.program = workdir / "program"
        artefact = session.artefact_for(case.dtype).path
        self.program.mkdir(parents=True, exist_ok=True)
        for item in artefact.iterdir():
            if item.is_file() and item.suffix != ".elf":
                shutil.copy2(item, self.program / item.name)

    def _linked_library_sources(self, objdir: Path) -> list[Path]:
        """The library sources that the op unit's program links: what the
        published test's Makefile lists by hand, found from the link map."""
        objdir.mkdir(parents=True, exist_ok=True)
        members = [objdir / f"m{i}.o" for i in range(len(self.library.sources))]
        jobs = [(src, obj, [*library_flags(self.library), *LIBRARY_ERRORS])
                for src, obj in zip(self.library.sources, members)]
        built = [obj for (src, obj, flags) in jobs if _compiles(self.toolchain.compile(src, obj, flags))]
        archive = objdir / "libseed.a"
        _check(self.toolchain.archive(archive, built))
        empty = objdir / "payload_data.c"
        empty.write_text(payload_as_c_source(b""))
        own = self._compile_program(objdir, empty)
        link_map = objdir / "trace.map"
        _check([*self.toolchain.link([*own, archive], objdir / "trace.elf"), f"-Wl,-Map={link_map}"])
        included = set(_ARCHIVE_MEMBER.findall(link_map.read_text()))
        return [self.library.sources[int(i)] for i in sorted(included, key=int)]

    def _compile_program(self, objdir: Path, payload_source: Path, library_sources: list[Path] = ()) -> list[Path]:
        """Compiles the program's own files (and the given library sources); returns the objects."""
        jobs = [(src, []) for src in [*self.core, payload_source]]
        jobs += [(op_unit_sources()[self.unit], self.unit_flags)]
        jobs += [(src, [*library_flags(self.library), *LIBRARY_ERRORS]) for src in library_sources]
        objects = [objdir / f"{i:03d}_{src.stem}.o" for i, (src, _) in enumerate(jobs)]
        parallel(lambda job: _check(self.toolchain.compile(job[0][0], job[1], job[0][1])), list(zip(jobs, objects)))
        table = unit_table_object(self.toolchain, [unit_table(self.unit, self.dtype)], objdir, "seed")
        return [*objects, table]

    def configuration(self, variant: Variant) -> tuple[Timing, VariantResult]:
        """One configuration through the seed's three steps, each timed."""
        case, session = variant.case, self.session
        start = time.monotonic()
        bundle = golden_in_fresh_process(case, self.workdir / "golden.npz")
        golden_done = time.monotonic()
        layout = session.layout_for(case, session.artefact_for(case.dtype), bundle)
        payload = session.payload_for(case, [variant], bundle, layout)
        objdir = self.workdir / "build"
        shutil.rmtree(objdir, ignore_errors=True)     # rm -r BUILD/; make clean
        objdir.mkdir(parents=True)
        source = objdir / "payload_data.c"
        source.write_text(payload_as_c_source(payload))
        objects = self._compile_program(objdir, source, self.sources)
        _check(self.toolchain.link(objects, self.program / "runner.elf"))
        built = time.monotonic()
        raw = session.target.run(self.program, None, session.timeout, objdir)
        result = session.judge_one(variant, raw, payload, bundle, layout)
        return Timing(golden_done - start, built - golden_done, time.monotonic() - built), result


def golden_in_fresh_process(case: Case, out: Path) -> ReferenceBundle:
    """The case's golden bundle from a new Python process, as `make get_golden` runs GM.py."""
    spec = {"entry": _entry_address(case.entry), "dtype": case.dtype, "step": case.step,
            "shape": list(case.shape_items), "options": list(case.option_items)}
    out.unlink(missing_ok=True)
    result = subprocess.run([sys.executable, "-m", "bench.seed_flow", "golden", json.dumps(spec), str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    if result.returncode != 0 or not out.exists():
        raise SystemExit(f"the golden process for {case.id} failed:\n{result.stderr.strip()[-2000:]}")
    return ReferenceBundle.from_bytes(out.read_bytes())


def _entry_address(entry: OpEntry) -> str:
    """module:ATTRIBUTE of a catalogue entry (entries hold lambdas: they do not pickle)."""
    import importlib
    for module_name in CATALOGUE_MODULES:
        module = importlib.import_module(f"harness.catalogue.{module_name}")
        for attribute, value in vars(module).items():
            if value is entry:
                return f"{module.__name__}:{attribute}"
    raise SystemExit(f"catalogue entry {entry.name} is not a module attribute of {CATALOGUE_MODULES}")


def _golden_main(spec_text: str, out: str) -> None:
    import importlib
    spec = json.loads(spec_text)
    module, attribute = spec["entry"].split(":")
    entry = getattr(importlib.import_module(module), attribute)
    case = Case(entry, spec["dtype"], spec["step"], tuple(map(tuple, spec["shape"])),
                tuple(map(tuple, spec["options"])))
    Path(out).write_bytes(compute_bundle(case).to_bytes())


def _compiles(argv: list[str]) -> bool:
    return subprocess.run(argv, capture_output=True).returncode == 0


def _check(argv: list[str]) -> subprocess.CompletedProcess:
    """Runs a compile or link step; a failure ends the bench with the tool's error."""
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"the seed program does not build: {' '.join(argv[:3])} ...\n{result.stderr[-2000:]}")
    return result


if __name__ == "__main__" and sys.argv[1:2] == ["golden"]:
    _golden_main(sys.argv[2], sys.argv[3])
