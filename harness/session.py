"""One test session on one target: golden bundles, builds and runs, cached.

results_for(case, variants) is the whole path of a case: reference bundle
(cached by content), runner build (once per configuration, cached by
content), payload, run, decode, compare. It returns one VariantResult per
variant, each either passed or failed with a failure class and a message.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from golden.bundle import BundleCache, ReferenceBundle
from golden.formats import format_named
from golden.inputs import uniform_inputs
from harness import build_units, cache_layout, cache_prune, core_split, failures, library_snapshot
from harness.build_units import CLUSTER_CORES, UnitReport, headline, unit_of
from harness.buildcache import BuildCache, ObjectStore, digest_files
from harness.cases import Case, Variant, entry_source_digest
from harness.delivery import runnable
from harness.compare import compare_tensor
from harness.compilers import FORMAT_NAMES
from harness.failures import CaseFailure
from harness.payload import VariantSpec, encode_payload, payload_crc
from harness.protocol import (STATUS_GUARD, STATUS_NO_MEMORY, STATUS_UNSUPPORTED, DecodedRun, TransportError,
                              decode_records)
from harness.results_db import Measurement, ResultsDB, ResultsDBError, Scope, case_key
from harness.runner_contract import CaseLayout, RunnerContract
from harness.target import BuildConfig, BuildError, LibrarySource, RawRun, Target

GOLDEN_SEED = 20261122


@dataclass
class Counters:
    unit: str
    latency: int | None = None   # max over cores (QEMU) or wall time of the region (host)
    work: int | None = None      # sum over cores, where the target counts per core
    per_core: list[int] = field(default_factory=list)
    instructions: int | None = None  # sum over cores, where a cycle-counting target also counts them
    l2_bytes: int | None = None      # heap bytes in L2 during the region, where the target's heap spills


@dataclass
class VariantResult:
    variant: Variant
    failure: CaseFailure | None = None
    counters: Counters | None = None
    max_ulp: int | None = None
    mean_ulp: float | None = None
    worst_ratio: float | None = None
    attachments: dict[str, str] = field(default_factory=dict)   # report files of a chained run
    delivery: dict = field(default_factory=dict)    # RawRun.delivery: attempts and boards on a farm

    @property
    def passed(self) -> bool:
        return self.failure is None


def fp16_format_of(dtype: str) -> str:
    return "fp16" if dtype == "fp16" else "bf16"


@dataclass(frozen=True)
class Artefact:
    """A built runner: where it is, which op units it holds, and their contract."""

    path: Path
    units: UnitReport
    contract: RunnerContract


def compute_bundle(case: Case) -> ReferenceBundle:
    """A case's seeded inputs and its golden reference, computed (no cache)."""
    inputs = {}
    for name, shape in case.entry.inputs(case).items():   # one generator per tensor: split freely
        fmt = format_named(case.entry.format_of(name, case.dtype))
        inputs.update(uniform_inputs({name: shape}, fmt, GOLDEN_SEED))
    if case.entry.input_values:
        inputs = case.entry.input_values(case, inputs)
    return ReferenceBundle(inputs, case.entry.reference(case, inputs))


