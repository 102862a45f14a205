"""Known failures and unsupported paths of a library under test, as data.

`--expect FILE` names a TOML file that lets a library other than lib_c gate
on "no new failures", as twister's quarantine lists do:

    [[expect]]
    kind = "unsupported"                 # or "bug"
    feature = "hwc_depthwise"            # a catalogue feature (OpEntry.features) ...
    classes = ["numeric", "crash"]       # ... and how that path fails
    reason = "depthwise is CHW only in this library"

    [[expect]]
    kind = "bug"
    tests = ["conv2d-fp32-*-mm_unroll_2x4-c3"]   # ... and/or test-id patterns (fnmatch)
    classes = ["numeric", "crash"]               # optional: the failure classes it covers
    reason = "unrolled kernels overrun at 3 cores"

    [[expect]]
    kind = "unsupported"
    tests = ["conv_dw-fp16-*"]
    classes = ["build"]
    message = "no member named 'stride_h'"       # what the failure's message must contain
    reason = "the FP16 depthwise args have no stride fields"

    [[expect]]
    kind = "bug"
    tests = ["q_rsqrt-*"]
    targets = ["host"]                           # only in runs on these targets
    classes = ["numeric"]
    reason = "reads a float's bits through a long: 8 bytes on the 64-bit host"

    [[expect]]
    kind = "bug"
    tests = ["train_ds_cnn-fp32-*"]
    sanitize = "address,undefined"               # only in runs built with these sanitizers
    classes = ["crash"]
    message = "division by zero at pulp_conv2d_fp32.c:771"
    reason = "the published im2col divides by a zero stride"

Patterns match the variant id (what pytest shows between the brackets).
An entry with `sanitize` applies only to runs built with that sanitizer set
(`--sanitize`, host: one of harness.targets.host.SANITIZERS): there the
sanitizer stops what an unchecked run lets pass, or fail in another way.
An entry with `targets` applies only to runs on those targets (`--target`,
after auto chose): where a bug shows on one target and another's memory
layout or word size hides it, the entry says so, and the hidden target's
passes are plain passes, not "fixed".
The other entries apply to every run. An entry with both `tests` and
`feature` matches a variant that has the feature and matches a pattern.

An entry covers a failure when the failure's class is one of `classes` (no
`classes`: any class) and, if the entry has a `message`, the failure's
message contains it. `message` is an fnmatch-style pattern searched for
anywhere in the message, case-sensitive, across lines: a plain string is a
substring ("pulp_conv_dw_fp16.c"); `*` spans any text ("struct*has no member
named 'stride_h'"), `?` one character, `[seq]` a character class (a literal
"[" is "[[]").

What an entry must say, checked when the file is loaded:
- an entry whose `classes` include "build" gives a `message` naming the file
  or the compiler error it expects, so an unrelated build failure of the same
  family stays a new failure;
- a `feature` entry gives `classes` or a `message`: the cases that carry the
  feature are expected to fail for the feature's reason, not for any reason.
An entry with neither `classes` nor `message` never covers a build failure.

A variant that fails becomes an expected failure (xfail), labelled with the
kind and reason of the first entry that matches it and covers its failure;
a variant that passes although an entry matches it is reported as fixed,
unless that entry covered a failure in the same run: then the pass is
"passed beside" the entry's failures (an entry that names a family matches
many variants that never failed).
Everything else that fails is a new failure.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable
from typing import Protocol

from harness import failures
from harness.targets import target_names
from harness.targets.host import SANITIZERS
from harness.toml_input import TomlInputError, read_toml

KINDS = ("bug", "unsupported")
FIELDS = {"kind", "reason", "tests", "feature", "classes", "message", "sanitize", "targets"}
# Outcome labels of a variant that an entry matched, as the reports name them.
# A pass is `fixed` when its entry covered no failure in the run; where the
# entry did (its patterns are wider than the bug), the pass is `passed_beside`
# the entry's failures, which says nothing about the bug.
KNOWN_BUG, UNSUPPORTED, FIXED, PASSED_BESIDE = "known_bug", "unsupported", "fixed", "passed_beside"


NEW_FAILURES = "new_failures"
SUMMARY_KEYS = (NEW_FAILURES, KNOWN_BUG, UNSUPPORTED, FIXED, PASSED_BESIDE)


def summary_groups(variants: Iterable[tuple[str, str, str | None]]) -> dict[str, list[str]]:
    """Of (test id, outcome, expectation label) for every variant of a run,
    the ids under each key of SUMMARY_KEYS: each label's, and new_failures
    for a failure that no entry expected."""
    groups = {key: [] for key in SUMMARY_KEYS}
    for test_id, outcome, label in variants:
        if label:
            groups[label].append(test_id)
        elif outcome in ("failed", "error"):
            groups[NEW_FAILURES].append(test_id)
    return groups


def passes_beside_failures(labelled: list[tuple[str, str, str]]) -> set[str]:
    """Of (test id, label, entry index) for every variant an entry matched,
    the ids of the fixed passes whose entry covered a failure in the same
    run: those are passed_beside, not fixed."""
    covering = {str(entry) for _, label, entry in labelled if label in (KNOWN_BUG, UNSUPPORTED)}
    return {test_id for test_id, label, entry in labelled if label == FIXED and str(entry) in covering}


class ExpectationsError(ValueError):
    """The file cannot be used: the message names the file, the entry and the field."""


class Failure(Protocol):
    """What an entry is matched against: harness.failures.CaseFailure."""
    kind: str
    message: str


@dataclass(frozen=True)
class Expectation:
    kind: str
    reason: str
    tests: tuple[str, ...]
    feature: str | None
    classes: tuple[str, ...]   # empty: every failure class (a build failure only with a message)
    where: str                 # "FILE, entry N", for messages
    message: str | None = None  # an fnmatch pattern searched for in the failure's message
    sanitize: str | None = None  # the sanitizer set of the runs it applies to; None: every run
    targets: tuple[str, ...] = ()  # the targets of the runs it applies to; empty: every target

    def matches(self, variant_id: str, features: tuple[str, ...]) -> bool:
        if self.feature is not None and self.feature not in features:
            return False
        return not self.tests or any(fnmatch.fnmatchcase(variant_id, p) for p in self.tests)

    def covers(self, failure: Failure) -> bool:
        """Whether this entry expects `failure` (its class, and its message if the entry names one)."""
        if self.classes and failure.kind not in self.classes:
            return False
        if self.message is None:
            return failure.kind != failures.BUILD
        return fnmatch.fnmatchcase(failure.message, f"*{self.message}*")

    @property
    def label(self) -> str:
        return KNOWN_BUG if self.kind == "bug" else UNSUPPORTED

    def describe(self) -> str:
        what = [f"feature {self.feature}"] if self.feature else []
        what += [f"tests {', '.join(self.tests)}"] if self.tests else []
        what += [f"message {self.message!r}"] if self.message is not None else []
        what += [f"--sanitize {self.sanitize}"] if self.sanitize is not None else []
        what += [f"targets {', '.join(self.targets)}"] if self.targets else []
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

    def for_run(self, sanitize: str | None, target: str) -> "Expectations":
        """The entries that apply to a run on `target` built with the
        sanitizer set `sanitize` (None: without one)."""
        return Expectations(tuple(e for e in self.entries if e.sanitize in (None, sanitize)
                                  and (not e.targets or target in e.targets)), self.source)

    def match(self, variant_id: str, features: tuple[str, ...],
              failure: Failure | None = None) -> Expectation | None:
        """The first entry that matches the variant; with `failure`, the first
        that matches the variant and covers the failure (a later entry may
        name the message an earlier one does not)."""
        return next((e for e in self.entries if e.matches(variant_id, features)
                     and (failure is None or e.covers(failure))), None)

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
    message = raw.get("message")
    if message is not None and (not isinstance(message, str) or not message.strip()):
        raise ExpectationsError(f"{where}: message must be a non-empty string, a part of the failure's message "
                                f"(fnmatch wildcards allowed), not {message!r}")
    if failures.BUILD in classes and message is None:
        raise ExpectationsError(f"{where}: an entry for build failures (classes include \"build\") must name "
                                f"what fails to build: add `message = \"...\"` with the file or the compiler "
                                f"error the failure names (e.g. \"pulp_conv_dw_fp16.c\" or \"no member named "
                                f"'stride_h'\"); without it every build failure of the matched tests would be "
                                f"expected")
    if feature is not None and not classes and message is None:
        raise ExpectationsError(f"{where}: the feature entry {feature!r} must say how the feature's cases fail: "
                                f"add `classes` (e.g. [\"numeric\", \"crash\"]) and/or `message = \"...\"`; "
                                f"without them a failure of those cases for any other reason would be expected")
    sanitize = raw.get("sanitize")
    if sanitize is not None and sanitize not in SANITIZERS:
        raise ExpectationsError(f"{where}: sanitize must be one of {', '.join(map(repr, SANITIZERS))} "
                                f"(--sanitize), not {sanitize!r}")
    targets = raw.get("targets")
    if targets is not None and (not isinstance(targets, list) or not targets
                                or any(t not in target_names() for t in targets)):
        raise ExpectationsError(f"{where}: targets must be a non-empty list of targets from "
                                f"{', '.join(target_names())}, not {targets!r}")
    return Expectation(kind, reason.strip(), tuple(tests), feature, tuple(classes), where, message, sanitize,
                       tuple(targets or ()))


def add_options(group) -> None:
    """--expect, in the plugin's option group."""
    group.addoption("--expect", default=os.environ.get("PTL_EXPECT"), metavar="FILE",
                    help="TOML file of known bugs and unsupported paths of the library under test "
                         "(harness/expectations.py): matching failures are expected, the summary "
                         "separates new failures, known bugs, unsupported paths and fixed ones")
