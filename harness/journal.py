"""The crash-safe results journal: JSON Lines of frozen, versioned, type-tagged records.

One pair of functions writes and reads it (:class:`JournalWriter`, :func:`read_journal`). Each
line is flushed as it is written, so a process killed mid-run loses at most the line it was
writing; the reader drops a torn last line. A journal has one writer at a time (:class:`JournalLock`).
The reader checks every field's type against its record's annotations, so a damaged line is named,
never carried into a report. A case record holds the backend's own verdict: waivers are applied by
readers, from the expectations file they are given.
"""

from __future__ import annotations

import enum
import fcntl
import json
import os
import reprlib
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any, ClassVar, Union, get_args, get_origin, get_type_hints

from harness.datafile import decoded
from harness.errors import JournalError
from harness.statuses import EARNED, Status

SCHEMA = 1


@dataclass(frozen=True)
class SessionRecord:
    """Start of one run: what an identical re-run needs (lane, profile, seed, arch, blocks per launch),
    the toolkit tag expectations match on, the environment fingerprint, and what a resume must share with
    it besides: the shard (k, n), the sha256 of the contract files, of the expectations file and of the group
    costs that balanced the shards; and the GPU its worker saw (a resume may run on another)."""

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
    shard: tuple[int, int] = (1, 1)
    contracts_sha256: str = ""
    expectations_sha256: str = ""  # "" when the run applied no expectations file
    balance_sha256: str = ""  # of the measured group costs that assigned groups to shards; "": contiguous slices
    gpu: str = ""  # CUDA_VISIBLE_DEVICES as the worker saw it ("": not set, every device visible)

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
class ResourceRecord:
    """What the host lane measured in one kernel's final cubin, so a report can show the figures its compile
    check judged: shared bytes (static + dynamic), registers, barriers, local and stack bytes, and for each
    opcode pattern the contract forbids that kernel, how many instructions match it (0: none found)."""

    TYPE: ClassVar[str] = "resources"
    id: str  # the kernel id: the id of the compile check
    lane: str
    sha256: str  # of the cubin, as the compile check's artifact
    figures: dict[str, int]
    forbidden: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class EndRecord:
    """A run that ended normally (its absence means the run was cut short)."""

    TYPE: ClassVar[str] = "end"
    counts: dict[str, int]
    time: float = field(default_factory=time.time)
    #: Seconds per backend and phase: startup (imports, adapter activation), compile, inspect, build (inputs),
    #: launch (device work and copies), judge, journal; where a slow lane spent its time.
    phases: dict[str, dict[str, float]] = field(default_factory=dict)


Record = SessionRecord | GroupRecord | LaunchRecord | CaseRecord | ControlRecord | ResourceRecord | EndRecord
_TYPES: dict[str, type[Any]] = {t.TYPE: t for t in (SessionRecord, GroupRecord, LaunchRecord, CaseRecord,
                                                      ControlRecord, ResourceRecord, EndRecord)}
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
    # shallow: every field is JSON as it is, and asdict would copy each tuple element by element (a launch
    # record names thousands of blocks; most of a case record's cost)
    body = {"v": SCHEMA, "type": record.TYPE, **{f.name: getattr(record, f.name) for f in fields(record)}}
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
    names = _NAMES[kind]
    if set(data) - names:
        raise JournalError(f"{where}: unknown fields {sorted(set(data) - names)} for {kind.TYPE}")
    checks = _CHECKS[kind]
    for key, value in data.items():
        if isinstance(value, list):
            data[key] = value = tuple(value)
        if not checks[key](value):
            raise JournalError(f"{where}: malformed {kind.TYPE} record: field {key}: expected "
                               f"{_shown(_HINTS[kind][key])}, got {reprlib.repr(value)}")
    try:
        if kind is CaseRecord:
            status = Status(data["status"])
            status, note = _WAIVED_BEFORE.get(status, (status, ""))
            data["status"], data["detail"] = status, data.get("detail", "") + note
        record: Record = kind(**data)
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"{where}: malformed {kind.TYPE} record: {exc}") from None
    return record


Check = Callable[[Any], bool]


