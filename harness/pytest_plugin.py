"""The pytest plugin (entry point `pytest11: ptl`).

It owns the suite's core options (the subsystems register theirs: sharding,
perf_gate, expectations, autotune.pytest_tune, board.pytest_board,
failure_summary), the per-worker Session, the grouping of variants into
cases (so one runner invocation serves every variant of a case, on the same
xdist worker), the classification of failures, and the reports. The one
suite module that runs the catalogue stays declarative (suite/test_ops.py):

    def pytest_generate_tests(metafunc):
        metafunc.parametrize("variant", variant_params(metafunc.config, metafunc.definition))

    def test_op(variant, ptl):
        ptl.check(variant)
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest

from harness import (cache_layout, catalogue, concurrency_slice, expectations, failure_summary, failures,
                     library_snapshot, option_values, perf_gate, sharding, team_order)
from harness.autotune import pytest_tune
from harness.board import pytest_board
from harness.buildcache import digest_files
from harness.cases import FEATURES, Variant
from harness.child_process import die_with_parent_now
from harness.expectations import FIXED, KNOWN_BUG, PASSED_BESIDE, UNSUPPORTED, Expectations, ExpectationsError
from harness.failures import CaseFailure
from harness.files import write_atomically
from harness.keyword_prefilter import keep_by_keyword
from harness.reports import ReportRow, completeness, write_csv, write_junit, write_summary
from harness.results_db import ResultsDB, ResultsDBError
from harness.session import Session
from harness.target import DEFAULT_LIBRARY, DEFAULT_RUN_TIMEOUT, LibrarySource
from harness.targets import candidates, choose_target, environment_options, make_target, target_names
from harness.targets.host import SANITIZERS

SUITE_MODULE = Path(__file__).resolve().parent.parent / "suite" / "test_ops.py"
TUNER_MODULE = SUITE_MODULE.parent / "test_autotune.py"
STAT_KEYS = ("builds_compiled", "builds_reused", "golden_generated", "golden_reused", "runner_invocations")


def pytest_addoption(parser):
    group = parser.getgroup("ptl", "PULP training-library regression")
    group.addoption("--target", default=os.environ.get("PTL_TARGET", "auto"),
                    help=f"where cases run: {', '.join(target_names())}, or auto (the embedded default "
                         f"when its toolchain is installed, else host)")
    group.addoption("--trainlib", default=os.environ.get("PTL_TRAINLIB", str(DEFAULT_LIBRARY)),
                    help="path of the library under test (include/ + sources/); default lib_c/")
    group.addoption("--sanitize", default=None, choices=tuple(SANITIZERS),
                    help="host only: build with these sanitizers")
    group.addoption("--family", default=None, metavar="NAME[,NAME...]",
                    help="collect only these catalogue families (harness/catalogue/<name>.py); default all")
    group.addoption("--reports-dir", default="reports", help="where JUnit, CSV and summary go")
    group.addoption("--ptl-cache", default=os.environ.get("PTL_CACHE_DIR"),
                    help="cache of builds and golden bundles (default: PTL_CACHE_DIR, else .cache/ptl in the checkout)")
    group.addoption("--l1-bytes", default=None,
                    help="L1 (TCDM) size a case must fit in; default: the target's (64 KiB)")
    group.addoption("--run-timeout", default=None,
                    help="seconds one runner invocation may take before it is killed "
                         "(default: PTL_RUN_TIMEOUT, else the target's: 120, gvsoc 900)")
    group.addoption("--concurrency-slice", type=int, default=None, metavar="N",
                    help="keep, for every entry with multi-core variants and each of its builds, its smallest case "
                         "and the N smallest that give two cores work, at their smallest and largest core count "
                         "above 1 (CI's sanitizer and team-order passes; harness/concurrency_slice.py)")
    # Each subsystem registers its own options, beside the code that reads them.
    sharding.add_options(group)
    perf_gate.add_options(group)
    expectations.add_options(group)
    pytest_tune.add_options(parser)
    pytest_board.add_options(parser)
    failure_summary.add_options(parser)


def variant_params(config, definition=None) -> list:
    """One test per variant of the families --family names (default: every
    family of harness/catalogue). Each carries the marker family_<name>, so
    that `-k pool` or `-m family_pool` selects a family, and a case that uses
    a lib_c feature beyond the published API carries feature_<name>
    (`-m "not feature_x"`). Given the test's definition (metafunc.definition),
    a variant that `-k` deselects is not made at all (harness/keyword_prefilter.py)."""
    chosen = selected_families(config.getoption("family"))
    marked = [(v, [getattr(pytest.mark, f"family_{family}"),
                   *(getattr(pytest.mark, f"feature_{f}") for f in v.case.features)])
              for family in chosen for entry in catalogue.entries(family) for v in entry.variants()]
    keep = keep_by_keyword(config, definition)
    kept = [(v, marks) for v, marks in marked if keep is None or keep(v.id, marks)]
    # None kept: all made, for pytest's -k to deselect. An empty list would make
    # pytest's one placeholder item (test_op[NOTSET]), which `-k "not ..."` keeps.
    return [pytest.param(v, id=v.id, marks=marks) for v, marks in (kept or marked)]


def selected_families(option: str | None) -> list[str]:
    """The families a --family value names (comma-separated), all by default;
    a name the catalogue has not is a usage error naming those it has."""
    known = catalogue.family_names()
    if not option:
        return known
    names = [name.strip() for name in option.split(",")]
    unknown = [name for name in names if name not in known]
    if unknown or not all(names):
        raise pytest.UsageError(f"{option_values.label('--family', option)}: "
                                f"the catalogue's families are {', '.join(known)}")
    return names


class PtlPlugin:
    def __init__(self, config):
        self.config = config
        # Its options from the environment (a board run's: set by pytest_board.configure), checked by validate_options.
        self.target = choose_target(config.getoption("target"))
        self.unavailable = self.target.unavailable_reason()
        self.selected: dict = defaultdict(list)      # case -> selected variants, in order
        self.rows: list[ReportRow] = []
        self.stats = dict.fromkeys(STAT_KEYS, 0)
        self.worker_builds: dict[str, str] = {}     # format -> build summary line, from xdist workers
        self.report_error: str | None = None
        self.db_errors: set[str] = set()             # results database trouble, said once at the end
        self.cache_warnings: list[str] = []          # damaged cache entries repaired, by any process
        self._session: Session | None = None
        self.started = time.monotonic()
        self.shard_record: dict | None = None       # the whole selection's identity, when sharded
        self.shard_ids: list[str] | None = None     # the test ids of this shard's share
        self.selected_count = 0                      # tests selected to run, in this process or any worker
        self.finished: set[str] = set()              # node ids of the tests that ran to a verdict
        self.stats_sources = 0                       # processes whose cache counters arrived
        self.interrupted = False
        try:
            self.shard = sharding.parse_shard(config.getoption("shard")) if config.getoption("shard") else None
        except sharding.ShardError as exc:
            raise pytest.UsageError(str(exc)) from None
        trainlib = Path(config.getoption("trainlib"))
        if not trainlib.exists():   # a typo: one line now, not a build failure for every variant
            raise pytest.UsageError(f"--trainlib {trainlib}: no such file or directory")
        self.snapshot = self._take_snapshot()
        self.foreign_toolchain: str | None = None     # how the baseline's toolchain differs from this one
        self.baseline = self._load_baseline() if config.getoption("perf_gate") else None
        expect = config.getoption("expect")
        try:
            self.expectations = (Expectations.load(Path(expect)).for_run(config.getoption("sanitize"),
                                                                         self.target.name)
                                 if expect else Expectations())
        except ExpectationsError as exc:
            raise pytest.UsageError(str(exc)) from None

    @property
    def session(self) -> Session:
        if self._session is None:
            cache = self.cache_dir
            # What the regression measures, the autotuner reuses (harness/results_db.py).
            try:
                db = ResultsDB(Path(cache) / cache_layout.RESULTS_DB, warn=self._cache_warning)
            except ResultsDBError as exc:
                db = None
                self.db_errors.add(str(exc))
            self._session = Session(self.target, Path(self.config.getoption("trainlib")), Path(cache),
                                    self.config.getoption("sanitize"), self.config.getoption("run_timeout"),
                                    self.config.getoption("l1_bytes"), results_db=db, snapshot=self.snapshot)
        return self._session

    @property
    def cache_dir(self) -> Path:
        return Path(self.config.getoption("ptl_cache") or cache_layout.default_root())

    def _take_snapshot(self) -> Path | None:
        """The copy of the library every build of this run is made from
        (harness/library_snapshot.py): taken by the controller before any
        worker starts, and handed to the workers."""
        if hasattr(self.config, "workerinput"):
            taken = self.config.workerinput.get(_SNAPSHOT_KEY)
            return Path(taken) if taken else None
        return library_snapshot.snapshot_root(Path(self.config.getoption("trainlib")), self.cache_dir,
                                              self._cache_warning)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        node.workerinput[_SNAPSHOT_KEY] = str(self.snapshot) if self.snapshot else ""

    def _cache_warning(self, message: str) -> None:
        if message not in self.cache_warnings:
            self.cache_warnings.append(message)

    def all_cache_warnings(self) -> list[str]:
        for message in self._session.cache_warnings if self._session else []:
            self._cache_warning(message)
        return self.cache_warnings

    # ---- collection --------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        if self.config.getoption("concurrency_slice") is not None:
            self._keep_concurrency_slice(items, self.config.getoption("concurrency_slice"))
        if self.config.getoption("shard"):
            self._keep_shard(items)
        for item in items:
            variant = _variant_of(item)
            if variant is None:
                continue
            self.selected[variant.case].append(variant)
            known = variant.known_failure()
            if known:
                item.add_marker(pytest.mark.xfail(reason=known.reason, strict=True))

    def pytest_collection_finish(self, session):
        self.selected_count = max(self.selected_count, len(session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        self.selected_count = max(self.selected_count, len(ids))   # every worker collects the same selection

    def _load_baseline(self) -> dict:
        path = self.baseline_path = Path(self.config.getoption("perf_baseline")
                                         or perf_gate.baseline_path(self.target.name))
        if refusal := team_order.timing_refusal(self.target.team_order):
            raise pytest.UsageError(f"--perf-gate: {refusal}")
        if not path.exists():
            raise pytest.UsageError(f"--perf-gate: no baseline at {path}; write one from a run with "
                                    f"`python -m harness baseline update --target {self.target.name}`")
        try:
            baseline = perf_gate.read_baseline(path)
            differs = perf_gate.toolchain_differences(perf_gate.read_toolchain(path),
                                                      self.target.toolchain_fingerprint())
        except perf_gate.BaselineError as exc:
            raise pytest.UsageError(f"--perf-gate: {exc}") from None
        self.foreign_toolchain = differs
        if differs and self.config.getoption("perf_gate_foreign_toolchain") == "refuse":
            raise pytest.UsageError(
                f"--perf-gate: {path} was recorded with another toolchain ({differs}), and counts of different "
                f"code do not compare; run where it was made, rewrite it here (`python -m harness baseline update "
                f"--run --target {self.target.name}`), or add --perf-gate-foreign-toolchain=report to report the "
                f"changes without failing")
        return baseline

    def _perf(self, variant: Variant, result) -> tuple[str, str]:
        """The gate's verdict on a passed variant, or ("", "") without a gate."""
        counters = result.counters
        if self.baseline is None or result.failure is not None or counters is None or counters.latency is None:
            return "", ""
        measured = perf_gate.Counts(counters.unit, int(counters.latency), int(counters.work))
        return perf_gate.judge(measured, self.baseline.get(variant.id), self.config.getoption("perf_threshold"))

    def library_digest(self) -> str | None:
        """The library under test, as the results database names it: as it
        was when the run started (its snapshot), whatever was edited since."""
        try:
            return digest_files(LibrarySource.at(self.snapshot or Path(self.config.getoption("trainlib"))).digest_roots)
        except CaseFailure:
            return None

    def _keep_concurrency_slice(self, items, per_group: int) -> None:
        """What CI's sanitizer and team-order passes run (harness/concurrency_slice.py)."""
        if per_group < 1:
            raise pytest.UsageError(f"--concurrency-slice {per_group}: give the cases per entry and build, at least 1")
        kept = concurrency_slice.keep(filter(None, map(_variant_of, items)), per_group)
        dropped = [item for item in items if _variant_of(item) not in kept]
        if dropped:
            self.config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if _variant_of(item) in kept]

    def _keep_shard(self, items) -> None:
        """Deselects what other shards run; records the whole selection's
        identity, the costs of the split and this shard's ids for the merge."""
        index, count = self.shard
        ids = {item: (_variant_of(item).id if _variant_of(item) else item.nodeid) for item in items}
        variants: dict[str, int] = defaultdict(int)
        for test_id in ids.values():
            variants[sharding.case_of(test_id)] += 1
        option = self.config.getoption("shard_costs")
        source = Path(option) if option else sharding.default_costs_file(self.target.name)
        try:
            costs = sharding.case_costs(variants, sharding.load_costs(source))
        except sharding.ShardError as exc:
            raise pytest.UsageError(str(exc)) from None
        shard_of = sharding.assign(costs, count)
        kept = [item for item in items if shard_of[sharding.case_of(ids[item])] == index]
        self.shard_record = {"index": index, "count": count, "ids_total": len(ids),
                             "ids_digest": sharding.ids_digest(ids.values()),
                             "costs": str(source) if source else "variant counts",
                             "costs_digest": sharding.costs_digest(costs),
                             "estimated_seconds": round(sum(c for case, c in costs.items()
                                                            if shard_of[case] == index), 2)}
        self.shard_ids = sorted(ids[item] for item in kept)
        dropped = [item for item in items if shard_of[sharding.case_of(ids[item])] != index]
        if dropped:
            self.config.hook.pytest_deselected(items=dropped)
        items[:] = kept

    def pytest_report_header(self, config):
        reason = self.unavailable
        lines = [f"ptl target: {self.target.name} (unit: {self.target.capabilities.counter_unit}), "
                 f"library: {config.getoption('trainlib')}"]
        if reason:
            lines.append(f"ptl target {self.target.name} is NOT available: {reason}")
        lines += self.team_order_lines()
        if self.target.fallback_reason:
            lines.append(self.fallback_line())
        return lines

    def team_order_lines(self) -> list[str]:
        """What a run in a sequenced team order says of it: the cores ran one
        at a time, not as the target runs them."""
        if self.target.team_order == "free":
            return []
        return [f"ptl team order: {self.target.team_order} (PTL_TEAM_ORDER): one core at a time between barriers, "
                f"not the target's own scheduling"]

    def fallback_line(self) -> str:
        return (f"ptl target: fell back to {self.target.name} (--target auto): {self.target.fallback_reason.rstrip('.')}; "
                f"results are NOT from the embedded target")

    def announce_builds(self) -> None:
        """On a whole run, the controller builds the runner for every format
        the target supports before any case runs, and says which op units and
        library files built and which did not (the workers reuse those
        builds). With a -k/-m selection only what the cases need is built,
        and the summary at the end says what was. suite/conftest.py calls it
        at session start."""
        option = self.config.option
        if (hasattr(self.config, "workerinput") or self.unavailable or option.collectonly
                or option.keyword or option.markexpr or option.tune):
            return
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        for fmt in self.target.capabilities.fp16_formats:
            try:
                self.session.artefact_for(fmt)
            except CaseFailure:  # remembered: summarised below, and each case of it fails with it
                pass
        if reporter is not None:
            for line in self.session.build_summary():
                reporter.write_line(f"ptl build {line}")

    # ---- running -----------------------------------------------------------

    def check(self, request, variant: Variant) -> None:
        reason = self.unavailable
        if reason:
            _record(request, variant, self.target.name, failure_class=failures.LOAD)
            pytest.fail(f"[load] target {self.target.name} is not available: {reason}", pytrace=False)
        group = self.selected.get(variant.case) or [variant]
        result = self.session.results_for(variant.case, group)[variant]
        self._attach(request, variant, result.attachments)
        counters = result.counters
        perf, perf_text = self._perf(variant, result)
        if perf == "regressed" and not self.foreign_toolchain:   # another toolchain's counts: reported only
            result = dataclasses.replace(result, failure=CaseFailure(
                failures.PERF, f"{perf_text}\n{variant.describe(self.target.name)}"))
        if perf:
            request.node.user_properties.append(("perf", perf))
        _record(request, variant, self.target.name,
                unit=counters.unit if counters else self.target.capabilities.counter_unit,
                latency=counters.latency if counters else None,
                work=counters.work if counters else None,
                l2_bytes=counters.l2_bytes if counters else None,
                max_ulp=result.max_ulp, mean_ulp=None if result.mean_ulp is None else f"{result.mean_ulp:.3f}",
                worst_error_ratio=None if result.worst_ratio is None else f"{result.worst_ratio:.3g}",
                failure_class=result.failure.kind if result.failure else "",
                **self.session.compiler_of(variant.case.dtype), **result.delivery)
        expected = self.expectations.match(variant.id, variant.case.features) if self.expectations else None
        if result.failure is None:
            if expected:
                _note_expectation(request, self.expectations, expected, FIXED)
            return
        if result.failure.kind in (failures.NOT_FIT, failures.ABSENT):
            pytest.skip(f"[{result.failure.kind}] {result.failure.message}")
        if expected and (expected := self.expectations.match(variant.id, variant.case.features, result.failure)):
            _note_expectation(request, self.expectations, expected, expected.label)
            # The failure first: the reports cut a long message (results.csv at
            # CSV_MESSAGE_CHARS), and a long reason must not cut the failure off.
            pytest.xfail(f"{result.failure}\n[{expected.label}] {expected.reason} ({expected.where})")
        pytest.fail(str(result.failure), pytrace=False)

    def _attach(self, request, variant: Variant, attachments: dict[str, str]) -> None:
        """A chained run's report files, under <reports>/attachments/<variant id>/."""
        if not attachments:
            return
        folder = Path(self.config.getoption("reports_dir")) / "attachments" / variant.id
        for name, text in attachments.items():
            write_atomically(folder / name, text.encode())
        request.node.user_properties.append(("attachments", str(folder)))

    # ---- reporting ---------------------------------------------------------

    def pytest_runtest_logreport(self, report):
        if hasattr(self.config, "workerinput"):
            return  # the controller receives every report and writes the files
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.finished.add(report.nodeid)
        props = dict(report.user_properties)
        if "family" not in props:
            return
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            outcome = report.outcome
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.outcome == "skipped" else "xpassed"
            elif report.when == "setup" and report.outcome == "failed":
                outcome = "error"
            # A skip's longrepr is (file, line, "Skipped: reason"): keep the reason.
            longrepr = report.longrepr
            if isinstance(longrepr, tuple) and len(longrepr) == 3:
                longrepr = str(longrepr[2]).removeprefix("Skipped: ")
            message = str(longrepr) if longrepr else ""
            if hasattr(report, "wasxfail"):
                # An expected failure's longrepr is pytest's traceback of the
                # xfail call; the expectation and the failure itself are here.
                message = report.wasxfail
            self.rows.append(ReportRow(props.get("test_id", report.nodeid), outcome, report.duration,
                                       props, message))

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo):
        # Ctrl-C, or SIGTERM raised as one (_stop_on_sigterm). Not pytest's
        # INTERRUPTED exit status alone: a collection error ends with it too.
        self.interrupted = True
        _drop_lineless_frames(excinfo.tb)

    def pytest_sessionfinish(self, session, exitstatus):
        if self._session is not None:
            self._merge_stats(self._local_stats())
        if hasattr(self.config, "workerinput"):
            self.config.workeroutput["ptl_stats"] = self.stats
            self.config.workeroutput["ptl_builds"] = self._session.build_summary() if self._session else []
            self.config.workeroutput["ptl_db_errors"] = sorted(self._db_errors())
            self.config.workeroutput["ptl_cache_warnings"] = self.all_cache_warnings()
            self.config.workeroutput["ptl_shard"] = self.shard_record
            self.config.workeroutput["ptl_shard_ids"] = self.shard_ids
            return
        if not self.rows and not self.shard_record and not self.interrupted:   # a shard with an empty share still reports
            return
        out = Path(self.config.getoption("reports_dir"))
        self.rows.sort(key=lambda r: r.test_id)
        self._settle_fixed()
        outcomes = defaultdict(int)
        for row in self.rows:
            outcomes[row.outcome] += 1
        whole = self.completeness()
        try:  # each file is replaced whole or not at all (reports.py)
            write_junit(self.rows, out / "junit.xml", properties=whole)
            write_csv(self.rows, out / "results.csv")
            write_summary({"target": self.target.name, "outcomes": dict(outcomes), **whole,
                           "cache": self.stats if self.stats_sources or not self.interrupted else None,
                           "expectations": self._expectation_summary(),
                           "builds": self.build_lines(), "shard": self.shard_record,
                           "perf": self._perf_summary(),
                           "cache_repairs": self.all_cache_warnings(),
                           "target_fallback": self.target.fallback_reason,
                           "team_order": self.target.team_order,
                           "library": self.library_digest(),
                           "toolchain": self.target.toolchain_fingerprint(),
                           "partial": self.selection_limits(),
                           "quarantined": pytest_board.quarantined(self.target),
                           "boards": pytest_board.summary(self.target),
                           "seconds": round(time.monotonic() - self.started, 2)}, out / "summary.json")
            if self.shard_record:   # what the merge checks the shard's rows against
                write_summary({**self.shard_record, "ids": self.shard_ids}, out / sharding.SHARD_FILE)
        except OSError as exc:
            self.report_error = f"ptl: cannot write the reports in {out}: {exc.strerror or exc}"
            session.exitstatus = session.exitstatus or pytest.ExitCode.TESTS_FAILED

    def selection_limits(self) -> list[str]:
        """What narrowed the selection below the whole suite (empty: the
        whole suite); `baseline update` refuses such a run unless --partial."""
        option = self.config.option
        limits = [f"-k {option.keyword}" if option.keyword else "", f"-m {option.markexpr}" if option.markexpr else "",
                  "--deselect" if getattr(option, "deselect", None) else "",
                  "--lf" if getattr(option, "lf", False) else "",
                  f"--concurrency-slice {option.concurrency_slice}" if option.concurrency_slice is not None else "",
                  f"--family {option.family}" if option.family else ""]
        here = self.config.invocation_params.dir
        whole = (SUITE_MODULE.parent, SUITE_MODULE)    # the suite, or its one module of every family
        paths = [arg for arg in self.config.args if (here / arg).resolve() not in whole]
        if paths:
            limits.append(f"only {' '.join(paths)}")
        return [limit for limit in limits if limit]

    def completeness(self) -> dict:
        """Selected, run and not-run test counts, and whether the run was interrupted."""
        return completeness(self.selected_count, len(self.finished), self.interrupted)

    def _perf_summary(self) -> dict | None:
        """Verdicts of the performance gate: counts, and the variants that
        regressed, improved or have no baseline yet."""
        if self.baseline is None:
            return None
        return perf_gate.summarise({row.test_id: row.properties.get("perf") for row in self.rows},
                                   str(self.baseline_path), self.config.getoption("perf_threshold"),
                                   digest_files([self.baseline_path]), self.foreign_toolchain)

    def _settle_fixed(self) -> None:
        """A pass under an entry that covered a failure in this run is
        passed_beside, not fixed: known only once every variant has run."""
        beside = expectations.passes_beside_failures(
            [(row.test_id, row.properties["expectation"], row.properties["expect_entry"])
             for row in self.rows if row.properties.get("expectation")])
        for row in self.rows:
            if row.test_id in beside:
                row.properties["expectation"] = PASSED_BESIDE

    def _expectation_summary(self) -> dict:
        """New failures, known bugs, unsupported paths and fixed variants, and
        the --expect entries that matched nothing in this run."""
        groups = expectations.summary_groups((row.test_id, row.outcome, row.properties.get("expectation"))
                                             for row in self.rows)
        matched = {int(row.properties["expect_entry"]) for row in self.rows if row.properties.get("expectation")}
        summary = {key: len(ids) for key, ids in groups.items()}
        summary["file"] = self.expectations.source or None
        summary["fixed_ids"] = groups[FIXED]
        summary["unmatched_entries"] = [e.describe() for e in self.expectations.unmatched(matched)]
        return summary

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        output = getattr(node, "workeroutput", {})
        self._merge_stats(output.get("ptl_stats", {}))
        for line in output.get("ptl_builds", []):
            self.worker_builds[line.split(":", 1)[0]] = line
        self.db_errors.update(output.get("ptl_db_errors", []))
        for message in output.get("ptl_cache_warnings", []):
            self._cache_warning(message)
        self.shard_record = self.shard_record or output.get("ptl_shard")
        self.shard_ids = self.shard_ids or output.get("ptl_shard_ids")

    def _db_errors(self) -> set[str]:
        session_error = self._session.results_db_error if self._session else None
        return self.db_errors | ({session_error} if session_error else set())

    def build_lines(self) -> list[str]:
        """One line per format built in this run, by any process."""
        lines = dict(self.worker_builds)
        for line in self._session.build_summary() if self._session else []:
            lines[line.split(":", 1)[0]] = line
        return [lines[fmt] for fmt in sorted(lines)]

    def pytest_terminal_summary(self, terminalreporter):
        if hasattr(self.config, "workerinput") or not (self.rows or self.interrupted):
            return
        failure_summary.write(terminalreporter, self.rows, self.config)
        s = self.stats
        if self.stats_sources or not self.interrupted:   # an interrupted run's workers may never have said:
            # no zeros in place of counters nobody reported
            terminalreporter.write_line(
                f"ptl cache: builds compiled {s['builds_compiled']}, reused {s['builds_reused']}; "
                f"golden generated {s['golden_generated']}, reused {s['golden_reused']}; "
                f"runner invocations {s['runner_invocations']}")
        for line in self.build_lines():
            terminalreporter.write_line(f"ptl build {line}")
        for line in self.team_order_lines():
            terminalreporter.write_line(line)
        for line in pytest_board.summary_lines(self.target):
            terminalreporter.write_line(line)
        for message in self.all_cache_warnings():
            terminalreporter.write_line(f"ptl warning: {message}", yellow=True)
        for error in sorted(self._db_errors()):
            terminalreporter.write_line(f"ptl warning: {error}; the autotuner will not reuse this run's "
                                        f"measurements", yellow=True)
        if self.expectations:
            e = self._expectation_summary()
            terminalreporter.write_line(
                f"ptl expectations ({e['file']}): new failures {e['new_failures']}, known bugs {e[KNOWN_BUG]}, "
                f"unsupported {e[UNSUPPORTED]}, fixed {e[FIXED]}, passed beside known failures {e[PASSED_BESIDE]}")
            for test_id in e["fixed_ids"][:10]:
                terminalreporter.write_line(f"ptl fixed (expected to fail, passed): {test_id}")
            if len(e["fixed_ids"]) > 10:
                terminalreporter.write_line(f"ptl fixed: ... {len(e['fixed_ids']) - 10} more in summary.json")
            for entry in e["unmatched_entries"]:
                terminalreporter.write_line(f"ptl warning: --expect entry {entry} matched no test in this run "
                                            f"(stale, or outside the selection)", yellow=True)
        for line in perf_gate.summary_lines(self._perf_summary()):
            terminalreporter.write_line(f"ptl {line}")
        if self.report_error:
            terminalreporter.write_line(self.report_error, red=True)
            return
        terminalreporter.write_line(f"ptl reports: {Path(self.config.getoption('reports_dir')) / 'junit.xml'}, "
                                    f"results.csv, summary.json")

    def _local_stats(self) -> dict:
        s = self._session
        return {"builds_compiled": s.builds.compiled, "builds_reused": s.builds.reused,
                "golden_generated": s.golden.generated, "golden_reused": s.golden.reused,
                "runner_invocations": s.runs}

    def _merge_stats(self, stats: dict) -> None:
        self.stats_sources += bool(stats)
        for key in STAT_KEYS:
            self.stats[key] += stats.get(key, 0)

    def pytest_unconfigure(self, config):
        if self._session is not None:
            shutil.rmtree(self._session.workdir, ignore_errors=True)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if self.target.fallback_reason and reporter is not None and not hasattr(config, "workerinput"):
            # The run's last line: after pytest's own "N passed" line.
            reporter.write_line(self.fallback_line(), yellow=True, bold=True)
        if self.interrupted and reporter is not None and not hasattr(config, "workerinput"):
            # after pytest's own last line, so that the run's last line says it
            whole = self.completeness()
            reporter.write_line(f"ptl: INTERRUPTED: {whole['run']} of {whole['selected']} selected tests ran, "
                                f"{whole['not_run']} did not; the reports say interrupted: true, and neither merge "
                                f"nor baseline update takes them for a whole run", red=True, bold=True)