class Session:
    def __init__(self, target: Target, library: Path, cache_dir: Path, sanitize: str | None = None,
                 timeout: float = 60.0, l1_bytes: int | None = None, results_db: ResultsDB | None = None,
                 snapshot: Path | None = None):
        self.target = target
        self.l1_bytes = l1_bytes if l1_bytes is not None else target.capabilities.l1_bytes
        self.library_path = Path(library)
        self.sanitize = sanitize
        self.timeout = timeout
        # Damaged cache entries found (and repaired) in this session, one line each.
        self.cache_warnings: list[str] = []
        cache_prune.hold(Path(cache_dir))   # no prune removes an entry under this process
        # What is built: the copy of the library taken when the run started
        # (harness/library_snapshot.py; given, by an xdist worker's
        # controller, or taken now), or the library itself where there is
        # none; messages name the library's own path either way (shown).
        if snapshot is None:
            snapshot = library_snapshot.snapshot_root(self.library_path, Path(cache_dir), self.warn)
        self.build_path = Path(snapshot) if snapshot is not None else self.library_path
        self.golden = BundleCache(Path(cache_dir) / cache_layout.GOLDEN, warn=self.warn)
        self.builds = BuildCache(Path(cache_dir), warn=self.warn)
        # Compiled objects: under the cache, or in PTL_OBJECTS_DIR, a store that
        # several caches share (an object's key holds everything its compilation
        # reads, so any build may reuse it; harness/buildcache.py, ObjectCache).
        self.objects_dir = Path(os.environ.get("PTL_OBJECTS_DIR") or Path(cache_dir) / cache_layout.OBJECTS)
        # Scratch space of the runs; removed when the session is closed or
        # collected, or when the interpreter exits, whoever made the session.
        self._scratch = tempfile.TemporaryDirectory(prefix="ptl-run-", ignore_cleanup_errors=True)
        self.workdir = Path(self._scratch.name)
        self._artefacts: dict[str, Artefact | CaseFailure] = {}
        self._results: dict[Case, dict[Variant, VariantResult]] = {}
        self._materials: dict[str, dict] = {}
        self._build_configs: dict[str, BuildConfig] = {}
        self._compilers: dict = {}   # format -> the target's CompilerChoice (or None)
        self._scopes: dict[tuple[str, bool], Scope] = {}
        self.results_db = results_db
        self.results_db_error: str | None = None   # the first failed write, said once by the caller
        self.runs = 0

    def warn(self, message: str) -> None:
        if message not in self.cache_warnings:
            self.cache_warnings.append(message)

    # ---- stages --------------------------------------------------------------

    def bundle_for(self, case: Case) -> ReferenceBundle:
        # The key holds everything the bundle depends on besides golden/*.py
        # and torch (BundleCache adds those): the case, the seed and the
        # catalogue code that shapes the inputs and calls the reference.
        key = dict(case.description(), seed=GOLDEN_SEED, catalogue=entry_source_digest(case.entry))
        try:
            return self.golden.get(key, lambda: compute_bundle(case))
        except OSError as exc:
            raise _environment_failure("the golden cache", exc) from None

    def format_mismatch(self, dtype: str) -> str | None:
        """Why the library cannot run a 16-bit dtype's cases: its own fp16 is
        the other format (the published library's is bfloat16). None when it
        can, or for FP32."""
        if dtype == "fp32":
            return None
        fmt = fp16_format_of(dtype)
        choice = self._compiler_choice(fmt)
        if choice is None or choice.fp16_format(fmt) == fmt:
            return None
        other = {"bf16": "float16alt", "fp16": "float16"}[choice.library_fp16]
        return (f"the library's fp16 is {FORMAT_NAMES[choice.library_fp16]} (its headers declare fp16 as "
                f"{other}), so its FP16 code cannot compute in {FORMAT_NAMES[fmt]}: the {dtype} cases do not apply "
                f"to it; its FP16 families run as {choice.library_fp16}")

    def artefact_for(self, dtype: str) -> Artefact:
        """The runner built for the format a dtype needs; a failed build is
        remembered, so every case of that configuration fails at once. The
        IEEE fp16 build serves only fp16 cases: for a library whose fp16 is
        bfloat16 it is not built at all."""
        fmt = fp16_format_of(dtype)
        if fmt not in self._artefacts:
            mismatch = self.format_mismatch(dtype) if fmt == "fp16" else None
            self._artefacts[fmt] = CaseFailure(failures.NOT_FIT, mismatch) if mismatch else self._build(fmt)
        artefact = self._artefacts[fmt]
        if isinstance(artefact, CaseFailure):
            raise artefact
        return artefact

    def kernels_for(self, case: Case) -> tuple[int, ...]:
        """The case's kernel indices that the library under test has: every one
        of the published table, and lib_c's own only where the library has
        them (what the tuner offers). Builds the runner if needed; a case that
        cannot build keeps them all, and fails on its own when run."""
        kernels = case.entry.kernels(case.dtype, case.step)
        try:
            artefact = self.artefact_for(case.dtype)
        except CaseFailure:
            return kernels
        missing = self._missing_kernels(case, artefact)
        return tuple(k for k in kernels if k not in missing)

    @staticmethod
    def _missing_kernels(case: Case, artefact: Artefact) -> dict[int, str]:
        """{index: name} of lib_c's own kernels of the case's table that the
        library under test lacks (units.json, missing_kernels)."""
        op = artefact.contract.ops.get(case.entry.runner_op(case.dtype))
        return artefact.units.missing_kernels.get(op.kernels, {}) if op else {}

    def build_summary(self) -> list[str]:
        """One line per built configuration: which op units and library files
        built and which did not (the run's header and summary show it)."""
        lines = []
        for fmt in sorted(self._artefacts):
            choice = self._compiler_choice(fmt)
            if choice is not None:
                route = self.target.fp16_route(choice.fp16_format(fmt), choice)
                lines.append(f"{fmt} compiler: {choice.describe(fmt)}" + (f"; computes {route}" if route else ""))
        for fmt, artefact in sorted(self._artefacts.items()):
            if isinstance(artefact, CaseFailure) and artefact.kind == failures.NOT_FIT:
                lines.append(f"{fmt}: not built: {artefact.message.splitlines()[0]}")
                continue
            if isinstance(artefact, CaseFailure):
                lines.append(f"{fmt}: the build failed: {artefact.message.splitlines()[0]}")
                continue
            units = artefact.units
            line = f"{fmt}: built {', '.join(units.built) or 'nothing'}"
            if units.failed:
                line += f"; NOT built: {', '.join(sorted(units.failed))}"
            if units.library_failed:
                line += f"; library files that do not compile: {', '.join(sorted(units.library_failed))}"
            if units.cluster_files:
                line += (f"; choosing code by NUM_CORES in the preprocessor, compiled as for the "
                         f"{CLUSTER_CORES}-core cluster (README, NUM_CORES): {', '.join(units.cluster_files)}")
            lines.append(line)
        return [self.shown(line) for line in lines]

    def compiler_of(self, dtype: str) -> dict[str, str]:
        """The compiler of a dtype's build and the format its FP16 code computes
        in, as report properties; empty where the target has one compiler."""
        fmt = fp16_format_of(dtype)
        choice = self._compiler_choice(fmt)
        if choice is None:
            return {}
        route = self.target.fp16_route(choice.fp16_format(fmt), choice)
        return {"compiler": f"{choice.compiler.name} ({choice.version})",
                "fp16_arithmetic": choice.arithmetic.describe(), "library_fp16": choice.fp16_format(fmt),
                **({"fp16_route": route} if route and dtype != "fp32" else {})}

    def _compiler_choice(self, fmt: str):
        """The target's compiler choice for a format, asked once per session
        (the library is globbed and the compilers probed only then); None
        where the target has one compiler, or where the choice cannot be made
        (the build then says why, and a later call tries again)."""
        if fmt not in self._compilers:
            try:
                self._compilers[fmt] = self.target.compiler_choice(self._config(fmt))
            except (BuildError, CaseFailure):
                return None
        return self._compilers[fmt]

    def _config(self, fp16_format: str) -> BuildConfig:
        return BuildConfig(LibrarySource.at(self.build_path), fp16_format, self.sanitize)

    def shown(self, text: str) -> str:
        """A message of the build with the snapshot's paths as the library's own."""
        return text.replace(str(self.build_path), str(self.library_path))

    def material_for(self, fp16_format: str) -> dict:
        """Everything that changes the artefact: the target's tools and flags,
        the sources, and the build options themselves (the build cache key)."""
        if fp16_format not in self._materials:
            config = self._config(fp16_format)
            self._materials[fp16_format] = dict(
                self.target.build_material(config), fp16_format=fp16_format, sanitize=self.sanitize,
                sources=digest_files(self.target.source_roots(config)),
                # how a library is built file by file (e.g. which files get which NUM_CORES)
                recipe=digest_files([Path(build_units.__file__)]))
        return self._materials[fp16_format]

    def scope_for(self, dtype: str, any_build: bool = False) -> Scope:
        """The results-database scope of this session's measurements of a
        dtype; any_build matches every build of the library on the target
        (replay: no tool is asked for its version)."""
        fmt = fp16_format_of(dtype)
        if (fmt, any_build) not in self._scopes:
            config = self._config(fmt)
            library = digest_files(config.library.digest_roots)
            artefact = None if any_build else BuildCache.name_of(self.material_for(fmt))
            self._scopes[fmt, any_build] = Scope(self.target.name, library, artefact)
        return self._scopes[fmt, any_build]

    @staticmethod
    def case_key(case: Case) -> str:
        """A case's key in the results database: what its golden bundle depends on."""
        return case_key(dict(case.description(), seed=GOLDEN_SEED, catalogue=entry_source_digest(case.entry)))

    def build_config(self, fp16_format: str) -> BuildConfig:
        """The configuration of a format's build, with the object cache of its tools."""
        if fp16_format not in self._build_configs:
            material = self.material_for(fp16_format)
            # an object's own key holds its argv and source: the recipe that chose them is not needed
            tools = BuildCache.key_of({key: value for key, value in material.items() if key not in ("sources", "recipe")})
            self._build_configs[fp16_format] = replace(
                self._config(fp16_format), objects=ObjectStore(self.objects_dir, tools, warn=self.warn))
        return self._build_configs[fp16_format]

    def _build(self, fp16_format: str) -> Artefact | CaseFailure:
        try:
            material = self.material_for(fp16_format)
            config = self.build_config(fp16_format)

            def build(out: Path) -> None:
                self.target.build(config, out).save(out)
                RunnerContract.describe(self.target, out, config)

            for attempt in (1, 2):
                path = self.builds.get(material, build)
                try:
                    return Artefact(path, UnitReport.load(path), RunnerContract.load(path))
                except (ValueError, KeyError, TypeError) as exc:
                    # Files that match their digests but do not parse (written so
                    # by a bug): rebuilt once, never trusted.
                    problem = f"its units.json or contract.json does not parse ({type(exc).__name__}: {exc})"
                    if attempt == 2:
                        return CaseFailure(failures.BUILD, f"the runner built at {path} is unusable: {problem}")
                    self.builds.discard(material, problem)
        except BuildError as exc:
            return CaseFailure(failures.BUILD, f"building {self.library_path} for {self.target.name} "
                                               f"({fp16_format}) failed: {headline(str(exc))}\n{exc}")
        except OSError as exc:
            return _environment_failure("the build cache", exc)
        except CaseFailure as exc:
            return exc

    def layout_for(self, case: Case, artefact: Artefact, bundle: ReferenceBundle) -> CaseLayout:
        """The case as its runner op takes it, or the classified reason it
        cannot run: its unit did not build, or catalogue and op disagree."""
        unit = unit_of(case.entry.unit, case.dtype)
        where = f"case: {case.id} (runner unit {unit}, target {self.target.name})"
        if unit in artefact.units.failed:
            reason = artefact.units.failed[unit]
            raise CaseFailure(failures.BUILD, f"runner unit {unit} did not build against {self.library_path}: "
                                              f"{headline(reason)}\n{reason}\n{where}")
        if unit not in artefact.units.built:
            raise CaseFailure(failures.BAD_CASE, f"catalogue entry {case.entry.name} names runner unit "
                                                 f"{case.entry.unit!r}, but there is no runtime/runner/ops_"
                                                 f"{case.entry.unit}.c\n{where}")
        op = case.entry.runner_op(case.dtype)
        if op not in artefact.contract.ops:
            raise CaseFailure(failures.BAD_CASE, f"runner unit {unit} has no op {op!r}; it has "
                                                 f"{sorted(artefact.contract.ops)}\n{where}")
        return artefact.contract.layout(op, case.params, bundle.inputs, bundle.outputs,
                                        case.entry.kernel_names(case.dtype), where)

    # ---- the path of a case ----------------------------------------------------

    def results_for(self, case: Case, variants: list[Variant]) -> dict[Variant, VariantResult]:
        done = self._results.setdefault(case, {})
        todo = [v for v in variants if v not in done]
        if todo:
            for variant, result in self._run_case(case, todo).items():
                if result.failure is not None:
                    result = replace(result, failure=result.failure.with_message(self.shown(result.failure.message)))
                done[variant] = result
        return {v: done[v] for v in variants}

    def _run_case(self, case: Case, variants: list[Variant]) -> dict[Variant, VariantResult]:
        try:
            self._check_fits(case, variants)
            bundle = self.bundle_for(case)
            artefact = self.artefact_for(case.dtype)
            layout = self.layout_for(case, artefact, bundle)
        except CaseFailure as failure:
            return {v: VariantResult(v, failure) for v in variants}
        absent = self._absent_kernels(case, artefact, variants)
        present = [v for v in variants if v not in absent]
        return {**absent, **(self._run_present(case, present, artefact, bundle, layout) if present else {})}

    def _run_present(self, case: Case, variants: list[Variant], artefact: Artefact, bundle: ReferenceBundle,
                     layout: CaseLayout) -> dict[Variant, VariantResult]:
        """One run of the variants the library can run, and their verdicts."""
        payload = self.payload_for(case, variants, bundle, layout)
        workdir = Path(tempfile.mkdtemp(dir=self.workdir))
        try:
            path, delivered = runnable(self.target, self.build_config(fp16_format_of(case.dtype)), artefact.path,
                                       payload, workdir)
            raw = self.target.run(path, delivered, self.timeout, workdir, case_id=case.id)
        except CaseFailure as failure:
            return {v: VariantResult(v, failure, delivery=failure.delivery or {}) for v in variants}
        finally:
            shutil.rmtree(workdir, ignore_errors=True)   # the run's output is in `raw`
        self.runs += 1
        try:
            decoded = decode_records(raw.output, payload_crc(payload))
        except TransportError as exc:
            failure = CaseFailure(failures.TRANSPORT, f"{exc}\n{_tail(raw)}")
            return {v: VariantResult(v, failure, delivery=raw.delivery or {}) for v in variants}
        stopped_in = _stopped_in(decoded, raw, len(variants))
        ran = variants if stopped_in is None else variants[:stopped_in + 1]
        results = {v: self._judge(v, i, decoded, raw, bundle, layout) for i, v in enumerate(ran)}
        for result in results.values():
            result.delivery = raw.delivery or {}
        self._record(case, results)
        if stopped_in is not None:
            # One variant hung or crashed the runner, and the ones after it never
            # ran: run them again without it, so that one broken kernel does not
            # hide the results of the others.
            results.update(self._run_case(case, variants[stopped_in + 1:]))
        return results

    def judge_one(self, variant: Variant, raw: RawRun, payload: bytes, bundle: ReferenceBundle,
                  layout: CaseLayout) -> VariantResult:
        """The verdict on a run of one variant's payload, for a flow that
        builds and runs its own program (bench/seed_flow.py)."""
        try:
            decoded = decode_records(raw.output, payload_crc(payload))
        except TransportError as exc:
            return VariantResult(variant, CaseFailure(failures.TRANSPORT, f"{exc}\n{_tail(raw)}"))
        return self._judge(variant, 0, decoded, raw, bundle, layout)

    def _absent_kernels(self, case: Case, artefact: Artefact, variants: list[Variant]) -> dict[Variant, VariantResult]:
        """The variants that select one of lib_c's own kernels which the library
        under test does not have (ptl_kernels.def, origin lib_c): not run."""
        table = artefact.contract.ops[case.entry.runner_op(case.dtype)].kernels
        missing = self._missing_kernels(case, artefact)
        return {v: VariantResult(v, CaseFailure(
                    failures.ABSENT, f"{self.library_path} has no {missing[v.kernel]}: kernel #{v.kernel} of the "
                                     f"{table} table is one of lib_c's own, after the published API's "
                                     f"(harness/runtime/include/ptl_kernels.def); not run"))
                for v in variants if v.kernel in missing}

    def _record(self, case: Case, results: dict[Variant, VariantResult]) -> None:
        """Keep what a run measured in the results database, if there is one."""
        if self.results_db is None:
            return
        rows = [(v.kernel_name, measurement_of(r)) for v, r in results.items()]
        try:
            self.results_db.store(self.scope_for(case.dtype), self.case_key(case), case.id, rows)
        except (ResultsDBError, OSError) as exc:
            self.results_db_error = self.results_db_error or str(exc)

    @staticmethod
    def payload_for(case: Case, variants: list[Variant], bundle: ReferenceBundle, layout: CaseLayout) -> bytes:
        """The payload of one runner invocation: the case laid out for its op, and the variants."""
        def bits(name):
            return format_named(case.entry.format_of(name, case.dtype)).to_bits(bundle.inputs[name])
        return encode_payload(case.entry.runner_op(case.dtype), layout.params,
                              [bits(name) for name in layout.input_names],
                              [VariantSpec(v.kernel, v.cores) for v in variants])

    def _check_fits(self, case: Case, variants: list[Variant]) -> None:
        caps = self.target.capabilities
        if case.dtype != "fp32" and fp16_format_of(case.dtype) not in caps.fp16_formats:
            raise CaseFailure(failures.NOT_FIT, f"target {self.target.name} cannot build {case.dtype}")
        mismatch = self.format_mismatch(case.dtype)
        if mismatch:
            raise CaseFailure(failures.NOT_FIT, mismatch)
        l1 = sum(case.footprint.values())
        if self.l1_bytes is not None and l1 > self.l1_bytes:
            parts = ", ".join(f"{k} {v}" for k, v in case.footprint.items())
            raise CaseFailure(failures.NOT_FIT, f"needs {l1} bytes of L1 ({parts}); target {self.target.name} "
                                                f"is configured with {self.l1_bytes} (--l1-bytes)")
        too_many = [v.cores for v in variants if v.cores > caps.max_cores]
        if too_many:
            raise CaseFailure(failures.NOT_FIT, f"target {self.target.name} has {caps.max_cores} cores, "
                                                f"the case asks for {max(too_many)}")

    def _judge(self, variant: Variant, index: int, run: DecodedRun, raw: RawRun,
               bundle: ReferenceBundle, layout: CaseLayout) -> VariantResult:
        where = variant.describe(self.target.name)
        if index >= len(run.variants) or run.variants[index].status is None:
            return VariantResult(variant, self._missing_result(index, run, raw, where))
        out = run.variants[index]
        if out.status == STATUS_GUARD:
            return VariantResult(variant, CaseFailure(failures.CRASH, "; ".join(out.errors) + "\n" + where))
        if out.status == STATUS_UNSUPPORTED:
            return VariantResult(variant, CaseFailure(failures.UNSUPPORTED, "; ".join(out.errors) + "\n" + where))
        if out.status == STATUS_NO_MEMORY:   # the runner's buffers, not the library's: the case is too large here
            return VariantResult(variant, CaseFailure(failures.NOT_FIT, "; ".join(out.errors) + "\n" + where))
        if out.status != 0:
            return VariantResult(variant, CaseFailure(failures.BAD_CASE, "; ".join(out.errors) + "\n" + where))

        case = variant.case

        def out_fmt(name):
            return format_named(case.entry.format_of(name, case.dtype))
        scale = case.entry.tolerance_scale.get(case.dtype, 1.0)
        result = VariantResult(variant, counters=self._counters(out, raw, run))
        reports, ulps, means, ratios = [], [], [], []
        missing = [name for name in bundle.outputs if layout.output_names.index(name) not in out.tensors]
        if missing:
            result.failure = CaseFailure(failures.TRANSPORT, f"output tensor {missing[0]} never arrived\n{where}")
            return result
        bits = {name: out.tensors[layout.output_names.index(name)] for name in bundle.outputs}
        references = bundle.outputs
        if case.entry.rejects:
            device = {name: out_fmt(name).from_bits(b) for name, b in bits.items()}
            reports = case.entry.rejects(case, bundle.inputs, references, device, out.console)
            if reports:
                result.failure = CaseFailure(failures.NUMERIC, "\n".join(reports) + "\n" + where)
            return result
        if variant.case.entry.chained:
            device = {name: out_fmt(name).from_bits(b).reshape(bundle.outputs[name].value.shape)
                      for name, b in bits.items() if b.size == bundle.outputs[name].value.size}
            if len(device) < len(bits):
                result.failure = CaseFailure(failures.TRANSPORT, f"an output of the chained run has the wrong "
                                                                 f"size\n{where}")
                return result
            check = variant.case.entry.chained(variant.case, bundle.inputs, device)
            references, result.attachments = check.references, check.attachments
        alone = core_split.alone_core(case, variant.cores)
        if alone is not None:
            alone_reports, bits = core_split.judge(case, variant.kernel, variant.cores, alone, bits, references,
                                                   {name: out_fmt(name) for name in references}, bundle.inputs)
            reports.extend(alone_reports)
        for name, reference in references.items():
            try:
                comparison = compare_tensor(name, bits[name], reference, out_fmt(name), scale)
            except CaseFailure as failure:
                result.failure = failure
                return result
            ulps.append(comparison.max_ulp if comparison.max_ulp >= 0 else float("inf"))
            means.append(comparison.mean_ulp)
            ratios.append(comparison.worst_ratio)
            if not comparison.ok:
                reports.append(comparison.report)
        result.max_ulp = max(ulps) if ulps else 0
        result.mean_ulp = float(np.mean(means)) if means else 0.0
        result.worst_ratio = max(ratios) if ratios else 0.0
        if case.entry.prints(case) and not out.console:
            reports.append("the API says this call prints why it refuses; it printed nothing")
        if reports:
            result.failure = CaseFailure(failures.NUMERIC, "\n".join(reports) + "\n" + where)
        return result

    def _missing_result(self, index: int, run: DecodedRun, raw: RawRun, where: str) -> CaseFailure:
        first_missing = next((v.index for v in run.variants if v.status is None), index)
        if raw.deadlock:
            return CaseFailure(failures.TIMEOUT, f"deadlock after {raw.seconds:.2f} s: cores wait for others "
                                                 f"that will never come (the run was stopped at once; the "
                                                 f"runtime's own report, if any, is in the output)\n{where}\n"
                                                 f"{_tail(raw)}")
        if raw.timed_out:
            why = raw.stop_reason or f"no result within {self.timeout:g} s (the run was killed)"
            return CaseFailure(failures.TIMEOUT, f"{why}\n{where}\n{_tail(raw)}")
        if run.case_errors:
            return CaseFailure(failures.BAD_CASE, "; ".join(run.case_errors) + "\n" + where)
        race = tsan_race(raw.stderr)
        if race:
            lead = ("a data race in this variant" if index == first_missing
                    else f"not run: the runner stopped at a data race in variant {first_missing}")
            return CaseFailure(failures.RACE, f"{lead}: {race}\n{where}")
        if run.crash or (raw.returncode not in (0, None)):
            cause = (self.target.describe_crash(run.crash) if run.crash
                     else sanitizer_report(raw.stderr) or f"exit status {raw.returncode}")
            lead = ("the runner crashed in this variant" if index == first_missing
                    else f"not run: the runner crashed in variant {first_missing}")
            return CaseFailure(failures.CRASH, f"{lead}: {cause}\n{where}\n{_tail(raw)}")
        return CaseFailure(failures.TRANSPORT, f"the output ended before this variant's result\n{where}\n"
                                               f"{_tail(raw)}")

    def _counters(self, out, raw: RawRun, run: DecodedRun) -> Counters:
        unit = self.target.capabilities.counter_unit
        if raw.region_counts is not None and out.region is not None and out.region < len(raw.region_counts):
            per_core = raw.region_counts[out.region]
            return Counters(unit, max(per_core), sum(per_core), list(per_core))
        if out.region is not None and out.region in run.region_counts:
            # Counted by the program itself (COUNTS record): cycles, plus instructions.
            per_core, instructions = run.region_counts[out.region]
            return Counters(unit, max(per_core), sum(per_core), list(per_core), sum(instructions),
                            run.region_l2_bytes.get(out.region, 0))
        return Counters(unit, out.elapsed or None)


