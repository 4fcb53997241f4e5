"""The crash-safe results journal: JSON Lines of frozen, versioned, type-tagged records.

One pair of functions writes and reads it (:class:`JournalWriter`, :func:`read_journal`). Each
line is flushed as it is written, so a process killed mid-run loses at most the line it was
writing; the reader drops a torn last line and says so.
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
from harness.statuses import ACCEPTED, Status

SCHEMA = 1


@dataclass(frozen=True)
class SessionRecord:
    """Start of one run: lane, profile, global seed, environment fingerprint."""

    TYPE: ClassVar[str] = "session"
    lane: str
    profile: str
    seed: int
    backends: tuple[str, ...]
    env: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)


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
    """The verdict of one case in one lane."""

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
    waiver: str | None = None  # bug link of the expectation that matched, if any

    @property
    def accepted(self) -> bool:
        """Whether a fail-closed lane accepts it: a pass, an expected failure, or a declared NotSupported."""
        return self.status in ACCEPTED or (self.status is Status.NOT_SUPPORTED and self.waiver is not None)


@dataclass(frozen=True)
class EndRecord:
    """A run that ended normally (its absence means the run was cut short)."""

    TYPE: ClassVar[str] = "end"
    counts: dict[str, int]
    time: float = field(default_factory=time.time)


Record = SessionRecord | GroupRecord | LaunchRecord | CaseRecord | EndRecord
_TYPES: dict[str, type[Any]] = {t.TYPE: t for t in (SessionRecord, GroupRecord, LaunchRecord, CaseRecord, EndRecord)}


def to_json(record: Record) -> str:
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
    names = {f.name for f in fields(kind)}
    if set(data) - names:
        raise JournalError(f"{where}: unknown fields {sorted(set(data) - names)} for {kind.TYPE}")
    for key, value in data.items():
        if isinstance(value, list):
            data[key] = tuple(value)
    try:
        if kind is CaseRecord:
            data["status"] = Status(data["status"])
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
