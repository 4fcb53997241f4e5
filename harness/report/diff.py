"""The regression diff: this run's final verdicts against the committed baseline, per lane and case id.

New failures (not accepted now; accepted or absent in the baseline) and missing cases (in the baseline,
absent now) are regressions. A new failure may be re-run once: a case that then passes is a Flake,
not a regression. Lanes the baseline has but this run lacks are listed, not compared.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.journal import CaseRecord, final_cases, read_journal
from harness.report.baseline import Verdicts
from harness.report.command import check_template, fill
from harness.report.errors import ReportError
from harness.report.verdicts import Lane
from harness.statuses import Status

#: Re-runs the given case ids of one lane once; returns the verdicts it got (a case may lack one).
Rerun = Callable[[str, list[str]], dict[str, CaseRecord]]
CATEGORIES = ("new_failures", "missing", "flakes", "still_failing", "fixed", "new_cases")
RERUN_PLACEHOLDERS = {"lane", "ids", "journal"}


@dataclass(frozen=True)
class Change:
    lane: str
    id: str
    was: str | None  # status in the baseline; None: the case is new
    now: str | None  # status in this run; None: the case is missing
    detail: str = ""


@dataclass
class Diff:
    new_failures: list[Change] = field(default_factory=list)
    missing: list[Change] = field(default_factory=list)
    flakes: list[Change] = field(default_factory=list)
    still_failing: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    new_cases: list[Change] = field(default_factory=list)
    unchanged: int = 0
    lanes_not_compared: list[str] = field(default_factory=list)

    @property
    def regression(self) -> bool:
        return bool(self.new_failures or self.missing)

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


def compare(baseline: Verdicts, lanes: Sequence[Lane]) -> Diff:
    diff = Diff(lanes_not_compared=sorted(set(baseline) - {lane.name for lane in lanes}))
    for lane in lanes:
        before = baseline.get(lane.name, {})
        for case_id, record in sorted(lane.cases.items()):
            was = before.get(case_id)
            change = Change(lane.name, case_id, str(was[0]) if was else None, str(record.status), record.detail)
            if was is None:
                (diff.new_cases if record.accepted else diff.new_failures).append(change)
            elif was[1]:
                if record.accepted:
                    diff.unchanged += 1
                else:
                    diff.new_failures.append(change)
            elif record.accepted:
                diff.fixed.append(change)
            else:
                diff.still_failing.append(change)
        diff.missing += [Change(lane.name, case_id, str(status), None)
                         for case_id, (status, _) in sorted(before.items()) if case_id not in lane.cases]
    return diff


def rerun_new_failures(diff: Diff, rerun: Rerun) -> Diff:
    """Re-run each new failure once; one accepted on the re-run becomes a Flake."""
    by_lane: dict[str, list[Change]] = {}
    for change in diff.new_failures:
        by_lane.setdefault(change.lane, []).append(change)
    still: list[Change] = []
    flakes: list[Change] = []
    for lane, changes in by_lane.items():
        again = rerun(lane, [c.id for c in changes])
        for change in changes:
            verdict = again.get(change.id)
            if verdict is not None and verdict.accepted:
                flakes.append(replace(change, now=str(Status.FLAKE),
                                      detail=f"{change.now} first ({change.detail}), {verdict.status} on re-run"))
            else:
                second = f"{verdict.status} on re-run" if verdict else "no verdict from the re-run"
                still.append(replace(change, detail=f"{change.detail} ({second})" if change.detail else second))
    return replace(diff, new_failures=still, flakes=diff.flakes + flakes)


@dataclass(frozen=True)
class CommandRerun:
    """Re-runs through a command template: ``{lane}``, ``{ids}`` (a file, one id a line), ``{journal}``.

    The command writes its verdicts to ``{journal}``; its exit status is not read (a re-run whose
    cases still fail exits non-zero), only a command that cannot start is an error.
    """

    template: Sequence[str]

    def __post_init__(self) -> None:
        check_template(self.template, RERUN_PLACEHOLDERS, "--rerun")

    def __call__(self, lane: str, ids: list[str]) -> dict[str, CaseRecord]:
        with tempfile.TemporaryDirectory() as tmp:
            ids_file, journal = Path(tmp) / "ids.txt", Path(tmp) / "rerun.jsonl"
            ids_file.write_text("".join(i + "\n" for i in ids), encoding="utf-8")
            argv = fill(self.template, {"lane": lane, "ids": str(ids_file), "journal": str(journal)})
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