def measurement_of(result: VariantResult) -> Measurement:
    """A judged variant as the results database keeps it."""
    r, c = result, result.counters
    return Measurement(r.variant.kernel, r.variant.cores, r.failure.kind if r.failure else "passed",
                       c.unit if c else None, c.latency if c else None, c.work if c else None,
                       r.max_ulp if r.max_ulp != float("inf") else None,
                       r.failure.message.splitlines()[0] if r.failure else "")


_TSAN_ACCESS = re.compile(r"^\s*((?:Previous |Atomic )*(?:[Rr]ead|[Ww]rite) of size \d+) at 0x[0-9a-f]+ by "
                          r"(main thread|thread T\d+)")
_TSAN_FRAME = re.compile(r"^\s*#\d+ (\S+) (\S+?)(?: \(|$)")


def _sanitizer_internal(where: str) -> bool:
    """A frame of the sanitizer's own interceptors (memcpy and the like)."""
    return where == "<null>" or "sanitizer" in where or "/libtsan" in where or where.endswith(".inc") or \
        ".inc:" in where


def tsan_race(stderr: bytes) -> str | None:
    """ThreadSanitizer's first data race report as one line naming the two
    accesses (what, by which thread, in which function at which line), or
    None when there is none."""
    text = stderr.decode("utf-8", "replace")
    start = text.find("WARNING: ThreadSanitizer: data race")
    if start < 0:
        return None
    accesses, pending = [], None
    for line in text[start:].splitlines()[1:]:
        if line.startswith("SUMMARY:") or line.startswith("=================="):
            break
        access = _TSAN_ACCESS.match(line)
        if access:
            pending = f"{access.group(1).lower()} by {access.group(2)}"
            continue
        frame = _TSAN_FRAME.match(line)
        if frame and pending and not _sanitizer_internal(frame.group(2)):   # the first frame in our code
            accesses.append(f"{pending} in {frame.group(1)} at {frame.group(2).rsplit('/', 1)[-1]}")
            pending = None
    if len(accesses) < 2:
        summary = next((l for l in text[start:].splitlines() if l.startswith("SUMMARY:")), "")
        return f"ThreadSanitizer: data race ({summary or 'its report is in the output'})"
    return f"ThreadSanitizer: data race between {accesses[0]} and {accesses[1]}"


