"""Builds the runner so that one broken file fails only the cases that need it.

A library under test may hold sources that do not compile, and it may lack a
struct field that one runner op needs. Neither may take the whole suite down.
So the runner is built from separately compiled pieces:

- the runner core and the target's runtime: our own code, which must build;
- each library source on its own, into a static archive: the linker then
  pulls in only what the ops that are linked need (so the library's objects
  are first checked, all together, for symbols that two sources define: a
  firmware that links them all would fail there);
- each op unit, runtime/runner/ops_<unit>.c compiled once per dtype
  (ptl_op_dtype.h), against the library's headers.

A struct field that an op sets only where the library has it, or a function
it calls only where the library declares it (PTL_HAS_FIELD, PTL_HAS_FUNC in
ptl_op_dtype.h), is looked for with a compile probe first; units.json lists
what a library lacks (missing_fields), and the op reports the cases that need
it as `unsupported`.

lib_c's own matmul kernels (origin lib_c in ptl_kernels.def) are looked for
the same way, by name; units.json lists the ones a library lacks
(missing_kernels), and the session reports their variants `absent`.

A unit that does not compile, or that needs a symbol of a library source that
did not compile, is left out of the runner and named in units.json with the
first compiler or linker error. The runner's op list (ptl_op_units[]) is
generated from the units that built. The session turns a missing unit into a
`build` failure of exactly the cases of that unit and dtype.

The warnings that mean the runner and the library disagree about the API are
errors in the op units (API_ERRORS): a field filled with the wrong type or a
prototype that does not match must not compile into a wrong test.
"""
from __future__ import annotations

import json
import os
import re
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harness import c_header
from harness.buildcache import ObjectCache, ObjectStore
from harness.elf_symbols import ElfError, duplicate_definitions
from harness.kernels import kernel_tables, own_kernels
from harness.build_inputs import RUNTIME_DIR, TARGETS_DIR, BuildError, LibrarySource

RUNNER_DIR = RUNTIME_DIR / "runner"
UNIT_MANIFEST = "units.json"
UNIT_DTYPES = {"fp32": 32, "fp16": 16}
# Warnings that signal an API mismatch between the runner and the library.
API_ERRORS = ["-Werror=int-conversion", "-Werror=incompatible-pointer-types",
              "-Werror=implicit-function-declaration", "-Werror=implicit-int"]
# Library code calling a function it never declared gets the wrong ABI for
# float arguments: an error there too.
LIBRARY_ERRORS = ["-Werror=implicit-function-declaration"]
FORCED_INCLUDE = RUNTIME_DIR / "include" / "ptl_toolchain_types.h"
# Defined in every build of a library, on every target: a branch of
# `#ifndef OPTIMIZE` is code no build compiles (the mutation bench leaves it
# out). With it, the published API's opt_matmul_type_* fields choose a kernel.
LIBRARY_MACROS = ("OPTIMIZE",)
LIBRARY_DEFINES = tuple(f"-D{macro}" for macro in LIBRARY_MACROS)
# NUM_CORES. The harness builds a library once for every core count: the
# variant's count is the variable ptl_num_cores (pmsis.h), set before each
# variant. In an #if, though, an identifier is 0, so a library file that
# chooses its code by NUM_CORES in the preprocessor (`#if NUM_CORES > 1`)
# would be compiled as for one core and run by every core of the team. Such
# a file (found by preprocessing it both ways, cluster_files) gets the
# cluster's form instead: the preprocessor sees the cluster's cores, as a
# deployment's build does, and the code still the variant's count (never 0).
CLUSTER_CORES = c_header.number("ptl_runner.h", "PTL_MAX_CORES")
_TEAM_VALUE = "ptl_num_cores"
_CLUSTER_VALUE = f"(ptl_num_cores?ptl_num_cores:{CLUSTER_CORES})"
NUM_CORES_TEAM = f"-DNUM_CORES={_TEAM_VALUE}"
NUM_CORES_CLUSTER = ["-UNUM_CORES", f"-DNUM_CORES={_CLUSTER_VALUE}"]
_NUM_CORES_DIRECTIVE = re.compile(r"^[ \t]*#[^\n]*\bNUM_CORES\b", re.M)
_FIELD_QUERY = re.compile(r"\bPTL_HAS_FIELD\(\s*(\w+)\s*,\s*(\w+)\s*\)")
_FUNC_QUERY = re.compile(r"\bPTL_HAS_FUNC\(\s*(\w+)\s*\)")
_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
# A compiler's or linker's error line (not a path that merely holds "error").
_ERROR_LINE = re.compile(r"(?:^|[\s:])(?:fatal )?error:|#\s*error\b|undefined reference|multiple definition|"
                         r"\bld(?:\.\w+)?: cannot find", re.IGNORECASE)
