"""Failure classes. Every case that does not pass says which one it is."""
from __future__ import annotations

BUILD = "build"          # the library or runner did not compile or link
LOAD = "load"            # the target could not start the program (missing tool, flash failed)
TRANSPORT = "transport"  # the records were corrupt, truncated or missing
TIMEOUT = "timeout"      # the run did not finish within its time limit
CRASH = "crash"          # a trap, signal, sanitizer report or memory overrun
RACE = "race"            # ThreadSanitizer saw two cores access the same memory unordered
NUMERIC = "numeric"      # outputs outside tolerance
PERF = "perf"            # a performance gate was missed
NOT_FIT = "not_fit"      # the case does not fit the target (L1, cores, format)
UNSUPPORTED = "unsupported"  # the library lacks what the case needs (a struct field of the API)
ABSENT = "absent"        # the library lacks a kernel beyond the published API (lib_c's own): not run
BAD_CASE = "bad_case"    # the case itself is malformed
ENVIRONMENT = "environment"  # the machine running the harness failed: a full disk, no permission

ALL = (BUILD, LOAD, TRANSPORT, TIMEOUT, CRASH, RACE, NUMERIC, PERF, NOT_FIT, UNSUPPORTED, ABSENT, BAD_CASE, ENVIRONMENT)


class CaseFailure(Exception):
    """A classified failure of one case or variant, with a message that says
    what went wrong and what to do."""

    def __init__(self, kind: str, message: str):
        assert kind in ALL, kind
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.delivery: dict | None = None   # as RawRun.delivery, when a farm target gave up on the case

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"

    def with_message(self, message: str) -> "CaseFailure":
        """The same failure, told in other words (a new object: one failure
        may be the result of several variants)."""
        told = CaseFailure(self.kind, message)
        told.delivery = self.delivery
        return told
