"""What the terminal says about failed variants.

pytest's own FAILURES section costs, for each failure, a scan of every
report of the session: TerminalReporter._get_teardown_reports looks for the
failure's teardown output among all the passed setup and teardown reports
(two per test). That is O(failures x tests): on a 33,591-variant run with
22,227 failures, about 100 ms per failure and 37 minutes in all, with the
runs long finished.

So, by default, failed variants leave pytest's FAILURES section and short
summary (the final "N failed, M passed" line still counts them) and are said
here instead: one line each, or, when there are many, counts grouped by
family, dtype and failure class plus the first few in full. Every message is
in full in reports/junit.xml and reports/results.csv. --ptl-full-failures
(or an explicit --tb) gives pytest's sections back; in every mode the
teardown lookup is indexed once per summary, so pytest's sections cost time
linear in the failures too.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest

from harness import option_values

FAILED_OUTCOMES = ("failed", "error")
SHOWN_IN_FULL = 5          # failures printed in full under a grouped summary
PLUGIN_NAME = "ptl-failure-summary"


def add_options(parser) -> None:
    group = parser.getgroup("ptl", "PULP training-library regression")
    group.addoption("--ptl-full-failures", action="store_true", default=False,
                    help="print pytest's own FAILURES section and short summary for failed variants, every "
                         "message in full (as does any explicit --tb=STYLE). By default the terminal shows one "
                         "line per failed variant, or counts by family, dtype and failure class and the first "
                         f"{SHOWN_IN_FULL} in full; reports/junit.xml and results.csv always hold every message")
    group.addoption("--ptl-failure-lines", default="50", metavar="N",
                    help="up to N failed variants are listed one line each; more are grouped (default 50)")


def register(config) -> None:
    """Checks the options and installs the summary's hooks (controller and workers alike)."""
    try:
        config.option.ptl_failure_lines = option_values.number(
            "--ptl-failure-lines", config.getoption("ptl_failure_lines"),
            "a whole number of 0 or more (failures listed one line each)", integer=True, minimum=0)
    except option_values.OptionValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(TerminalFailures(config), PLUGIN_NAME)


def full_failures(config) -> bool:
    """pytest's own sections, because the user asked for them; --tb's default is auto."""
    return config.getoption("ptl_full_failures") or config.getoption("tbstyle") != "auto"


class TerminalFailures:
    """Around pytest's terminal summary (outermost: tryfirst wrapper)."""

    def __init__(self, config):
        self.config = config

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        stats = terminalreporter.stats
        kept = {} if full_failures(self.config) else _hide_variant_failures(stats)
        restore_lookup = _index_teardown_reports(terminalreporter)
        try:
            return (yield)
        finally:
            stats.update(kept)  # the final "N failed" line counts every failure
            restore_lookup()


def _said_here(report) -> bool:
    """A variant's failure in setup or call: the plugin made a row of it (its
    properties come from pytest_plugin._record). A teardown error, a
    collection error or a plain test's failure stays with pytest."""
    if getattr(report, "when", None) == "teardown":
        return False
    return any(key == "family" for key, _ in getattr(report, "user_properties", ()))


def _hide_variant_failures(stats: dict) -> dict:
    """Takes failed variants out of the reports pytest's summary sections read;
    returns the original lists, to be put back."""
    kept = {}
    for key in FAILED_OUTCOMES:
        reports = stats.get(key)
        if reports:
            kept[key] = reports
            stats[key] = [r for r in reports if not _said_here(r)]
    return kept


def _index_teardown_reports(reporter):
    """Replaces pytest's per-failure scan of all reports with a dict built
    once; the same reports in the same order. Returns the undo."""
    if not callable(getattr(reporter, "_get_teardown_reports", None)):
        return lambda: None   # a pytest without the scan: nothing to fix
    by_node = defaultdict(list)
    for report in reporter.getreports(""):
        if report.when == "teardown":
            by_node[str(report.nodeid)].append(report)
    reporter._get_teardown_reports = lambda node_id: by_node.get(str(node_id), [])
    return lambda: reporter.__dict__.pop("_get_teardown_reports", None)


# ---- what the terminal shows ------------------------------------------------

def failure_class(row) -> str:
    return row.properties.get("failure_class") or row.outcome


def one_line(row) -> str:
    """FAILED <variant id> [<class>] <first line of the message>."""
    kind = failure_class(row)
    first = row.message.splitlines()[0] if row.message else ""
    first = first.removeprefix(f"[{kind}] ")   # CaseFailure's text starts with its class
    return f"{row.outcome.upper()} {row.test_id} [{kind}] {first}".rstrip()


def groups(rows) -> list[tuple[str, str, str, int, str]]:
    """(family, dtype, failure class, count, first test id) of the failed
    rows, the largest group first."""
    counts: Counter = Counter()
    first: dict = {}
    for row in rows:
        if row.outcome in FAILED_OUTCOMES:
            key = (row.properties.get("family", ""), row.properties.get("dtype", ""), failure_class(row))
            counts[key] += 1
            first.setdefault(key, row.test_id)
    return [(*key, n, first[key]) for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def group_table(table) -> list[str]:
    """The groups as aligned columns: count, family, dtype, class, first variant."""
    head = ("count", "family", "dtype", "class", "first variant")
    cells = [head] + [(str(n), family, dtype, kind, first) for family, dtype, kind, n, first in table]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    return [f"{c[0]:>{widths[0]}}  {c[1]:<{widths[1]}}  {c[2]:<{widths[2]}}  {c[3]:<{widths[3]}}  {c[4]}"
            for c in cells]


def summary_lines(rows, limit: int, reports_dir: Path) -> list[str]:
    """The terminal's account of the failed rows, in test id order: one line
    each up to limit, else the groups and the first few in full."""
    failed = sorted((r for r in rows if r.outcome in FAILED_OUTCOMES), key=lambda r: r.test_id)
    if not failed:
        return []
    where = (f"every message in full: {reports_dir / 'junit.xml'}, {reports_dir / 'results.csv'}; "
             f"pytest's own report of each: --ptl-full-failures")
    if len(failed) <= limit:
        return [f"{len(failed)} failed variants:", *(one_line(r) for r in failed), where]
    lines = [f"{len(failed)} failed variants, by family, dtype and failure class:", *group_table(groups(failed)),
             f"the first {min(SHOWN_IN_FULL, len(failed))} in full:"]
    for row in failed[:SHOWN_IN_FULL]:
        lines += [f"--- {row.test_id}", *(row.message or one_line(row)).splitlines()]
    return [*lines, where]


def write(terminalreporter, rows, config) -> None:
    """Called from the plugin's pytest_terminal_summary with the run's rows."""
    if full_failures(config) or terminalreporter.no_summary:
        return
    lines = summary_lines(rows, config.getoption("ptl_failure_lines"), Path(config.getoption("reports_dir")))
    if not lines:
        return
    terminalreporter.write_sep("=", "ptl failures")
    for line in lines:
        terminalreporter.write_line(line, red=line.startswith(("FAILED ", "ERROR ")))
