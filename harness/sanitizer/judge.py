"""Judging a finished lane folder: each sanitizer record becomes a verdict of its case, or a problem.

A charged case gets a SanitizerError verdict appended to the journal that holds it (the backend's
own verdict: the expectations are applied to the lane's final verdicts, as every reader does), the
lane's first journal gets a record of whether the positive control was seen, and everything else
that must fail the lane is a problem.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.expectations import Ledger, Verdict
from harness.journal import CaseRecord, ControlRecord, EndRecord, JournalWriter, final_cases, read_journal
from harness.sanitizer.attribution import Finding, Launch, Unmapped, attribute, read_launches
from harness.sanitizer.layout import LaneLayout, read_json
from harness.sanitizer.records import SanitizerRecord, SanitizerXmlError, parse_file
from harness.sanitizer.tools import CONTROLS, ERROR_EXITCODE
from harness.session import phase_totals
from harness.statuses import Status

#: Cases listed by name when a lane has more that are not accepted (the rest are counted).
MAX_LISTED = 25


@dataclass(frozen=True)
class Run:
    """One sanitized worker process, from the exit status its wrapper wrote."""

    run: str
    slot: str
    returncode: int


@dataclass
class LaneResult:
    """What a lane found; ``problems`` empty means the lane passed."""

    tool: str
    finals: dict[str, Verdict] = field(default_factory=dict)
    records: int = 0
    charged: dict[str, list[Finding]] = field(default_factory=dict)
    control_records: int = 0
    control_reported: bool = False
    unmapped: int = 0
    problems: list[str] = field(default_factory=list)
    phases: dict[str, dict[str, float]] = field(default_factory=dict)  # per backend: where its time went

    @property
    def lane(self) -> str:
        return f"gpu-{self.tool}"


def judge(layout: LaneLayout, slots: list[str], ledger: Ledger) -> LaneResult:
    """Judge the lane folder written by one session of ``slots``; appends the sanitizer verdicts and the
    control's record.

    Problems: a sanitizer that crashed, wrote no or unreadable XML, or announced findings it did not
    write; an unmapped record (shown in full); the positive control not launched or not reported; a
    case not accepted; an expectation expired or unmatched; no case at all.
    """
    result = LaneResult(layout.tool)
    runs = _runs(layout, slots, result.problems)
    pids = _pids_by_run(layout)
    launches = [launch for path in layout.journals() for launch in read_launches(path)]
    launches += [launch for path in layout.control_ledgers() for launch in read_launches(path, control=True)]
    control = CONTROLS[layout.tool]
    by_case: dict[tuple[Path, str], list[Finding]] = defaultdict(list)
    for run in runs:
        mine = [launch for launch in launches if launch.pid in pids.get(run.run, set())]
        for record in _records(layout, run, mine, result.problems):
            result.records += 1
            outcome = attribute(record, mine) if run.run in pids else Unmapped(
                record, f"no worker process card names run {run.run}")
            if isinstance(outcome, Unmapped):
                result.unmapped += 1
                result.problems.append(f"unmapped sanitizer record ({outcome.reason}), {record.where}:\n"
                                       f"{record.raw}")
                continue
            for target in outcome.targets:
                if target.launch.control:
                    result.control_reported = True
                    result.control_records += 1
                else:
                    by_case[target.launch.ledger, target.case].append(outcome)
    missed = _control_missed(layout.tool, launches, result.control_reported)
    if missed:
        result.problems.append(missed)
    _write_verdicts(by_case, result)
    if layout.journals():  # reports earn the lane's coverage cells only with its control seen
        with JournalWriter(layout.journals()[0]) as writer:
            writer.write(ControlRecord(control.id, result.lane, not missed, result.control_records,
                                       missed or f"{layout.tool} reported it ({control.plants})"))
    result.charged = {case: findings for (_, case), findings in by_case.items()}
    result.finals = {cid: ledger.resolve(record) for path in layout.journals()
                     for cid, record in final_cases(read_journal(path)).items()}
    result.phases = phase_totals(r for path in layout.journals() for r in read_journal(path, kinds=(EndRecord,)))
    _case_problems(result, ledger)
    return result


def _control_missed(tool: str, launches: list[Launch], reported: bool) -> str:
    """Why the lane's positive control does not count as seen ('' when its tool reported it)."""
    control = CONTROLS[tool]
    if not any(launch.control for launch in launches):
        return f"positive control {control.id} never launched (see its item in JUnit)"
    if not reported:
        return (f"positive control {control.id} was launched but {tool} did not report it ({control.plants}): "
                "this lane cannot see what it is meant to check")
    return ""


