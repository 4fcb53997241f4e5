"""Case statuses (DESIGN.md) and which of them a lane counts as success."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
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

    def __str__(self) -> str:
        return self.value


#: Statuses a strict (fail-closed) lane accepts; NotSupported is accepted only when declared.
ACCEPTED = frozenset({Status.PASS, Status.EXPECTED_FAIL})
