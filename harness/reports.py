"""Reports of a run: a JUnit XML with one test case per variant, carrying its
properties, and a CSV with one row per variant. Both are written to a
temporary file and renamed into place, so a reader never sees half a file."""
from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.files import write_atomically

CSV_COLUMNS = ["test_id", "outcome", "failure_class", "target", "family", "step", "dtype", "shape",
               "options", "kernel", "kernel_index", "cores", "l1_bytes", "l2_bytes", "unit", "latency", "work", "max_ulp",
               "mean_ulp", "worst_error_ratio", "features", "expectation", "duration_s", "message", "perf",
               "compiler", "fp16_arithmetic", "library_fp16", "fp16_route",
               # a farm target's delivery (harness/targets/board/): attempts, the boards in order,
               # the failure classes of the attempts that were retried
               "attempts", "boards", "failed_attempts"]


@dataclass
class ReportRow:
    test_id: str
    outcome: str                      # passed, failed, error, skipped, xfailed, xpassed
    duration: float
    properties: dict = field(default_factory=dict)
    message: str = ""


CSV_MESSAGE_CHARS = 1000


def csv_message(message: str) -> str:
    """A failure's message on one CSV line: its lines joined with " | ", so a
    build failure keeps its reason (unit, file, first compiler error), cut at
    CSV_MESSAGE_CHARS. The JUnit carries the whole text."""
    text = " | ".join(line.strip() for line in message.splitlines() if line.strip())
    return text if len(text) <= CSV_MESSAGE_CHARS else text[:CSV_MESSAGE_CHARS - 3] + "..."


def write_csv(rows: list[ReportRow], path: Path) -> None:
    write_csv_records(({**row.properties, "test_id": row.test_id, "outcome": row.outcome,
                        "duration_s": f"{row.duration:.4f}", "message": csv_message(row.message)} for row in rows), path)


def write_csv_records(records: Iterable[dict], path: Path) -> None:
    """The CSV of a run, or of merged runs, from its rows as dicts."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(records)
    write_atomically(path, buffer.getvalue().encode())


_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(value) -> str:
    """Text that XML 1.0 can carry: console control bytes become \\xNN."""
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", "" if value is None else str(value))


def write_junit(rows: list[ReportRow], path: Path, suite_name: str = "ptl", properties: dict | None = None) -> None:
    """properties: the run's own (interrupted, selected, run, not_run), as the
    testsuite's <properties>."""
    write_junit_cases([_testcase(row) for row in rows], path, suite_name, properties)


def _testcase(row: ReportRow) -> ET.Element:
    classname = f"{row.properties.get('target', '')}.{row.properties.get('family', '')}"
    case = ET.Element("testcase", classname=classname, name=row.test_id, time=f"{row.duration:.4f}")
    if row.properties:
        props = ET.SubElement(case, "properties")
        for key, value in row.properties.items():
            ET.SubElement(props, "property", name=key, value=_xml_text(value))
    first_line = _xml_text(row.message.splitlines()[0] if row.message else "")
    if row.outcome in ("failed", "error"):
        tag = "failure" if row.outcome == "failed" else "error"
        node = ET.SubElement(case, tag, message=first_line, type=str(row.properties.get("failure_class", row.outcome)))
        node.text = _xml_text(row.message)
    elif row.outcome in ("skipped", "xfailed"):
        node = ET.SubElement(case, "skipped", type=row.outcome, message=first_line)
        if row.outcome == "xfailed":   # the failure in full, and the entry that expected it
            node.text = _xml_text(row.message)
    return case


def write_junit_cases(cases: list[ET.Element], path: Path, suite_name: str = "ptl",
                      properties: dict | None = None) -> None:
    """The JUnit of a run, or of merged runs, from its <testcase> elements;
    the testsuite's counts are counted from them."""
    suite = ET.Element("testsuite", name=suite_name, tests=str(len(cases)),
                       failures=str(sum(case.find("failure") is not None for case in cases)),
                       errors=str(sum(case.find("error") is not None for case in cases)),
                       skipped=str(sum(case.find("skipped") is not None for case in cases)),
                       time=f"{sum(float(case.get('time') or 0) for case in cases):.3f}")
    if properties:
        props = ET.SubElement(suite, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", name=key, value=_xml_text(str(value).lower() if isinstance(value, bool)
                                                                       else value))
    suite.extend(cases)
    ET.indent(suite)
    write_atomically(path, ET.tostring(suite, encoding="utf-8", xml_declaration=True))


def completeness(selected: int, run: int, interrupted: bool) -> dict:
    """Whether a run is whole: summary.json's and the JUnit testsuite's
    `interrupted`, `selected`, `run` and `not_run`. Downstream (merge,
    baseline update) refuses a run that is not whole (incomplete)."""
    return {"interrupted": interrupted, "selected": selected, "run": run, "not_run": max(selected - run, 0)}


def incomplete(summary: dict) -> str | None:
    """Why a run's summary.json is not a whole run, or None."""
    if summary.get("interrupted"):
        return (f"the run was interrupted ({summary.get('run')} of {summary.get('selected')} selected tests ran, "
                f"{summary.get('not_run')} did not)")
    if summary.get("not_run"):
        return f"{summary['not_run']} of its {summary.get('selected')} selected tests did not run (stopped early, -x?)"
    return None


def write_summary(summary: dict, path: Path) -> None:
    write_atomically(path, json.dumps(summary, indent=2, sort_keys=True).encode())
