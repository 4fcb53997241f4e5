"""The regression diff: this run's final verdicts against the committed baseline, per lane and case id.

New failures (not accepted now; accepted or absent in the baseline) and missing cases (in the baseline,
absent now) are regressions. New failures may be re-run: every kernel group that holds one is run again,
whole (the same cases in the same blocks, with the session's seed and blocks per launch: the identical
launch), several times. A case whose identical runs disagree is a Flake, and an undeclared Flake is a
regression too; a Flake an expectation declares (status ``Flake``, with its bug and expiry) is a known
flake. A new failure that fails every re-run stays a new failure. Lanes the baseline has but this run
lacks are listed, not compared.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.expectations import Ledger, Verdict
from harness.journal import CaseRecord, final_cases, read_journal
from harness.report.baseline import Verdicts
from harness.report.command import check_template, fill
from harness.report.errors import ReportError
from harness.report.verdicts import Lane
from harness.statuses import Status

#: Runs the given case ids of ``lane`` once, as its session ran them; returns the verdicts it recorded.
Rerun = Callable[[Lane, list[str]], dict[str, CaseRecord]]
CATEGORIES = ("new_failures", "missing", "flakes", "still_failing", "fixed", "new_cases", "known_flakes")
#: What a re-run command template may name: the lane and the session values an identical launch needs.
RERUN_PLACEHOLDERS = {"lane", "ids", "journal", "seed", "max_blocks", "profile", "arch"}
DEFAULT_RERUNS = 3


@dataclass(frozen=True)
class Change:
    lane: str
    id: str
    was: str | None  # status in the baseline; None: the case is new
    now: str | None  # status in this run; None: the case is missing
    detail: str = ""


@dataclass
class Reruns:
    """The verdicts of identical re-runs of whole kernel groups: (lane, case id) -> one entry per re-run
    (None: that re-run gave the case no verdict); and the new failures no recorded group holds."""

    times: int = 0
    verdicts: dict[tuple[str, str], list[Verdict | None]] = field(default_factory=dict)
    ungrouped: set[tuple[str, str]] = field(default_factory=set)


@dataclass
class Diff:
    new_failures: list[Change] = field(default_factory=list)
    missing: list[Change] = field(default_factory=list)
    flakes: list[Change] = field(default_factory=list)  # undeclared: a regression
    still_failing: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    new_cases: list[Change] = field(default_factory=list)
    known_flakes: list[Change] = field(default_factory=list)  # declared by an expectation
    unchanged: int = 0
    lanes_not_compared: list[str] = field(default_factory=list)

    @property
    def regression(self) -> bool:
        return bool(self.new_failures or self.missing or self.flakes)

    def to_json(self) -> dict[str, Any]:
        return {"regression": self.regression, **asdict(self)}

    def render(self, limit: int = 20) -> str:
        """Plain text for a terminal: one count line, then at most ``limit`` cases per category."""
        counts = ", ".join(f"{len(getattr(self, c))} {c.replace('_', ' ')}" for c in CATEGORIES)
        lines = [f"{'REGRESSION' if self.regression else 'No regression'}: {counts}, {self.unchanged} unchanged"]
        if self.lanes_not_compared:
            lines.append(f"lanes in the baseline that this run lacks (not compared): "
                         f"{', '.join(self.lanes_not_compared)}")
        for category in CATEGORIES:
            changes = getattr(self, category)
            if changes:
                lines.append(f"{category.replace('_', ' ')}:")
            for change in changes[:limit]:
                was, now = change.was or "(new)", change.now or "(missing)"
                detail = change.detail.splitlines()[0] if change.detail else ""
                lines.append(f"  {change.lane}  {change.id}  {was} -> {now}" + (f"  {detail}" if detail else ""))
            if len(changes) > limit:
                lines.append(f"  ... and {len(changes) - limit} more (--json has them all)")
        return "\n".join(lines)


def _flake(record: Verdict, again: list[Verdict | None]) -> tuple[bool, str] | None:
    """(declared, detail) when the identical runs of a case disagree, or when its one verdict is a Flake an
    expectation declares; None otherwise."""
    runs = [record, *(v for v in again if v is not None)]
    declared = next((v.waiver for v in runs if v.status is Status.FLAKE and v.waiver), None)
    if len({v.status for v in runs}) == 1:
        return (True, f"declared flaky ({declared}): {record.detail}") if declared else None
    first = next(v for v in runs if v.status is not Status.PASS)
    detail = (f"{len(runs)} identical runs disagree: {', '.join(str(v.status) for v in runs)}; "
              f"{first.status}: {first.detail}" + (f" (declared: {declared})" if declared else ""))
    return declared is not None, detail


def _rerun_note(times: int, again: list[Verdict | None] | None, ungrouped: bool) -> str:
    """What the re-runs said of a new failure that stays one."""
    if ungrouped:
        return "not re-run: no kernel group of its journal holds it, so its launch cannot be repeated"
    if again is None:
        return ""
    given = sum(1 for v in again if v is not None)
    if not given:
        return "no verdict from the re-runs"
    return f"failed again in {given} of {times} identical re-runs" + ("" if given == times else
                                                                        f"; {times - given} gave no verdict")


def compare(baseline: Verdicts, lanes: Sequence[Lane], reruns: Reruns | None = None) -> Diff:
    """The diff of ``lanes`` against ``baseline``; ``reruns`` tell Flakes apart (see :func:`rerun_groups`)."""
    reruns = reruns or Reruns()
    diff = Diff(lanes_not_compared=sorted(set(baseline) - {lane.name for lane in lanes}))
    for lane in lanes:
        before = baseline.get(lane.name, {})
        for case_id, record in sorted(lane.cases.items()):
            was = before.get(case_id)
            again = reruns.verdicts.get((lane.name, case_id))
            flake = _flake(record, again or [])
            if flake is not None:
                declared, detail = flake
                change = Change(lane.name, case_id, str(was[0]) if was else None, str(Status.FLAKE), detail)
                (diff.known_flakes if declared else diff.flakes).append(change)
                continue
            change = Change(lane.name, case_id, str(was[0]) if was else None, str(record.status), record.detail)
            if record.accepted:
                if was is None:
                    diff.new_cases.append(change)
                elif was[1]:
                    diff.unchanged += 1
                else:
                    diff.fixed.append(change)
            elif was is None or was[1]:
                note = _rerun_note(reruns.times, again, (lane.name, case_id) in reruns.ungrouped)
                detail = f"{record.detail} ({note})" if record.detail and note else record.detail or note
                diff.new_failures.append(Change(change.lane, change.id, change.was, change.now, detail))
            else:
                diff.still_failing.append(change)
        diff.missing += [Change(lane.name, case_id, str(status), None)
                         for case_id, (status, _) in sorted(before.items()) if case_id not in lane.cases]
    return diff


def rerun_groups(diff: Diff, lanes: Sequence[Lane], rerun: Rerun, ledger: Ledger,
                 times: int = DEFAULT_RERUNS) -> Reruns:
    """Re-run ``times`` times, whole, every kernel group that holds a new failure of ``diff``; each re-run's
    verdicts are resolved by ``ledger`` under the lane's own tags."""
    by_name = {lane.name: lane for lane in lanes}
    out = Reruns(times)
    wanted: dict[str, dict[str, None]] = {}  # lane -> the case ids to re-run, in group order
    for change in diff.new_failures:
        group = by_name[change.lane].groups.get(change.id)
        if group is None:
            out.ungrouped.add((change.lane, change.id))
        else:
            wanted.setdefault(change.lane, {}).update(dict.fromkeys(group))
    for name, ids in wanted.items():
        lane = by_name[name]
        resolve = ledger.under(lane.session.tags).resolve
        runs = [rerun(lane, list(ids)) for _ in range(times)]
        for case_id in ids:
            out.verdicts[name, case_id] = [resolve(run[case_id]) if case_id in run else None for run in runs]
    return out


