"""Expectations (waivers) as data: a case-id pattern, the status expected, environment tags, bug, expiry.

Journals hold the backends' own verdicts; :meth:`Ledger.resolve` is the one place an expectation
maps one, for every reader (the run's summary, the pytest items, reports, diff, bundle, verify).
A live entry turns its expected status into ExpectedFail (or a declared NotSupported) and a Pass
into UnexpectedPass; a ``Flake`` entry declares a known flaky case, whose failures become accepted
Flakes. An entry past its expiry waives nothing. Expired entries and live entries that match no
case of a run they apply to are errors, listed together.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field, fields, replace
from fnmatch import fnmatchcase
from pathlib import Path

from harness import caseid
from harness.datafile import read_toml
from harness.errors import ExpectationError
from harness.journal import CaseRecord
from harness.statuses import ACCEPTED, DECLARABLE, EARNED, Status

#: Statuses a verdict may be expected to end in; a Flake entry declares a case that fails intermittently.
EXPECTABLE = (EARNED - {Status.PASS}) | {Status.FLAKE}
#: The verdicts a declared Flake accepts: any failure (a pass is a pass, a NotSupported is no flake).
FLAKY = EARNED - {Status.PASS, Status.NOT_SUPPORTED}
TAG_KEYS = ("backend", "lane", "arch", "toolkit")
FIELDS = {"cases", "status", "tags", "bug", "expires", "reason"}
#: A parameter key a pattern names: ``key=`` at the start of the parameters or after a separator or wildcard.
_NAMED_KEY = re.compile(r"(?:^|[,*?\]])([a-z][a-z0-9_]*)=")


@dataclass(frozen=True)
class Expectation:
    where: str  # file:entry, for messages
    cases: str  # fnmatch pattern over case ids
    status: Status
    tags: dict[str, str]
    bug: str
    expires: dt.date
    reason: str

    @property
    def keys(self) -> frozenset[str]:
        """The parameter keys the pattern names: it can match no case of a contract that lacks one of them."""
        return frozenset(_NAMED_KEY.findall(self.cases.split("/", 2)[-1]))


def _keys(case_id: str) -> set[str]:
    return {param.partition("=")[0] for param in case_id.rsplit("/", 1)[-1].split(",")}


_RECORD_FIELDS = tuple(f.name for f in fields(CaseRecord))


@dataclass(frozen=True)
class Verdict(CaseRecord):
    """A case record as a reader sees it, the expectations applied; only :meth:`Ledger.resolve` makes one."""

    waiver: str | None = None  # bug link of the live expectation that waived or declared it

    @property
    def accepted(self) -> bool:
        """Whether a fail-closed lane accepts it: a pass, an expected failure, a declared NotSupported or Flake."""
        return self.status in ACCEPTED or (self.status in DECLARABLE and self.waiver is not None)


def load_expectations(path: Path, shown: str | None = None) -> list[Expectation]:
    """Parse and validate ``path`` (named ``shown`` in messages); every problem names the entry and the field."""
    data = read_toml(path, ExpectationError)
    name = shown or str(path)
    if data.get("schema") != 1:
        raise ExpectationError(f"{name}: schema: expected 1")
    found = []
    for i, entry in enumerate(data.get("expect", [])):
        where = f"{name}: expect[{i}]"
        missing, unknown = FIELDS - {"tags"} - set(entry), set(entry) - FIELDS
        if missing or unknown:
            raise ExpectationError(f"{where}: missing {sorted(missing)} / unknown {sorted(unknown)} fields")
        for key in ("cases", "reason"):
            if not isinstance(entry[key], str) or not entry[key]:
                what = "a case-id pattern (a string)" if key == "cases" else "a text"
                raise ExpectationError(f"{where}.{key}: expected {what}, got {entry[key]!r}")
        try:
            status = Status(entry["status"])
        except ValueError:
            raise ExpectationError(f"{where}.status: {entry['status']!r} is not one of "
                                   f"{sorted(s.value for s in EXPECTABLE)}") from None
        if status not in EXPECTABLE:
            raise ExpectationError(f"{where}.status: {status} cannot be expected")
        if isinstance(entry["expires"], dt.datetime) or not isinstance(entry["expires"], dt.date):
            raise ExpectationError(f"{where}.expires: expected a TOML date (YYYY-MM-DD)")
        if not str(entry["bug"]).startswith(("http://", "https://")):
            raise ExpectationError(f"{where}.bug: expected a link to the bug")
        tags = entry.get("tags", {})
        if not isinstance(tags, dict):
            raise ExpectationError(f"{where}.tags: expected a table of {', '.join(TAG_KEYS)}, got {tags!r}")
        if set(tags) - set(TAG_KEYS):
            raise ExpectationError(f"{where}.tags: unknown tags {sorted(set(tags) - set(TAG_KEYS))}")
        for key, value in tags.items():
            if not isinstance(value, str):
                raise ExpectationError(f"{where}.tags.{key}: expected a text, got {value!r}")
        found.append(Expectation(where, entry["cases"], status, dict(tags), entry["bug"], entry["expires"],
                                 entry["reason"]))
    return found


@dataclass
class Ledger:
    """Applies expectations to the verdicts of runs tagged ``env``, dated ``today``; remembers what matched.

    :meth:`under` gives the ledger of another run (other tags) that shares what this one matched, so a
    report over several lanes judges every entry over all of them.
    """

    expectations: list[Expectation]
    env: dict[str, str] = field(default_factory=dict)  # lane, arch, toolkit of the run
    today: dt.date = field(default_factory=dt.date.today)
    matched: Counter[str] = field(default_factory=Counter)  # entry -> verdicts whose id it matched
    applicable: set[str] = field(default_factory=set)  # entries that apply to a contract, backend and run seen
    _by_head: dict[tuple[str, str], list[Expectation]] = field(default_factory=dict, init=False, repr=False,
                                                               compare=False)
    #: Per contract and backend, its entries not yet seen to apply: each waits for an id holding every key it names.
    _pending: dict[tuple[str, str], list[Expectation]] = field(default_factory=dict, init=False, repr=False,
                                                               compare=False)

    def under(self, env: dict[str, str]) -> Ledger:
        return Ledger(self.expectations, env, self.today, self.matched, self.applicable)

    def live(self, exp: Expectation) -> bool:
        return exp.expires >= self.today

    def unmatched(self, exp: Expectation) -> bool:
        """A live entry that applies to a run seen but matched none of its cases (stale: an error)."""
        return self.live(exp) and exp.where in self.applicable and not self.matched[exp.where]

    def _tagged(self, contract: str, backend: str) -> list[Expectation]:
        """The entries whose tags match this run and ``backend`` (``"gpu*"``: every gpu lane) and whose pattern
        can name a case of ``contract`` (a run over some contracts leaves the others' entries alone), in file
        order; once per contract and backend: a full run resolves millions of verdicts against the same few."""
        if (contract, backend) not in self._by_head:
            tags = {**self.env, "backend": backend}
            self._by_head[contract, backend] = [
                exp for exp in self.expectations
                if all(fnmatchcase(tags.get(k, ""), v) for k, v in exp.tags.items())
                and fnmatchcase(contract, exp.cases.split("/", 1)[0])]
            self._pending[contract, backend] = list(self._by_head[contract, backend])
        return self._by_head[contract, backend]

    def _matching(self, case_id: str) -> list[Expectation]:
        """The entries whose tags and pattern match ``case_id``, in file order (each remembered)."""
        head = caseid.head(case_id)
        tagged = self._tagged(*head)
        if self._pending[head]:  # a Scan id has no valid=: an entry naming valid_items applies to Load, not to Scan
            keys = _keys(case_id)
            applies = [exp for exp in self._pending[head] if exp.keys <= keys]
            self.applicable.update(exp.where for exp in applies)
            self._pending[head] = [exp for exp in self._pending[head] if exp not in applies]
        found = [exp for exp in tagged if fnmatchcase(case_id, exp.cases)]
        for exp in found:
            self.matched[exp.where] += 1
        return found

    def resolve(self, record: CaseRecord) -> Verdict:
        """``record`` with the first live matching expectation applied (an expired one only leaves a note)."""
        matching = self._matching(record.id)
        verdict = Verdict(**{name: getattr(record, name) for name in _RECORD_FIELDS})
        exp = next((e for e in matching if self.live(e)), None)
        if exp is None:
            if not matching:
                return verdict
            old = matching[0]
            return replace(verdict, detail=_noted(record.detail, f"expectation {old.where} expired on "
                                                                 f"{old.expires}: it waives nothing"))
        if exp.status is Status.FLAKE:
            return replace(verdict, status=Status.FLAKE, waiver=exp.bug) if record.status in FLAKY else verdict
        if record.status is exp.status:
            status = Status.NOT_SUPPORTED if exp.status is Status.NOT_SUPPORTED else Status.EXPECTED_FAIL
            return replace(verdict, status=status, waiver=exp.bug)
        if record.status is Status.PASS:
            return replace(verdict, status=Status.UNEXPECTED_PASS, waiver=exp.bug,
                           detail=f"expected {exp.status} ({exp.bug}), but passed")
        return replace(verdict, detail=_noted(record.detail, f"expected {exp.status} per {exp.bug}"))

    def problems(self, whole_run: bool = True) -> list[str]:
        """Expired entries, and live entries that apply to a run seen but matched none of its cases; only a run of
        whole profiles can show an entry stale, not one of chosen ids (a re-run, a bisect step)."""
        out = [f"{e.where}: expired on {e.expires} ({e.bug}): {e.cases}" for e in self.expectations
               if not self.live(e)]
        if whole_run:
            out += [f"{e.where}: matched no case of this run: {e.cases}" for e in self.expectations
                    if self.unmatched(e)]
        return out


def _noted(detail: str, note: str) -> str:
    return f"{detail} ({note})" if detail else note