# GCC: "In file included from a.h:2," then "                 from b.c:1:";
# clang: one "In file included from ...:" line per level.
_INCLUDED_FROM = re.compile(r"^(?:In file included from |\s+from )\S+:\d+[:,]$")
_INCLUDE_CHAIN_SHOWN = 3
_UNDEFINED = re.compile(r"undefined reference to [`'‘]([^'’`]+)['’]")
STORAGE_ONLY_HINT = ("this compiler has no arithmetic type for the library's 16-bit format, so the harness gives "
                     "it a storage-only type; a library that computes in that type cannot be tested with this "
                     "toolchain (README: Testing a PULP-TrainLib checkout)")


@dataclass(frozen=True)
class Toolchain:
    """How a target compiles, archives and links one build configuration."""

    compile: Callable[[Path, Path, list[str]], list[str]]  # (source, object, extra flags) -> argv
    archive: Callable[[Path, list[Path]], list[str]]        # (archive, objects) -> argv
    link: Callable[[list[Path], Path], list[str]]           # (objects and archives, output) -> argv


@dataclass
class UnitReport:
    """What built, and why the rest did not; saved as units.json in the artefact."""

    built: list[str] = field(default_factory=list)                   # "linalg/fp32", ...
    failed: dict[str, str] = field(default_factory=dict)             # unit -> reason
    library_failed: dict[str, str] = field(default_factory=dict)     # library file -> first error
    missing_fields: dict[str, list[str]] = field(default_factory=dict)  # unit -> ["Struct.field", ...]
    missing_kernels: dict[str, dict[int, str]] = field(default_factory=dict)  # table -> {index: name}
    cluster_files: list[str] = field(default_factory=list)           # library files given NUM_CORES_CLUSTER

    def save(self, outdir: Path) -> None:
        (outdir / UNIT_MANIFEST).write_text(json.dumps(
            {"built": self.built, "failed": self.failed, "library_failed": self.library_failed,
             "missing_fields": self.missing_fields, "missing_kernels": self.missing_kernels,
             "cluster_files": self.cluster_files}, indent=1))

    @classmethod
    def load(cls, artefact: Path) -> "UnitReport":
        data = json.loads((artefact / UNIT_MANIFEST).read_text())
        missing_kernels = {table: {int(index): name for index, name in kernels.items()}
                           for table, kernels in data.get("missing_kernels", {}).items()}
        return cls(data["built"], data["failed"], data["library_failed"], data.get("missing_fields", {}),
                   missing_kernels, data.get("cluster_files", []))


def unit_of(family: str, dtype: str) -> str:
    """The build unit that runs a family's cases of a dtype (bf16 runs the FP16 code)."""
    return f"{family}/{'fp32' if dtype == 'fp32' else 'fp16'}"


def op_unit_sources() -> dict[str, Path]:
    return {path.stem[len("ops_"):]: path for path in sorted(RUNNER_DIR.glob("ops_*.c"))}


def core_runner_sources() -> list[Path]:
    return [path for path in sorted(RUNNER_DIR.glob("*.c")) if not path.stem.startswith("ops_")]