def _drop_lineless_frames(tb) -> None:
    """A signal can land on an instruction without a line number (Python
    3.11), and pytest's report of the KeyboardInterrupt then fails on that
    traceback entry (tb_lineno None) with an internal error: unlink such
    entries, keeping the first, which the exception info holds."""
    while tb is not None and tb.tb_next is not None:
        if tb.tb_next.tb_lineno is None:
            tb.tb_next = tb.tb_next.tb_next
        else:
            tb = tb.tb_next


def _variant_of(item) -> Variant | None:
    callspec = getattr(item, "callspec", None)
    variant = callspec.params.get("variant") if callspec else None
    return variant if isinstance(variant, Variant) else None


def _record(request, variant: Variant, target: str, **extra) -> None:
    case = variant.case
    props = {"test_id": variant.id, "target": target, "family": case.entry.name, "step": case.step,
             "dtype": case.dtype, "shape": case.shape_text,
             "options": " ".join(f"{k}={v}" for k, v in case.option_items),
             "kernel": variant.kernel_name, "kernel_index": variant.kernel, "cores": variant.cores,
             "l1_bytes": sum(case.footprint.values()) if case.footprint else "",
             "features": " ".join(case.features), **extra}
    request.node.user_properties.extend(props.items())


def _note_expectation(request, expectations: Expectations, entry, label: str) -> None:
    request.node.user_properties.extend([("expectation", label), ("expect_entry", expectations.index(entry)),
                                         ("expect_reason", entry.reason)])


