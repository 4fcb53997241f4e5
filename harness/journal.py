"""The crash-safe results journal: JSON Lines of frozen, versioned, type-tagged records.

One pair of functions writes and reads it (:class:`JournalWriter`, :func:`read_journal`). Each
line is flushed as it is written, so a process killed mid-run loses at most the line it was
writing; the reader drops a torn last line and says so. A case record holds the backend's own
verdict: waivers are applied by readers, from the expectations file they are given.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any, ClassVar

from harness.errors import JournalError
from harness.statuses import EARNED, Status

SCHEMA = 1


@dataclass(frozen=True)
class SessionRecord:
    """Start of one run: what an identical re-run needs (lane, profile, seed, arch, blocks per launch),
    the toolkit tag expectations match on, and the environment fingerprint."""

    TYPE: ClassVar[str] = "session"
    lane: str
    profile: str
    seed: int
    backends: tuple[str, ...]
    env: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)
    arch: str = "sm_90"
    max_blocks: int = 4096
    toolkit: str = ""

    @property
    def tags(self) -> dict[str, str]:
        """The environment tags of this run that expectations match on (besides each case's backend)."""
        return {"lane": self.lane, "arch": self.arch, "toolkit": self.toolkit}


@dataclass(frozen=True)
class GroupRecord:
    """A kernel group is about to run: a crash or hang before its cases land is charged to it."""

    TYPE: ClassVar[str] = "group"
    kernel: str
    cases: tuple[str, ...]
    pid: int = field(default_factory=os.getpid)


@dataclass(frozen=True)
class LaunchRecord:
    """The launch ledger: which cases rode in which kernel launch (sanitizer attribution)."""

    TYPE: ClassVar[str] = "launch"
    kernel_name: str
    cases: tuple[str, ...]
    seq: int
    pid: int = field(default_factory=os.getpid)
    blocks: tuple[int, ...] = ()  # index into ``cases`` per block of the grid; empty: block b runs cases[b]


@dataclass(frozen=True)
class CaseRecord:
    """The backend's own verdict of one case in one lane (one of ``statuses.EARNED``)."""

    TYPE: ClassVar[str] = "case"
    id: str
    status: Status
    lane: str
    detail: str = ""
    rules: tuple[str, ...] = ()
    seed: int | None = None
    artifact: str | None = None
    seconds: float = 0.0
    attempt: int = 1


@dataclass(frozen=True)
class ControlRecord:
    """A sanitizer lane's planted positive control: whether its tool reported it in this run."""

    TYPE: ClassVar[str] = "control"
    id: str  # the control's id, e.g. control/racecheck/shared-race
    lane: str
    seen: bool
    records: int = 0  # the tool's records on it
    detail: str = ""


@dataclass(frozen=True)
class EndRecord:
    """A run that ended normally (its absence means the run was cut short)."""

    TYPE: ClassVar[str] = "end"
    counts: dict[str, int]
    time: float = field(default_factory=time.time)
    #: Seconds per backend and phase: startup (imports, adapter activation), compile, inspect, build (inputs),
    #: launch (device work and copies), judge, journal; where a slow lane spent its time.
    phases: dict[str, dict[str, float]] = field(default_factory=dict)


Record = SessionRecord | GroupRecord | LaunchRecord | CaseRecord | ControlRecord | EndRecord
_TYPES: dict[str, type[Any]] = {t.TYPE: t for t in (SessionRecord, GroupRecord, LaunchRecord, CaseRecord,
                                                      ControlRecord, EndRecord)}
#: How a case line of an older schema-1 journal, which recorded waived statuses, is read: the backend's
#: own verdict of an UnexpectedPass was a Pass; that of an ExpectedFail was not kept, so it is read as a
#: Fail (only a live expectation of a Fail waives it again). Its ``waiver`` field is ignored.
_WAIVED_BEFORE = {Status.UNEXPECTED_PASS: (Status.PASS, ""),
                  Status.EXPECTED_FAIL: (Status.FAIL, " (read as Fail: an older harness recorded ExpectedFail, "
                                                      "not the backend's own status)")}


def to_json(record: Record) -> str:
    """One journal line; a case record must hold a status the backend earned (never a waived one)."""
    if type(record) is not _TYPES.get(record.TYPE):
        raise JournalError(f"{type(record).__name__} is not a journal record: journals hold what a run recorded")
    if isinstance(record, CaseRecord) and record.status not in EARNED:
        raise JournalError(f"{record.id}: {record.status} is not a status a backend earns; a journal records "
                           f"one of {', '.join(sorted(EARNED))} and readers apply the expectations")
    body = {"v": SCHEMA, "type": record.TYPE, **asdict(record)}
    return json.dumps(body, sort_keys=False, separators=(",", ":"), default=str)


def from_json(line: str, where: str = "journal") -> Record:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise JournalError(f"{where}: not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("v") != SCHEMA:
        raise JournalError(f"{where}: not a schema-{SCHEMA} journal record")
    kind = _TYPES.get(data.pop("type", None))
    data.pop("v")
    if kind is None:
        raise JournalError(f"{where}: unknown record type")
    if kind is CaseRecord:
        data.pop("waiver", None)  # written by older harnesses; readers recompute every waiver
    names = {f.name for f in fields(kind)}
    if set(data) - names:
        raise JournalError(f"{where}: unknown fields {sorted(set(data) - names)} for {kind.TYPE}")
    for key, value in data.items():
        if isinstance(value, list):
            data[key] = tuple(value)
    try:
        if kind is CaseRecord:
            status = Status(data["status"])
            status, note = _WAIVED_BEFORE.get(status, (status, ""))
            data["status"], data["detail"] = status, data.get("detail", "") + note
        record: Record = kind(**data)
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"{where}: malformed {kind.TYPE} record: {exc}") from None
    return record


def _drop_torn_tail(path: Path) -> None:
    """Cut a partial last line (a writer killed mid-line) so appended records start on a line of their own."""
    if not path.exists():
        return
    with path.open("rb+") as fh:
        data = fh.read()
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)


class JournalWriter:
    """Appends records, one flushed line each; open with ``with``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        _drop_torn_tail(path)
        self._fh: IO[str] = path.open("a", encoding="utf-8")

    def write(self, record: Record) -> None:
        self._fh.write(to_json(record) + "\n")
        self._fh.flush()

    def sync(self) -> None:
        """Force to disk (at group boundaries: survives more than a process kill)."""
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_journal(path: Path) -> Iterator[Record]:
    """Every record of ``path``; a torn final line (killed writer) is skipped, any other bad line raises."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError as exc:
        raise JournalError(f"{path}: cannot read: {exc.strerror}") from None
    last = len(lines) - 1
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield from_json(line, f"{path}:{number}")
        except JournalError:
            if number - 1 == last:  # no newline after it: the writer died mid-line
                return
            raise


def final_cases(records: Iterator[Record] | list[Record]) -> dict[str, CaseRecord]:
    """The last verdict per case id (a re-run or resumed attempt replaces earlier ones)."""
    return {r.id: r for r in records if isinstance(r, CaseRecord)}