def forced_include() -> list[str]:
    return ["-include", str(FORCED_INCLUDE)] if FORCED_INCLUDE.exists() else []


def library_flags(library: LibrarySource) -> list[str]:
    """What every file that includes the library's headers is compiled with."""
    return [*(f"-I{d}" for d in library.include_dirs), *forced_include()]


def first_error(output: str, source: Path | None = None) -> str:
    """The first error of a compiler or linker output, with the lines that show
    where, shortened to what a failure message can carry: the include chain
    that reached it, when it is in a header (the umbrella header's line that
    includes it, for one), the error, and its source line."""
    lines = output.strip().splitlines()
    start = next((i for i, line in enumerate(lines) if _ERROR_LINE.search(line)), 0)
    chain = start
    while chain > 0 and start - chain < _INCLUDE_CHAIN_SHOWN and _INCLUDED_FROM.match(lines[chain - 1]):
        chain -= 1
    shown = "\n".join(line[:240] for line in lines[chain:start + 3])
    if "storage_only" in shown:
        shown += f"\n({STORAGE_ONLY_HINT})"
    return shown or "(no compiler output)"


def headline(message: str) -> str:
    """The line of a build failure that says what is wrong (a compiler's
    error line, `#error` text included), for a one-line summary."""
    lines = message.strip().splitlines()
    return next((line.strip() for line in lines if _ERROR_LINE.search(line)), lines[0] if lines else "")


def _unit_text(source: Path) -> str:
    """An op unit's text and that of the headers it includes from its own
    directory (and they from it), each once: a query in such a header, a
    macro that several units share, is the including unit's query. Headers
    found elsewhere (the runtime's include directory, the library's) are
    not read: ptl_op_dtype.h's own definition of PTL_HAS_FIELD is no query."""
    texts, seen, todo = [], set(), [source]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = path.read_text(errors="replace")
        texts.append(text)
        todo += [source.parent / name for name in _LOCAL_INCLUDE.findall(text)]
    return "\n".join(texts)


def field_queries(source: Path, dtype: str) -> list[tuple[str, str]]:
    """What an op unit asks the library about, with the dtype's names (as
    PTL_S spells them: Struct or Struct_fp16): (struct, field) pairs of
    PTL_HAS_FIELD, and ("", function) pairs of PTL_HAS_FUNC, in the unit
    and in the headers it includes from its directory."""
    text = _unit_text(source)

    def spelled(base: str) -> str:
        return base if dtype == "fp32" else f"{base}_fp16"
    pairs = [(spelled(base), name) for base, name in _FIELD_QUERY.findall(text)]
    pairs += [("", spelled(name)) for name in _FUNC_QUERY.findall(text)]
    return list(dict.fromkeys(pairs))


def _query_define(struct: str, name: str) -> str:
    return f"-DPTL_HAS_FIELD_{struct}_{name}=1" if struct else f"-DPTL_HAS_FUNC_{name}=1"


def _query_label(struct: str, name: str) -> str:
    return f"{struct}.{name}" if struct else f"{name}()"


def _library_has(toolchain: Toolchain, library: LibrarySource, struct: str, name: str, workdir: Path) -> bool:
    """A compile probe: the struct has the field, or (no struct) the function is declared."""
    source = workdir / f"has_{struct}_{name}.c"
    probe = (f"int ptl_probe = (int)sizeof(((struct {struct} *)0)->{name});" if struct
             else f"void *ptl_probe(void) {{ return (void *)&{name}; }}")
    source.write_text(f'#include "pulp_train.h"\n{probe}\n')
    return _run(toolchain.compile(source, source.with_suffix(".o"), library_flags(library))).returncode == 0