_SANITIZER_LINE = re.compile(r"(ERROR: AddressSanitizer: .*|runtime error: .*|ERROR: LeakSanitizer: .*)")
_ASAN_NOISE = re.compile(r" on (unknown )?address 0x[0-9a-f]+( at pc 0x[0-9a-f]+ bp 0x[0-9a-f]+ sp 0x[0-9a-f]+)?")
_ASAN_ACCESS = re.compile(r"^(READ|WRITE) of size \d+")
_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in (\S+) (\S+)")
CALLERS_SHOWN = 2   # frames of the first stack shown after the one that made the access
TEAM_RUNTIME = "team_pthreads.c"   # the host team (harness/targets/host/runtime): where a forked body's stack begins


def _first_stack(report: list[str]) -> list[tuple[str, str]]:
    """(function, file:line) of the first stack in an AddressSanitizer
    report, the sanitizer's own frames (interceptors) left out; a body that
    the team forked ends at the team, as ("", "forked on the team")."""
    frames: list[tuple[str, str]] = []
    in_stack = False
    for line in report:
        frame = _FRAME.match(line)
        if not frame and in_stack:   # the line after its last frame
            break
        in_stack = bool(frame)
        if frame and Path(frame.group(2)).name.startswith(TEAM_RUNTIME + ":"):
            frames.append(("", "forked on the team"))
            break
        if frame and not _sanitizer_internal(frame.group(2)):
            frames.append((frame.group(1), Path(frame.group(2)).name))
    return frames


