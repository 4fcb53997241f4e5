"""Expectations (waivers) as data: a case-id pattern, the status expected, environment tags, bug, expiry.

An expectation maps a matching verdict: the expected status becomes ExpectedFail (or a declared
NotSupported), a Pass becomes UnexpectedPass. Expired entries and entries that match no case of a
run they apply to are errors, listed together.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path

from harness import caseid
from harness.datafile import read_toml
from harness.errors import ExpectationError
from harness.journal import CaseRecord
from harness.statuses import Status

EXPECTABLE = {Status.FAIL, Status.COMPILE_ERROR, Status.CRASH, Status.TIMEOUT, Status.SANITIZER_ERROR,
              Status.NOT_SUPPORTED}
TAG_KEYS = ("backend", "lane", "arch", "toolkit")
FIELDS = {"cases", "status", "tags", "bug", "expires", "reason"}


@dataclass(frozen=True)
class Expectation:
    where: str  # file:entry, for messages
    cases: str  # fnmatch pattern over case ids
    status: Status
    tags: dict[str, str]
    bug: str
    expires: dt.date
    reason: str


def load_expectations(path: Path) -> list[Expectation]:
    """Parse and validate ``path``; every problem names the entry and the field."""
    data = read_toml(path, ExpectationError)
    if data.get("schema") != 1:
        raise ExpectationError(f"{path}: schema: expected 1")
    found = []
    for i, entry in enumerate(data.get("expect", [])):
        where = f"{path}: expect[{i}]"
        missing, unknown = FIELDS - {"tags"} - set(entry), set(entry) - FIELDS
        if missing or unknown:
            raise ExpectationError(f"{where}: missing {sorted(missing)} / unknown {sorted(unknown)} fields")
        try:
            status = Status(entry["status"])
        except ValueError:
            raise ExpectationError(f"{where}.status: {entry['status']!r} is not one of "
                                   f"{sorted(s.value for s in EXPECTABLE)}") from None
        if status not in EXPECTABLE:
            raise ExpectationError(f"{where}.status: {status} cannot be expected")
        if not isinstance(entry["expires"], dt.date):
            raise ExpectationError(f"{where}.expires: expected a TOML date (YYYY-MM-DD)")
        if not str(entry["bug"]).startswith(("http://", "https://")):
            raise ExpectationError(f"{where}.bug: expected a link to the bug")
        tags = entry.get("tags", {})
        if set(tags) - set(TAG_KEYS):
            raise ExpectationError(f"{where}.tags: unknown tags {sorted(set(tags) - set(TAG_KEYS))}")
        found.append(Expectation(where, entry["cases"], status, dict(tags), entry["bug"], entry["expires"],
                                 entry["reason"]))
    return found


@dataclass
class Ledger:
    """Applies expectations to verdicts and remembers which entries matched."""

    expectations: list[Expectation]
    env: dict[str, str]  # lane, arch, toolkit of this run
    matched: set[str] = field(default_factory=set)
    backends_seen: set[str] = field(default_factory=set)

    def _applies(self, exp: Expectation, backend: str) -> bool:
        tags = {**self.env, "backend": backend}
        return all(tags.get(k) == v for k, v in exp.tags.items())

    def match(self, case_id: str) -> Expectation | None:
        """The first expectation that applies to ``case_id`` (remembered as matched)."""
        backend = caseid.parse(case_id)[1]
        self.backends_seen.add(backend)
        for exp in self.expectations:
            if self._applies(exp, backend) and fnmatchcase(case_id, exp.cases):
                self.matched.add(exp.where)
                return exp
        return None

    def resolve(self, record: CaseRecord) -> CaseRecord:
        exp = self.match(record.id)
        if exp is not None:
            if record.status is exp.status:
                status = Status.NOT_SUPPORTED if exp.status is Status.NOT_SUPPORTED else Status.EXPECTED_FAIL
                return replace(record, status=status, waiver=exp.bug)
            if record.status is Status.PASS:
                return replace(record, status=Status.UNEXPECTED_PASS, waiver=exp.bug,
                               detail=f"expected {exp.status} ({exp.bug}), but passed")
            return replace(record, detail=f"{record.detail} (expected {exp.status} per {exp.bug})")
        return record

    def problems(self, today: dt.date | None = None) -> list[str]:
        """Expired entries, and applicable entries that matched nothing in this run."""
        today = today or dt.date.today()
        out = [f"{e.where}: expired on {e.expires} ({e.bug}): {e.cases}" for e in self.expectations
               if e.expires < today]
        out += [f"{e.where}: matched no case of this run: {e.cases}" for e in self.expectations
                if e.where not in self.matched and e.expires >= today
                and any(self._applies(e, b) for b in self.backends_seen)]
        return out
