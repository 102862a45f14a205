"""harness/reports.py: JUnit XML and CSV of a run, written atomically."""
import csv
import json
import os
import xml.etree.ElementTree as ET

import pytest

from harness.reports import (CSV_COLUMNS, CSV_MESSAGE_CHARS, ReportRow, csv_message, write_csv, write_junit,
                             write_summary)


def props(**extra):
    base = {"test_id": "x", "target": "qemu", "family": "matmul", "step": "fw", "dtype": "fp16",
            "shape": "N2xM3xK4", "options": "trans_B=0", "kernel": "mm_fp16", "kernel_index": 0,
            "cores": 8, "unit": "instructions", "latency": 1234, "work": 5678, "max_ulp": 2,
            "mean_ulp": "0.500", "worst_error_ratio": "0.25", "failure_class": ""}
    return {**base, **extra}


ROWS = [
    ReportRow("matmul-fp16-fw-a", "passed", 0.5, props(test_id="matmul-fp16-fw-a")),
    ReportRow("matmul-fp16-fw-b", "failed", 0.25, props(test_id="matmul-fp16-fw-b", failure_class="numeric"),
              "[numeric] tensor C outside tolerance\n  (0, 1) 1 1.039 0x3c28 40"),
    ReportRow("matmul-fp16-fw-c", "error", 0.0, props(test_id="matmul-fp16-fw-c", failure_class="build"),
              "[build] cc failed"),
    ReportRow("matmul-fp16-fw-d", "skipped", 0.0, props(test_id="matmul-fp16-fw-d", latency=None),
              "[not_fit] target has 4 cores"),
    ReportRow("matmul-fp16-fw-e", "xfailed", 0.125, props(test_id="matmul-fp16-fw-e"), "known bug #12"),
]


@pytest.fixture
def junit(tmp_path):
    write_junit(ROWS, tmp_path / "junit.xml")
    return ET.parse(tmp_path / "junit.xml").getroot()


def cases_by_name(root):
    return {case.get("name"): case for case in root.iter("testcase")}


def test_junit_has_one_testsuite_with_totals(junit):
    assert junit.tag == "testsuite" and junit.get("name") == "ptl"
    assert (junit.get("tests"), junit.get("failures"), junit.get("errors"), junit.get("skipped")) == \
        ("5", "1", "1", "2")
    assert float(junit.get("time")) == pytest.approx(0.875)


def test_junit_has_one_testcase_per_row_in_order(junit):
    assert [c.get("name") for c in junit.iter("testcase")] == [r.test_id for r in ROWS]
    case = cases_by_name(junit)["matmul-fp16-fw-a"]
    assert case.get("classname") == "qemu.matmul" and float(case.get("time")) == 0.5


def test_junit_testcase_carries_every_property(junit):
    case = cases_by_name(junit)["matmul-fp16-fw-a"]
    properties = {p.get("name"): p.get("value") for p in case.find("properties")}
    assert properties == {k: str(v) for k, v in props(test_id="matmul-fp16-fw-a").items()}


def test_junit_writes_none_properties_as_empty_values(junit):
    case = cases_by_name(junit)["matmul-fp16-fw-d"]
    properties = {p.get("name"): p.get("value") for p in case.find("properties")}
    assert properties["latency"] == ""


def test_junit_failure_element_has_first_line_as_message_class_as_type_and_full_text(junit):
    case = cases_by_name(junit)
    failure = case["matmul-fp16-fw-b"].find("failure")
    assert failure.get("message") == "[numeric] tensor C outside tolerance"
    assert failure.get("type") == "numeric"
    assert failure.text == ROWS[1].message
    error = case["matmul-fp16-fw-c"].find("error")
    assert error.get("type") == "build" and case["matmul-fp16-fw-c"].find("failure") is None


def test_junit_skipped_element_marks_skipped_and_xfailed_rows(junit):
    case = cases_by_name(junit)
    assert case["matmul-fp16-fw-d"].find("skipped").attrib == {"type": "skipped",
                                                                "message": "[not_fit] target has 4 cores"}
    assert case["matmul-fp16-fw-e"].find("skipped").get("type") == "xfailed"
    passed = case["matmul-fp16-fw-a"]
    assert [child.tag for child in passed] == ["properties"]