def sanitizer_report(stderr: bytes) -> str | None:
    """The first AddressSanitizer, UndefinedBehaviorSanitizer or
    LeakSanitizer report, in one line: what went wrong and where (UBSan's
    file:line; for AddressSanitizer the access, the frame that made it and
    its callers, since its ERROR line gives only addresses), or None. The
    output's tail alone shows only the end of the report."""
    lines = stderr.decode("utf-8", "replace").splitlines()
    for i, line in enumerate(lines):
        found = _SANITIZER_LINE.search(line)
        if not found:
            continue
        what = found.group(1)
        where = line[:found.start()].strip().rstrip(":")   # UBSan: file:line:column before the message
        if what.startswith("ERROR: AddressSanitizer"):
            what = _ASAN_NOISE.sub("", what)
            report = lines[i + 1:i + 60]
            access = next((m.group(0) for m in map(_ASAN_ACCESS.match, report) if m), None)
            if "use-after-poison" in what:   # the runner poisons only its guard words (runner/buffers.c)
                what = (f"a {access.split()[0].lower() if access else 'access'} of a guard word past an output "
                        f"or work buffer ({what.removeprefix('ERROR: ')}{f', {access}' if access else ''})")
            else:
                what += f" ({access})" if access else ""
            stack = _first_stack(report)
            where = ""
            if stack and stack[0][0]:   # not an access by the team runtime itself
                what += f" in {stack[0][0]}"
                where = stack[0][1] + "".join(f", called from {f} at {at}" if f else f", {at}"
                                              for f, at in stack[1:1 + CALLERS_SHOWN])
        return f"{what[:240]}{f' at {where}' if where and not where.startswith('==') else ''}"
    return None