def _check(hint: Any) -> Check:
    """A test of whether a value read from JSON (arrays as tuples) fits a record field annotated ``hint``; built
    once per field, since the reader runs it on every field of every line."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return lambda value: True
    if origin in (Union, types.UnionType):
        alternatives = [_check(arg) for arg in args]
        return lambda value: any(check(value) for check in alternatives)
    if hint is type(None):
        return lambda value: value is None
    if hint is bool:
        return lambda value: isinstance(value, bool)
    if hint in (int, float):  # a float field takes a JSON integer too; neither takes true or false
        kinds = int if hint is int else (int, float)
        return lambda value: isinstance(value, kinds) and not isinstance(value, bool)
    if hint is str or (isinstance(hint, type) and issubclass(hint, enum.StrEnum)):
        return lambda value: isinstance(value, str)  # an enum's members are checked where the value is converted
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _check(args[0])
        return lambda value: isinstance(value, tuple) and all(map(item, value))
    if origin is tuple:
        items = [_check(arg) for arg in args]
        return lambda value: (isinstance(value, tuple) and len(value) == len(items)
                              and all(check(v) for check, v in zip(items, value, strict=True)))
    if origin is dict:
        key, item = _check(args[0]), _check(args[1])
        return lambda value: isinstance(value, dict) and all(key(k) and item(v) for k, v in value.items())
    raise TypeError(f"the journal reader checks no field annotated {hint!r}: teach harness.journal._check about it")


def _shown(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) and not get_args(hint) else str(hint).replace("typing.", "")


#: Each record type's fields: their annotations, and the check the reader runs on every value read for them.
_HINTS = {kind: get_type_hints(kind) for kind in _TYPES.values()}
_CHECKS = {kind: {name: _check(hint) for name, hint in hints.items() if name != "TYPE"}
           for kind, hints in _HINTS.items()}
_NAMES = {kind: frozenset(f.name for f in fields(kind)) for kind in _TYPES.values()}


def _drop_torn_tail(path: Path) -> None:
    """Cut a partial last line (a writer killed mid-line) so appended records start on a line of their own."""
    if not path.exists():
        return
    with path.open("rb+") as fh:
        data = fh.read()
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)


def append_line(path: Path, line: str) -> None:
    """Append ``line`` as one write, forced to disk, under the file's lock, a torn tail cut first: the
    crash-safe append of a JSON-lines file that has no long-lived writer (the nightly history)."""
    lock = JournalLock(path)
    try:
        _drop_torn_tail(path)
        os.write(lock.fd, (line + "\n").encode())
        os.fsync(lock.fd)
    finally:
        lock.release()


class JournalLock:
    """The one-writer right to a journal: an exclusive ``flock`` on it, which the kernel drops with the last
    process holding it, so a killed writer never blocks the next one. A supervisor hands its lock to its
    worker as an inherited descriptor (``fd``): the journal stays locked while either of them lives."""

    def __init__(self, path: Path, fd: int | None = None) -> None:
        self.path = path
        if fd is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        else:
            try:
                held, named = os.fstat(fd), os.stat(path)
            except OSError as exc:
                raise JournalError(f"{path}: lock descriptor {fd}: {exc.strerror}") from None
            if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
                raise JournalError(f"{path}: lock descriptor {fd} is not open on this journal")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # on a descriptor that holds the lock: a no-op
        except BlockingIOError:
            os.close(fd)
            raise JournalError(f"{path}: another writer holds this journal (a run, or the worker of one, still "
                               "writes it): one writer at a time") from None
        self.fd = fd

    def release(self) -> None:
        os.close(self.fd)


class JournalWriter:
    """Appends records, one flushed line each, holding the journal's lock (its own, or ``lock``); open with
    ``with``."""

    def __init__(self, path: Path, lock: JournalLock | None = None) -> None:
        self.path = path
        self._lock = lock or JournalLock(path)
        self._own_lock = lock is None
        try:
            _drop_torn_tail(path)
            self._fh: IO[str] = path.open("a", encoding="utf-8")
        except BaseException:
            self._release()
            raise

    def write(self, record: Record) -> None:
        self._fh.write(to_json(record) + "\n")
        self._fh.flush()

    def sync(self) -> None:
        """Force to disk (at group boundaries: survives more than a process kill)."""
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()
        self._release()

    def _release(self) -> None:
        if self._own_lock:
            self._lock.release()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_journal(path: Path, kinds: tuple[type[Any], ...] | None = None) -> Iterator[Record]:
    """Every record of ``path`` (only those of ``kinds``, when given); a torn final line (killed writer: cut
    anywhere, even inside a character) is skipped, any other bad line raises, naming it.

    With ``kinds``, a line that :func:`to_json` wrote for another kind is skipped unparsed: a full run's summary
    reads millions of case records past a launch ledger of tens of thousands of long lines."""
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise JournalError(f"{path}: cannot read: {exc.strerror}") from None
    skipped = _prefixes(set(_TYPES.values()) - set(kinds)) if kinds is not None else ()
    last = len(lines)
    for number, line in enumerate(lines, 1):
        if not line.strip() or (skipped and line.startswith(skipped) and number != last):
            continue
        where = f"{path}:{number}"
        try:
            record = from_json(decoded(line, where, JournalError), where)
        except JournalError:
            if number == last:  # no newline after it: the writer died mid-line
                return
            raise
        if kinds is None or isinstance(record, kinds):
            yield record


def _prefixes(kinds: set[type[Any]]) -> tuple[bytes, ...]:
    """How :func:`to_json` begins a line of each of ``kinds``."""
    return tuple(f'{{"v":{SCHEMA},"type":"{kind.TYPE}",'.encode() for kind in kinds)


def journal_ended(path: Path) -> bool:
    """Whether the last complete record of ``path`` is an :class:`EndRecord`, read from the file's end only (a
    supervisor asks this of each shard's journal, which may hold millions of lines)."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            tail, step = b"", 1 << 16
            while size and tail.count(b"\n") < 2 and len(tail) < size:
                fh.seek(max(0, size - len(tail) - step))
                tail = fh.read(min(step, size - len(tail))) + tail
    except FileNotFoundError:
        return False
    lines = [line for line in tail.split(b"\n") if line.strip()]
    if tail and not tail.endswith(b"\n") and lines:
        lines.pop()  # a torn last line: the record before it decides
    if not lines:
        return False
    try:
        return isinstance(from_json(decoded(lines[-1], str(path), JournalError), str(path)), EndRecord)
    except JournalError:
        return False


def final_cases(records: Iterator[Record] | list[Record]) -> dict[str, CaseRecord]:
    """The last verdict per case id (a re-run or resumed attempt replaces earlier ones)."""
    return {r.id: r for r in records if isinstance(r, CaseRecord)}
