"""Final verdicts per lane, read from one or more journals, and the vocabulary reports sort them by.

A lane is named by its journals' session records; several journals of one lane merge in the order
given (a later verdict replaces an earlier one). A case a journal announced in a kernel group but
never judged becomes Missing: a report fails closed on a run that stopped early. Journals hold the
backends' own verdicts; the expectations given are applied here, to each lane's final verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from harness import caseid
from harness.contracts import KERNEL_AXES, load_contract, load_contracts
from harness.errors import CaseIdError, ContractError, JournalError
from harness.expectations import Ledger, Verdict
from harness.journal import (
    CaseRecord,
    ControlRecord,
    EndRecord,
    GroupRecord,
    ResourceRecord,
    SessionRecord,
    from_json,
    read_journal,
)
from harness.report.errors import ReportError
from harness.statuses import Status

CheckKind = Literal["reject", "compile", "run"]
LaneKind = Literal["host", "gpu", "wheels"]

#: Worst wins when one case id has verdicts in several lanes (a check passes only where it passed everywhere).
SEVERITY = {status: rank for rank, status in enumerate((
    Status.PASS, Status.EXPECTED_FAIL, Status.FLAKE, Status.NOT_SUPPORTED, Status.UNEXPECTED_PASS,
    Status.MISSING, Status.FAIL, Status.COMPILE_ERROR, Status.SANITIZER_ERROR, Status.TIMEOUT, Status.CRASH,
))}


@dataclass(frozen=True)
class Lane:
    """One lane's final verdicts (expectations applied), the session it ran in (the last session record holds
    the fingerprint), each case's kernel group as a journal announced it, its positive controls, the
    backends and profiles every session of its journals named, and the resource figures its host lane measured."""

    name: str
    journals: tuple[str, ...]
    session: SessionRecord
    cases: dict[str, Verdict]
    ended: bool
    groups: dict[str, tuple[str, ...]]  # case id -> every case id of the kernel group that ran it
    controls: tuple[ControlRecord, ...] = ()
    backends: tuple[str, ...] = ()
    resources: dict[str, ResourceRecord] = field(default_factory=dict)  # kernel id -> what was measured
    profiles: tuple[str, ...] = ()  # every session's, in first-seen order: a lane merged of pr and full says both

    @property
    def profile(self) -> str:
        """Every profile its sessions ran, as the report and JUnit name them: ``pr, full``."""
        return ", ".join(self.profiles)

    @property
    def kind(self) -> LaneKind:
        return lane_kind(self.name)

    @property
    def tool(self) -> str | None:
        """The compute-sanitizer tool of a ``gpu-<tool>`` lane."""
        if self.kind != "gpu":
            return None
        return self.name.partition("-")[2] or None


def lane_kind(lane: str) -> LaneKind:
    """``gpu`` and ``gpu-<tool>`` launch on a GPU, ``wheels`` checks fresh wheels, every other lane is host-side."""
    if lane == "wheels":
        return "wheels"
    return "gpu" if lane == "gpu" or lane.startswith("gpu-") else "host"


@dataclass(frozen=True)
class Described:
    contract: str
    backend: str
    kind: CheckKind
    kernel: str  # the id of its kernel point (the id without its runtime axes; an id without kernel axes: itself)
    params: tuple[tuple[str, str], ...]


#: Contract id -> its kernel axes, from the contract files a report reads (:func:`use_contracts`).
_KERNEL_AXES: dict[str, frozenset[str]] = {}


def use_contracts(paths: Iterable[Path]) -> None:
    """Take each contract's kernel axes from its file: a family may add its own (Exchange's slicing and output),
    which a case id alone does not tell from its case axes."""
    table = {contract.id: frozenset(contract.kernel_axes) for contract in map(load_contract, paths)}
    if table != _KERNEL_AXES:
        _KERNEL_AXES.clear()
        _KERNEL_AXES.update(table)
        describe.cache_clear()


@lru_cache(maxsize=1)
def _shipped_kernel_axes() -> dict[str, frozenset[str]]:
    """The kernel axes of the contracts folder's files (:func:`harness.contracts.contracts_dir`), when it has any."""
    try:
        return {contract.id: frozenset(contract.kernel_axes) for contract in load_contracts()}
    except ContractError:
        return {}


def kernel_axes(contract: str) -> frozenset[str]:
    """``contract``'s kernel axes: as :func:`use_contracts` read them, else as the contracts folder says, else the
    four every family has."""
    return _KERNEL_AXES.get(contract) or _shipped_kernel_axes().get(contract) or frozenset(KERNEL_AXES)


@lru_cache(maxsize=1 << 21)
def describe(case_id: str) -> Described:
    """Contract, backend, kind of check, kernel point and parameters of an id: a rejection (``reject=``), a
    compile/resource check (kernel axes only) or a run check. Cached: a report asks about each id many times."""
    contract, backend, params = caseid.parse(case_id)
    keys = {key for key, _ in params}
    axes = kernel_axes(contract)
    kind: CheckKind = "reject" if "reject" in keys else "compile" if keys <= axes else "run"
    kernel = [(k, v) for k, v in params if k in axes]
    return Described(contract, backend, kind, caseid.render(contract, backend, list(kernel)) if kernel else case_id,
                     tuple(params))