def cluster_files(toolchain: Toolchain, library: LibrarySource, workdir: Path) -> list[Path]:
    """The library files whose preprocessed text depends on NUM_CORES's
    value (an #if on it, directly or through a macro): each preprocessed with
    NUM_CORES as the team's variable (0 in an #if) and as the cluster's form,
    the latter's spelling then put back; they differ only where a directive
    chose otherwise. Only looked for in a library with a directive that
    names NUM_CORES at all (lib_c has none)."""
    texts = [path.read_text(errors="replace") for root in (*library.include_dirs, *{s.parent for s in library.sources})
             for path in sorted(Path(root).glob("*.[ch]"))]
    if not any(_NUM_CORES_DIRECTIVE.search(text) for text in texts):
        return []
    def depends(source: Path) -> bool:
        outputs = []
        for tag, define in (("team", [NUM_CORES_TEAM]), ("cluster", NUM_CORES_CLUSTER)):
            out = workdir / f"num_cores_{tag}_{source.stem}.i"
            result = _run(toolchain.compile(source, out, [*library_flags(library), "-UNUM_CORES", *define, "-E", "-P"]))
            if result.returncode != 0:
                return False  # it does not compile: its build says why
            outputs.append(out.read_text(errors="replace"))
            out.unlink()
        return outputs[0] != outputs[1].replace(_CLUSTER_VALUE, _TEAM_VALUE)

    workdir.mkdir(parents=True, exist_ok=True)
    return [source for source, dep in zip(library.sources, parallel(depends, library.sources)) if dep]


def unit_table(unit: str, dtype: str) -> str:
    """The C name of an op unit's op table in one dtype."""
    return f"ptl_ops_{unit}_{dtype}"


def library_kernel_count(table: str, missing: dict[int, str]) -> int:
    """How many indices the library's mm_manager has in a kernel table: one
    past the last kernel of ptl_kernels.def it has (`missing`: the indices of
    lib_c's own kernels it lacks). The first index out of its range."""
    present = [index for index in range(len(kernel_tables()[table])) if index not in missing]
    return max(present) + 1


def _unit_flags(library: LibrarySource, unit: str, dtype: str, defines: list[str],
                missing_kernels: dict[int, str]) -> list[str]:
    """What an op unit compiles with: the library's headers, the API errors,
    its dtype and table name, the length of the library's kernel table in
    its dtype (PTL_LIBRARY_KERNELS) and the PTL_HAS_* answers (defines)."""
    return [*library_flags(library), *API_ERRORS, f"-DPTL_OP_FP={UNIT_DTYPES[dtype]}",
            f"-DPTL_OP_TABLE={unit_table(unit, dtype)}",
            f"-DPTL_LIBRARY_KERNELS={library_kernel_count(dtype, missing_kernels)}", *defines]


def unit_flags(toolchain: Toolchain, library: LibrarySource, unit: str, dtype: str, workdir: Path) -> list[str]:
    """The flags of one op unit against a library, its compile probes run
    here (build_runner runs those of every unit at once)."""
    workdir.mkdir(parents=True, exist_ok=True)
    fields = field_queries(op_unit_sources()[unit], dtype)
    missing = {index: name for table, index, name in own_kernels()
               if table == dtype and not _library_has(toolchain, library, "", name, workdir)}
    return _unit_flags(library, unit, dtype, [_query_define(struct, name) for struct, name in fields
                                              if _library_has(toolchain, library, struct, name, workdir)], missing)


def parallel(function: Callable, items: list) -> list:
    """function over items, as many at once as there are cores, in order.
    A Ctrl-C (or any exception) cancels the items not started yet, instead
    of waiting for the whole build to finish before the session can stop."""
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
    try:
        return list(pool.map(function, items))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        raise BuildError(f"tool not found: {argv[0]}") from None


