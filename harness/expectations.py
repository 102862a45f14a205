"""Known failures and unsupported paths of a library under test, as data.

`--expect FILE` names a TOML file that lets a library other than lib_c gate
on "no new failures", as twister's quarantine lists do:

    [[expect]]
    kind = "unsupported"                 # or "bug"
    feature = "hwc_depthwise"            # a catalogue feature (OpEntry.features) ...
    reason = "depthwise is CHW only in this library"

    [[expect]]
    kind = "bug"
    tests = ["conv2d-fp32-*-mm_unroll_2x4-c3"]   # ... and/or test-id patterns (fnmatch)
    classes = ["numeric", "crash"]               # optional: the failure classes it covers
    reason = "unrolled kernels overrun at 3 cores"

Patterns match the variant id (what pytest shows between the brackets). An
entry with both `tests` and `feature` matches a variant that has the feature
and matches a pattern. A variant that fails in a way an entry covers becomes
an expected failure (xfail) labelled with the entry's kind and reason; one
that passes although an entry matches it is reported as fixed. Everything
else that fails is a new failure.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

from harness import failures
from harness.toml_input import TomlInputError, read_toml

KINDS = ("bug", "unsupported")
FIELDS = {"kind", "reason", "tests", "feature", "classes"}
# Outcome labels of a variant that an entry matched, as the reports name them.
KNOWN_BUG, UNSUPPORTED, FIXED = "known_bug", "unsupported", "fixed"


class ExpectationsError(ValueError):
    """The file cannot be used: the message names the file, the entry and the field."""


@dataclass(frozen=True)
class Expectation:
    kind: str
    reason: str
    tests: tuple[str, ...]
    feature: str | None
    classes: tuple[str, ...]   # empty: every failure class
    where: str                 # "FILE, entry N", for messages

    def matches(self, variant_id: str, features: tuple[str, ...]) -> bool:
        if self.feature is not None and self.feature not in features:
            return False
        return not self.tests or any(fnmatch.fnmatchcase(variant_id, p) for p in self.tests)

    def covers(self, failure_class: str) -> bool:
        return not self.classes or failure_class in self.classes

    @property
    def label(self) -> str:
        return KNOWN_BUG if self.kind == "bug" else UNSUPPORTED

    def describe(self) -> str:
        what = [f"feature {self.feature}"] if self.feature else []
        what += [f"tests {', '.join(self.tests)}"] if self.tests else []
        return f"{self.where} ({' and '.join(what)})"


class Expectations:
    def __init__(self, entries: tuple[Expectation, ...] = (), source: str = ""):
        self.entries = entries
        self.source = source

    def __bool__(self) -> bool:
        return bool(self.entries)

    @classmethod
    def load(cls, path: Path) -> "Expectations":
        try:
            data = read_toml(path)
        except TomlInputError as exc:
            raise ExpectationsError(f"--expect {path}: {exc}") from None
        unknown = set(data) - {"expect"}
        if unknown:
            raise ExpectationsError(f"--expect {path}: unknown top-level key(s) {', '.join(sorted(unknown))}; "
                                    f"entries are [[expect]] tables")
        raw = data.get("expect", [])
        if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
            raise ExpectationsError(f"--expect {path}: `expect` must be an array of tables ([[expect]])")
        return cls(tuple(_entry(e, f"{path}, entry {i + 1}") for i, e in enumerate(raw)), str(path))

    def match(self, variant_id: str, features: tuple[str, ...]) -> Expectation | None:
        return next((e for e in self.entries if e.matches(variant_id, features)), None)

    def unmatched(self, matched: set[int]) -> list[Expectation]:
        """The entries whose index is not in `matched`."""
        return [e for i, e in enumerate(self.entries) if i not in matched]

    def index(self, entry: Expectation) -> int:
        return self.entries.index(entry)


def _entry(raw: dict, where: str) -> Expectation:
    unknown = set(raw) - FIELDS
    if unknown:
        raise ExpectationsError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}; "
                                f"allowed: {', '.join(sorted(FIELDS))}")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ExpectationsError(f"{where}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ExpectationsError(f"{where}: reason must be a non-empty string: say why it is expected")
    tests = raw.get("tests", [])
    if isinstance(tests, str):
        tests = [tests]
    if not isinstance(tests, list) or not all(isinstance(t, str) and t for t in tests):
        raise ExpectationsError(f"{where}: tests must be a list of test-id patterns")
    feature = raw.get("feature")
    if feature is not None and (not isinstance(feature, str) or not feature):
        raise ExpectationsError(f"{where}: feature must be a feature name such as \"hwc_depthwise\"")
    if not tests and feature is None:
        raise ExpectationsError(f"{where}: give `tests` (test-id patterns), `feature`, or both")
    classes = raw.get("classes", [])
    if not isinstance(classes, list) or any(c not in failures.ALL for c in classes):
        raise ExpectationsError(f"{where}: classes must be a list of failure classes from "
                                f"{', '.join(failures.ALL)}, not {classes!r}")
    return Expectation(kind, reason.strip(), tuple(tests), feature, tuple(classes), where)
