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


#: Statuses a strict (fail-closed) lane accepts; NotSupported is accepted only when declared.
ACCEPTED = frozenset({Status.PASS, Status.EXPECTED_FAIL})