@dataclass(frozen=True)
class CommandRerun:
    """Re-runs through a command template: ``{lane}``, ``{ids}`` (a file, one id a line), ``{journal}``, and
    the lane's session values ``{seed}``, ``{max_blocks}``, ``{profile}``, ``{arch}`` (an identical launch).

    The command writes its verdicts to ``{journal}``; its exit status is not read (a re-run whose
    cases still fail exits non-zero), only a command that cannot start is an error.
    """

    template: Sequence[str]

    def __post_init__(self) -> None:
        check_template(self.template, RERUN_PLACEHOLDERS, "--rerun")

    def __call__(self, lane: Lane, ids: list[str]) -> dict[str, CaseRecord]:
        with tempfile.TemporaryDirectory() as tmp:
            ids_file, journal = Path(tmp) / "ids.txt", Path(tmp) / "rerun.jsonl"
            ids_file.write_text("".join(i + "\n" for i in ids), encoding="utf-8")
            session = lane.session
            argv = fill(self.template, {"lane": lane.name, "ids": str(ids_file), "journal": str(journal),
                                        "seed": str(session.seed), "max_blocks": str(session.max_blocks),
                                        "profile": session.profile, "arch": session.arch})
            try:
                subprocess.run(argv, check=False)
            except OSError as exc:
                raise ReportError(f"--rerun: cannot start {argv[0]!r}: {exc.strerror}") from None
            if not journal.exists():
                return {}
            try:
                return final_cases(read_journal(journal))
            except HarnessError as exc:
                raise ReportError(f"--rerun: the re-run's journal cannot be read: {exc}") from None