def _runs(layout: LaneLayout, slots: list[str], problems: list[str]) -> list[Run]:
    runs = []
    for path in layout.statuses():
        data = read_json(path)
        runs.append(Run(str(data["run"]), str(data["slot"]), int(data["returncode"])))
    for slot in sorted(set(slots) - {run.slot for run in runs}):
        problems.append(f"worker slot {slot}: its wrapper left no exit status in {layout.root / 'status'} "
                        "(the worker never started, or it was killed)")
    for run in runs:
        if _never_attached(layout.log(run.run)):
            problems.append(f"compute-sanitizer of run {run.run} never attached to its worker (the worker did not "
                            f"initialize CUDA within --launch-timeout): nothing it ran was checked under "
                            f"{layout.tool}; log: {layout.log(run.run)}")
        elif run.returncode not in (0, ERROR_EXITCODE):
            log = layout.log(run.run)
            if _checked_to_the_end(log):
                problems.append(f"the worker of run {run.run} exited {run.returncode} after compute-sanitizer "
                                "checked it to its end (ERROR SUMMARY: 0 errors): no finding, but a worker that does "
                                f"not end cleanly fails the lane; log: {log}" + _log_tail(log))
            else:
                problems.append(f"compute-sanitizer of run {run.run} exited {run.returncode} (neither 0 nor "
                                f"{ERROR_EXITCODE}): the sanitizer or its worker crashed; log: {log}"
                                + _log_tail(log))
    return runs


def _checked_to_the_end(log: Path) -> bool:
    """Whether the sanitizer's log says its target, not the sanitizer, ended with an error status after a check
    that found nothing (the sanitizer then passes the target's status on)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return False
    return "Target application returned an error" in text and "ERROR SUMMARY: 0 errors" in text


#: What compute-sanitizer logs when a target did not connect within its launch timeout; it then waits for the
#: target to end without checking it, and may exit 0.
NOT_ATTACHED = "No attachable process found"


def _never_attached(log: Path) -> bool:
    try:
        return NOT_ATTACHED in log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _log_tail(path: Path, lines: int = 8) -> str:
    try:
        tail = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return " (no log)"
    return "".join(f"\n    | {line}" for line in tail)


def _pids_by_run(layout: LaneLayout) -> dict[str, set[int]]:
    pids: dict[str, set[int]] = defaultdict(set)
    for path in layout.process_cards():
        card = read_json(path)
        pids[str(card["run"])].add(int(card["pid"]))
    return pids


def _records(layout: LaneLayout, run: Run, launches: list[Launch],
             problems: list[str]) -> list[SanitizerRecord]:
    """The run's records; a missing file is fine only for a clean run that launched nothing."""
    path = layout.xml(run.run)
    if not path.exists():
        if run.returncode != 0 or launches:
            problems.append(f"compute-sanitizer of run {run.run} wrote no XML ({path} is missing) although "
                            f"it exited {run.returncode} after {len(launches)} recorded launch(es)")
        return []
    try:
        records = parse_file(path)
    except SanitizerXmlError as exc:
        problems.append(str(exc))
        return []
    if run.returncode == ERROR_EXITCODE and not records:
        log = layout.log(run.run)
        problems.append(f"compute-sanitizer of run {run.run} exited {ERROR_EXITCODE} (it found something) "
                        f"but {path} holds no record; log: {log}" + _log_tail(log))
    return records


def _write_verdicts(by_case: dict[tuple[Path, str], list[Finding]], result: LaneResult) -> None:
    """Append one SanitizerError verdict per charged case to its journal."""
    journals: dict[Path, list[tuple[str, list[Finding]]]] = defaultdict(list)
    for (journal, case), findings in sorted(by_case.items()):
        journals[journal].append((case, findings))
    for journal, cases in journals.items():
        before = final_cases(read_journal(journal))
        with JournalWriter(journal) as writer:
            for case, findings in cases:
                verdict = _verdict(case, findings, before.get(case), result.lane, result.tool)
                writer.write(verdict)


def _verdict(case: str, findings: list[Finding], before: CaseRecord | None, lane: str,
             tool: str) -> CaseRecord:
    first = findings[0]
    detail = f"{tool}: {len(findings)} record(s); first: {first.record.describe()} [{first.record.where}]"
    if first.note:
        detail += f"; {first.note}"
    if before is not None and before.status is not Status.PASS:
        detail += f"; before the sanitizer's verdict: {before.status}: {before.detail}"
    if before is None:
        return CaseRecord(case, Status.SANITIZER_ERROR, lane, detail)
    return replace(before, status=Status.SANITIZER_ERROR, lane=lane, detail=detail, rules=())


def _case_problems(result: LaneResult, ledger: Ledger) -> None:
    if not result.finals:
        result.problems.append("no case ran: a lane that ran nothing fails")
    rejected = [r for r in result.finals.values() if not r.accepted]
    for record in rejected[:MAX_LISTED]:
        result.problems.append(f"{record.status}: {record.id}: {record.detail}")
    if len(rejected) > MAX_LISTED:
        result.problems.append(f"... and {len(rejected) - MAX_LISTED} more case(s) not accepted")
    result.problems += [f"expectation: {problem}" for problem in ledger.problems()]