def rank(record: Verdict) -> tuple[int, bool]:
    """Higher is worse: of one case's verdicts in several lanes the worst speaks; unwaived beats waived."""
    return SEVERITY[record.status], not record.accepted


def is_journal(path: Path) -> bool:
    """Whether ``path`` is a journal: its first line is a session record (other JSON Lines files, like
    a sanitizer lane's launch ledgers, are not)."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = fh.readline()
        return isinstance(from_json(first), SessionRecord)
    except (OSError, UnicodeDecodeError, JournalError, KeyError, TypeError, ValueError):
        return False


def journals_in(folder: Path, recursive: bool = False) -> list[Path]:
    """The journals in ``folder`` (or under it), sorted by path: timestamped names merge oldest first."""
    return [p for p in sorted(folder.rglob("*.jsonl") if recursive else folder.glob("*.jsonl")) if is_journal(p)]


@dataclass
class _Read:
    """What one lane's journals recorded, merged in order, before the expectations are applied."""

    journals: list[str]
    session: SessionRecord
    cases: dict[str, CaseRecord]
    ended: bool
    groups: dict[str, tuple[str, ...]]
    controls: list[ControlRecord]
    backends: dict[str, None]  # every session's, in first-seen order
    resources: dict[str, ResourceRecord]
    profiles: dict[str, None]  # every session's, in first-seen order

    def merge(self, later: _Read) -> None:
        self.journals += later.journals
        self.session, self.ended = later.session, self.ended and later.ended
        self.cases.update(later.cases)
        self.groups.update(later.groups)
        self.controls += later.controls
        self.backends.update(later.backends)
        self.resources.update(later.resources)
        self.profiles.update(later.profiles)


def _read(path: Path, name: str) -> _Read:
    try:
        records = list(read_journal(path))
    except (JournalError, KeyError, TypeError, ValueError) as exc:  # a damaged line that parses as JSON
        raise ReportError(f"{name}: not a harness journal: {exc}") from None
    sessions = [r for r in records if isinstance(r, SessionRecord)]
    if not sessions:
        raise ReportError(f"{name}: no session record: not a harness journal (or an empty one)")
    lanes = {s.lane for s in sessions}
    if len(lanes) > 1:
        raise ReportError(f"{name}: session records of several lanes {sorted(lanes)}: one journal is one lane")
    lane = sessions[0].lane
    cases: dict[str, CaseRecord] = {}
    announced: dict[str, GroupRecord] = {}
    controls: list[ControlRecord] = []
    resources: dict[str, ResourceRecord] = {}
    for record in records:
        if isinstance(record, CaseRecord | ControlRecord | ResourceRecord) and record.lane != lane:
            raise ReportError(f"{name}: {record.TYPE} {record.id} is recorded for lane {record.lane!r} in a "
                              f"{lane!r} journal")
        if isinstance(record, CaseRecord):
            cases[record.id] = record
        elif isinstance(record, ControlRecord):
            controls.append(record)
        elif isinstance(record, GroupRecord):
            announced.update(dict.fromkeys(record.cases, record))
        elif isinstance(record, ResourceRecord):
            resources[record.id] = record
    for case_id in cases.keys() | announced.keys():
        try:
            describe(case_id)
        except CaseIdError as exc:
            raise ReportError(f"{name}: {exc}") from None
    for case_id, group in announced.items():
        if case_id not in cases:
            cases[case_id] = CaseRecord(case_id, Status.MISSING, lane,
                                        f"no verdict: {name} stops inside kernel group {group.kernel}")
    # Ended: the last session reached its end record (verdicts appended later, e.g. sanitizer findings,
    # do not undo that; a resumed run that was cut short again does).
    last_session = max(i for i, r in enumerate(records) if isinstance(r, SessionRecord))
    ended = any(isinstance(r, EndRecord) for r in records[last_session:])
    groups = {case_id: group.cases for case_id, group in announced.items()}
    backends = dict.fromkeys(b for s in sessions for b in s.backends)
    profiles = dict.fromkeys(s.profile for s in sessions)
    return _Read([name], sessions[-1], cases, ended, groups, controls, backends, resources, profiles)


def load_lanes(paths: Sequence[Path], names: Sequence[str] | None = None, ledger: Ledger | None = None) -> list[Lane]:
    """Lanes in first-seen order, their final verdicts resolved by ``ledger`` (none: no expectation applies)
    under each lane's own tags; ``names`` label the journals in messages and reports (default: the paths)."""
    labels = list(names) if names is not None else [str(p) for p in paths]
    if not paths:
        raise ReportError("no journal given: a report needs at least one")
    ledger = ledger or Ledger([])
    merged: dict[str, _Read] = {}
    for path, label in zip(paths, labels, strict=True):
        read = _read(path, label)
        if read.session.lane in merged:
            merged[read.session.lane].merge(read)
        else:
            merged[read.session.lane] = read
    lanes = []
    for name, read in merged.items():
        resolve = ledger.under(read.session.tags).resolve
        lanes.append(Lane(name, tuple(read.journals), read.session, {i: resolve(r) for i, r in read.cases.items()},
                          read.ended, read.groups, tuple(read.controls), tuple(read.backends), read.resources,
                          tuple(read.profiles)))
    return lanes
