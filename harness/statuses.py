"""Case statuses (DESIGN.md) and which of them a lane counts as success."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    PASS = "Pass"
    FAIL = "Fail"
    COMPILE_ERROR = "CompileError"
    CRASH = "Crash"
    TIMEOUT = "Timeout"
    SANITIZER_ERROR = "SanitizerError"
    NOT_SUPPORTED = "NotSupported"
    EXPECTED_FAIL = "ExpectedFail"
    UNEXPECTED_PASS = "UnexpectedPass"
    FLAKE = "Flake"
    MISSING = "Missing"


#: Statuses a backend earns: the only ones a journal records (readers apply the expectations).
EARNED = frozenset({Status.PASS, Status.FAIL, Status.COMPILE_ERROR, Status.CRASH, Status.TIMEOUT,
                    Status.SANITIZER_ERROR, Status.NOT_SUPPORTED})
#: Statuses a strict (fail-closed) lane accepts; NotSupported and Flake only when an expectation declares them.
ACCEPTED = frozenset({Status.PASS, Status.EXPECTED_FAIL})
DECLARABLE = frozenset({Status.NOT_SUPPORTED, Status.FLAKE})