def test_junit_escapes_markup_in_messages(tmp_path):
    row = ReportRow("t", "failed", 0.0, {"family": "matmul"}, 'expected <1.0> & got "2.0"')
    write_junit([row], tmp_path / "j.xml")
    assert ET.parse(tmp_path / "j.xml").getroot().find("testcase/failure").text == 'expected <1.0> & got "2.0"'


def test_junit_stays_parseable_when_a_message_contains_console_control_characters(tmp_path):
    row = ReportRow("t", "failed", 0.0, {"family": "matmul"},
                    "[transport] output tail:\n  \x1b[31mboot\x1b[0m \x00\x07")
    write_junit([row], tmp_path / "j.xml")
    assert ET.parse(tmp_path / "j.xml").getroot().find("testcase/failure") is not None


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.reader(handle))


def test_csv_has_the_header_and_one_row_per_variant(tmp_path):
    write_csv(ROWS, tmp_path / "results.csv")
    table = read_csv(tmp_path / "results.csv")
    assert table[0] == CSV_COLUMNS
    assert [line[0] for line in table[1:]] == [r.test_id for r in ROWS]


def test_csv_row_fields_come_from_properties_and_the_outcome(tmp_path):
    write_csv(ROWS, tmp_path / "results.csv")
    with open(tmp_path / "results.csv", newline="") as handle:
        failed = list(csv.DictReader(handle))[1]
    assert failed["outcome"] == "failed" and failed["failure_class"] == "numeric"
    assert failed["kernel"] == "mm_fp16" and failed["cores"] == "8" and failed["latency"] == "1234"
    assert failed["duration_s"] == "0.2500"
    # every line of the message, joined, so a build failure keeps its reason
    assert failed["message"].startswith("[numeric] tensor C outside tolerance | ")
    assert "\n" not in failed["message"]


def test_csv_message_keeps_a_build_failures_reason_and_is_bounded():
    message = ("[build] runner unit norm/fp32 did not build against lib:\n"
               "ops_norm.c does not compile against the library:\nops_norm.c:167: error: undeclared rmsnorm\n")
    assert csv_message(message) == ("[build] runner unit norm/fp32 did not build against lib: | ops_norm.c does "
                                    "not compile against the library: | ops_norm.c:167: error: undeclared rmsnorm")
    long = csv_message("x" * 5000)
    assert len(long) == CSV_MESSAGE_CHARS and long.endswith("...")


def test_csv_ignores_properties_that_are_not_columns(tmp_path):
    row = ReportRow("t", "passed", 0.0, {"family": "linear", "hostname": "ci-7"})
    write_csv([row], tmp_path / "r.csv")
    table = read_csv(tmp_path / "r.csv")
    assert len(table) == 2 and "ci-7" not in table[1]


@pytest.mark.parametrize("writer, name", [(write_csv, "results.csv"), (write_junit, "junit.xml")])
def test_reports_leave_no_temporary_files(tmp_path, writer, name):
    writer(ROWS, tmp_path / "out" / name)
    writer(ROWS, tmp_path / "out" / name)
    assert os.listdir(tmp_path / "out") == [name]


@pytest.mark.parametrize("writer, name", [(write_csv, "results.csv"), (write_junit, "junit.xml")])
def test_a_failed_write_keeps_the_previous_report_whole(tmp_path, monkeypatch, writer, name):
    path = tmp_path / name
    path.write_text("previous report")

    def refuse(src, dst):
        raise OSError("no space left")
    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        writer(ROWS, path)
    assert path.read_text() == "previous report"
    assert os.listdir(tmp_path) == [name]


def test_summary_is_sorted_json(tmp_path):
    write_summary({"b": 1, "a": {"passed": 3}}, tmp_path / "summary.json")
    text = (tmp_path / "summary.json").read_text()
    assert json.loads(text) == {"a": {"passed": 3}, "b": 1} and text.index('"a"') < text.index('"b"')