def _environment_failure(what: str, exc: OSError) -> CaseFailure:
    """A write the machine refused (a full disk, no permission): said once,
    classified, with the path; the caches keep no partial entry."""
    return CaseFailure(failures.ENVIRONMENT, f"cannot write {what}: {exc.strerror or exc}"
                                             f"{f' ({exc.filename})' if exc.filename else ''}")


def _stopped_in(run: DecodedRun, raw: RawRun, n_variants: int) -> int | None:
    """The index of the variant in which the runner stopped for good (a crash,
    a deadlock, a hang the target cut short), when variants after it are left;
    None otherwise. A run killed by the wall-clock timeout is not resumed: its
    cause is not known to be that variant, and each try would cost the whole
    timeout again."""
    missing = next((i for i in range(n_variants) if i >= len(run.variants) or run.variants[i].status is None),
                   None)
    if missing is None or missing + 1 >= n_variants:
        return None
    stopped = run.crash is not None or raw.deadlock or bool(raw.stop_reason) or \
        (not raw.timed_out and raw.returncode not in (0, None))
    return missing if stopped else None


def _tail(raw: RawRun, lines: int = 12) -> str:
    text = (raw.output.decode("utf-8", "replace").splitlines()[-lines:]
            + raw.stderr.decode("utf-8", "replace").splitlines()[-lines:])
    shown = [line[:200] for line in text if not line.startswith("@PTL1")] or ["(no output)"]
    return "output tail:\n  " + "\n  ".join(shown)