def case_scope(nodeid: str) -> str:
    """The case of a variant's test id: `...[<case id>-<kernel>-c<cores>]`."""
    return nodeid.rsplit("-", 2)[0] if nodeid.endswith("]") and "[" in nodeid else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """The variants of a case share one runner invocation, so xdist must send
    all of them to the same worker. (xdist's own loadgroup does not take
    effect with pytest 9: its worker-side rename of node ids is lost.)"""
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class CaseScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return case_scope(nodeid)

    return CaseScheduling(config, log)


def validate_options(config) -> None:
    """Every option is checked before anything runs: a bad value is one
    usage error (exit status 4) that names the option, the value and what is
    allowed."""
    def bad(option: str, value, allowed: str):
        raise pytest.UsageError(f"{option_values.label(option, value)}: {allowed}")

    pytest_board.check_numbers(config)   # before a board target reads them
    target = config.getoption("target")
    if target != "auto" and target not in target_names():
        bad("--target", target, f"unknown target; choose one of {', '.join(target_names())}, or auto")
    _check_target_environment(target)    # before any target is made
    if target != "auto" and make_target(target).stop_when_unavailable:
        reason = make_target(target).unavailable_reason()
        if reason:
            bad("--target", target, reason)
    sanitize = config.getoption("sanitize")
    if sanitize and target != "host":
        bad("--sanitize", sanitize, f"sanitizers exist on the host target only (--target host), not on {target}")
    _check_numbers(config, target)
    selected_families(config.getoption("family"))    # a name the catalogue has not: one usage error
    pytest_tune.check_options(config, TUNER_MODULE, lambda: choose_target(target).capabilities.max_cores)
    if config.getoption("tune") and (refusal := team_order.timing_refusal(choose_target(target).team_order)):
        bad("--tune", config.getoption("tune"), refusal)
    directories = {"--reports-dir": config.getoption("reports_dir"), "--ptl-cache": config.getoption("ptl_cache"),
                   "PTL_OBJECTS_DIR": os.environ.get("PTL_OBJECTS_DIR")}
    for label, value in directories.items():
        if not value:
            continue
        blocker = next((p for p in (Path(value), *Path(value).parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            bad(label, value, f"{blocker} is a file, so this cannot be a directory")


def _check_target_environment(target: str) -> None:
    """The environment variables of every target the run may make (auto:
    each it chooses between), read as make_target reads them (the target
    package's options_from_environment): a bad value is one usage error."""
    try:
        for name in candidates(target):
            environment_options(name)
    except option_values.OptionValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    order = os.environ.get("PTL_TEAM_ORDER", "")
    if order not in ("", "free") and not any(_takes_team_order(name) for name in candidates(target)):
        takers = " and ".join(name for name in target_names() if _takes_team_order(name))
        raise pytest.UsageError(f"PTL_TEAM_ORDER={order}: the {target} target runs its team its own way only, and "
                                f"would ignore it; {takers} take a team order (or unset PTL_TEAM_ORDER)")


def _takes_team_order(name: str) -> bool:
    """Whether target `name` reads PTL_TEAM_ORDER (set, and valid where read)."""
    try:
        return "team_order" in environment_options(name)
    except option_values.OptionValueError:   # another variable of that target: not this run's concern
        return False


def _check_numbers(config, target: str) -> None:
    """The number and on/off options, and the environment variables behind
    their defaults (harness/option_values.py), replaced by their values."""
    option = config.option
    try:
        if option.l1_bytes is not None:
            option.l1_bytes = option_values.number("--l1-bytes", option.l1_bytes, "a positive number of bytes "
                                                   "(the cluster L1 size)", integer=True, minimum=1)
        seconds = "a positive number of seconds"
        if option.run_timeout is None:
            default = make_target(target).default_run_timeout if target != "auto" else DEFAULT_RUN_TIMEOUT
            option.run_timeout = option_values.env_number("PTL_RUN_TIMEOUT", float(default), seconds, above=0)
        else:
            option.run_timeout = option_values.number("--run-timeout", option.run_timeout, seconds, above=0)
        if option.perf_gate is None:
            option.perf_gate = option_values.env_switch("PTL_PERF_GATE")
        option.perf_threshold = option_values.number(
            "--perf-threshold", 0.0 if option.perf_threshold is None else option.perf_threshold,
            "a finite fraction of 0 or more (0.05 allows 5% growth)", minimum=0)
    except option_values.OptionValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _stop_on_sigterm(config) -> None:
    """SIGTERM ends the controller as Ctrl-C does: pytest's interrupted
    path, so the reports say the run was interrupted and the session's
    places and children are released. Installed before the board plugin,
    which then leaves SIGTERM to it."""
    if hasattr(config, "workerinput") or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")
    config.stash[_SIGTERM_KEY] = signal.signal(signal.SIGTERM, interrupt)


_SIGTERM_KEY = pytest.StashKey[object]()
_SNAPSHOT_KEY = "ptl_library_snapshot"   # workerinput: the controller's copy of the library


def pytest_configure(config):
    validate_options(config)
    _stop_on_sigterm(config)
    if hasattr(config, "workerinput"):
        # A killed controller takes its xdist workers along, and with them
        # their simulators (harness/child_process.py).
        die_with_parent_now()
    for name, meaning in FEATURES.items():
        config.addinivalue_line("markers", f"feature_{name}: a lib_c feature beyond the published API: {meaning}")
    for name in catalogue.family_names():
        config.addinivalue_line("markers", f"family_{name}: the variants of harness/catalogue/{name}.py")
    pytest_board.configure(config)
    failure_summary.register(config)
    config.pluginmanager.register(PtlPlugin(config), "ptl-plugin")


def pytest_unconfigure(config):
    # Here, not in PtlPlugin: a Ctrl-C before the plugin object is registered
    # must still release the labgrid places and remove the board state.
    pytest_board.unconfigure(config)
    previous = config.stash.get(_SIGTERM_KEY, None)
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


class _Handle:
    def __init__(self, plugin: PtlPlugin, request):
        self.plugin, self.request = plugin, request

    def check(self, variant: Variant) -> None:
        self.plugin.check(self.request, variant)


@pytest.fixture
def ptl(request):
    """Runs and judges a variant: ptl.check(variant)."""
    return _Handle(request.config.pluginmanager.get_plugin("ptl-plugin"), request)