def build_runner(toolchain: Toolchain, library: LibrarySource, extra_core: list[Path], output: Path,
                 objdir: Path, object_store: ObjectStore | None = None) -> UnitReport:
    """Compiles and links the runner at `output`; returns what built and what not.
    Raises BuildError only when our own code (core, runtime) does not build or
    no op unit at all could be linked. With an object store, each source whose
    compilation has been seen before is taken from there (ObjectCache)."""
    objdir.mkdir(parents=True, exist_ok=True)
    cache = None if object_store is None else ObjectCache(object_store, [*library.digest_roots, RUNTIME_DIR, TARGETS_DIR],
                                                          {"LIB": library.root, "OBJ": objdir})

    def compile_one(source: Path, obj: Path, flags: list[str]) -> subprocess.CompletedProcess:
        argv = toolchain.compile(source, obj, flags)
        return _run(argv) if cache is None else cache.compile(argv, source, obj, _run)

    core_jobs = {src: [] for src in [*core_runner_sources(), *extra_core]}
    report = UnitReport()
    clustered = cluster_files(toolchain, library, objdir)
    report.cluster_files = sorted(src.name for src in clustered)
    library_jobs = {src: [*library_flags(library), *LIBRARY_ERRORS, *(NUM_CORES_CLUSTER if src in clustered else [])]
                    for src in library.sources}
    queries = {(unit, dtype): field_queries(source, dtype)
               for unit, source in op_unit_sources().items() for dtype in UNIT_DTYPES}
    kernel_probes = {("", name): (table, index) for table, index, name in own_kernels()}
    probes = sorted({pair for pairs in queries.values() for pair in pairs} | set(kernel_probes))
    present = dict(zip(probes, parallel(lambda pair: _library_has(toolchain, library, *pair, objdir), probes)))
    for pair, (table, index) in sorted(kernel_probes.items(), key=lambda item: item[1]):
        if not present[pair]:
            report.missing_kernels.setdefault(table, {})[index] = pair[1]
    unit_jobs = {}
    for unit, source in op_unit_sources().items():
        for dtype in UNIT_DTYPES:
            table = unit_table(unit, dtype)
            fields = queries[unit, dtype]
            missing = [_query_label(struct, name) for struct, name in fields if not present[struct, name]]
            if missing:
                report.missing_fields[f"{unit}/{dtype}"] = missing
            unit_jobs[f"{unit}/{dtype}"] = (source, _unit_flags(library, unit, dtype, [
                _query_define(struct, name) for struct, name in fields if present[struct, name]],
                report.missing_kernels.get(dtype, {})), table)

    jobs = [(f"core/{src.name}", src, flags) for src, flags in core_jobs.items()]
    jobs += [(f"lib/{src.name}", src, flags) for src, flags in library_jobs.items()]
    jobs += [(f"unit/{name}", src, flags) for name, (src, flags, _) in unit_jobs.items()]
    objects = {key: objdir / f"{i:03d}_{key.replace('/', '_')}.o" for i, (key, _, _) in enumerate(jobs)}
    results = dict(zip([key for key, _, _ in jobs],
                       parallel(lambda job: compile_one(job[1], objects[job[0]], job[2]), jobs)))

    for key, result in results.items():
        if result.returncode == 0:
            continue
        kind, name = key.split("/", 1)
        message = first_error(result.stderr or result.stdout)
        if kind == "core":
            raise BuildError(f"the runner's own {name} does not compile:\n{message}")
        if kind == "lib":
            report.library_failed[name] = message
        else:
            report.failed[name] = f"{unit_jobs[name][0].name} does not compile against the library:\n{message}"

    library_objects = [objects[f"lib/{s.name}"] for s in library.sources if s.name not in report.library_failed]
    check_whole_library_links(library, {s.name: objects[f"lib/{s.name}"] for s in library.sources
                                        if s.name not in report.library_failed})
    archive = objdir / "libtrainlib.a"
    archive.unlink(missing_ok=True)
    if library_objects:
        result = _run(toolchain.archive(archive, library_objects))
        if result.returncode != 0:
            raise BuildError(f"archiving the library failed:\n{first_error(result.stderr)}")
    core_objects = [objects[f"core/{src.name}"] for src in core_jobs]
    candidates = [name for name in unit_jobs if name not in report.failed]

    def link(units: list[str], out: Path) -> subprocess.CompletedProcess:
        table = unit_table_object(toolchain, [unit_jobs[u][2] for u in units], objdir, out.name)
        unit_objects = [objects[f"unit/{u}"] for u in units]
        return _run(toolchain.link([*core_objects, table, *unit_objects, *([archive] if library_objects else [])],
                                   out))

    result = link(candidates, output)
    if result.returncode != 0:
        # Find the units that cannot link, one trial link each.
        for unit in list(candidates):
            trial = link([unit], objdir / f"trial_{unit.replace('/', '_')}")
            if trial.returncode != 0:
                candidates.remove(unit)
                report.failed[unit] = _link_failure(unit_jobs[unit][0], trial.stderr, library, report)
        result = link(candidates, output)
        if result.returncode != 0:
            raise BuildError(f"linking the runner failed:\n{first_error(result.stderr)}")
    report.built = candidates
    return report


def check_whole_library_links(library: LibrarySource, objects: dict[str, Path]) -> None:
    """Raises BuildError when two library sources define the same symbol: the
    runner links the library as an archive (only the members an op needs),
    but a firmware that links every object of the library fails with
    "multiple definition", so this is checked over all of them."""
    try:
        duplicates = duplicate_definitions(objects)
    except (ElfError, OSError, struct.error, IndexError, ValueError) as exc:
        raise BuildError(f"cannot read the symbols of the library's objects: {exc}") from None
    if not duplicates:
        return
    said = [f"`{name}` in {' and '.join(sources)}" for name, sources in list(duplicates.items())[:5]]
    more = f" (and {len(duplicates) - 5} more)" if len(duplicates) > 5 else ""
    raise BuildError(f"multiple definition of {'; '.join(said)}{more}: the library does not link as a "
                     f"firmware links it (every object), although the runner's archive link would hide it; "
                     f"expected each symbol defined by one source of {library.root}: make one of them static, "
                     f"or remove or rename it")


def unit_table_object(toolchain: Toolchain, tables: list[str], objdir: Path, tag: str) -> Path:
    """ptl_op_units[]: the op tables of the units linked into this runner."""
    source = objdir / f"op_units_{tag}.c"
    lines = ['#include "ptl_runner.h"', *(f"extern const struct ptl_op {t}[];" for t in tables),
             "const struct ptl_op *const ptl_op_units[] = {", *(f"    {t}," for t in tables), "    0,", "};"]
    source.write_text("\n".join(lines) + "\n")
    obj = source.with_suffix(".o")
    result = _run(toolchain.compile(source, obj, []))
    if result.returncode != 0:
        raise BuildError(f"the generated op list does not compile:\n{first_error(result.stderr)}")
    return obj


def _link_failure(source: Path, output: str, library: LibrarySource, report: UnitReport) -> str:
    """Why a unit does not link: its undefined symbols, and the library sources
    that mention them but did not compile; where none names them, that the
    library lacks them, and every source that did not compile (a name made by
    a macro, `LIN_NAME(fw)`, is in none of them by name)."""
    missing = sorted(set(_UNDEFINED.findall(output)))
    if not missing:
        return f"{source.name} does not link against the library:\n{first_error(output)}"
    lines = [f"{source.name} does not link: undefined reference to {', '.join(missing[:6])}"
             + (" ..." if len(missing) > 6 else "")]
    for path in library.sources:
        if path.name in report.library_failed:
            text = path.read_text(errors="replace")
            if any(re.search(rf"\b{re.escape(symbol)}\b", text) for symbol in missing):
                lines.append(f"{path.name}, which defines or uses it, did not compile:\n"
                             f"{report.library_failed[path.name]}")
    if len(lines) == 1:
        lines.append("no library source defines it: the library lacks this function"
                     + (", or makes its name with a macro in a source that did not compile:"
                        if report.library_failed else ""))
        lines += [f"{name}:\n{error}" for name, error in sorted(report.library_failed.items())]
    return "\n".join(lines)
