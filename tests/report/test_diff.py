"""The regression diff: its categories, re-running new failures once (Flake), and the command re-runner."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.journal import CaseRecord
from harness.report.baseline import read_baseline, write_baseline
from harness.report.diff import Change, CommandRerun, Diff, compare, rerun_new_failures
from harness.report.errors import ReportError
from harness.report.verdicts import load_lanes
from harness.statuses import Status
from tests.report.journals import case_id

A, B, C, D, E, F, G = (case_id("numba", dtype=d) for d in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                                           "uint32"))


@pytest.fixture
def baseline(journal: Callable[..., Path], tmp_path: Path) -> Path:
    lanes = load_lanes([
        journal("gpu", [(A, Status.PASS), (B, Status.FAIL), (C, Status.PASS), (D, Status.CRASH), (E, Status.PASS)],
                name="base-gpu"),
        journal("gpu-memcheck", [(A, Status.PASS)], name="base-memcheck"),
    ])
    path = tmp_path / "baseline.json"
    write_baseline(lanes, path)
    return path


@pytest.fixture
def now(journal: Callable[..., Path]) -> Path:
    return journal("gpu", [(A, Status.FAIL, "out[0]=1"), (B, Status.PASS), (C, Status.PASS), (D, Status.FAIL),
                           (F, Status.PASS), (G, Status.TIMEOUT)])


def ids(changes: list[Change]) -> list[str]:
    return [c.id for c in changes]


def test_every_category(baseline: Path, now: Path) -> None:
    diff = compare(read_baseline(baseline), load_lanes([now]))
    assert (ids(diff.new_failures), ids(diff.fixed), ids(diff.still_failing), ids(diff.missing),
            ids(diff.new_cases), diff.unchanged) == ([A, G], [B], [D], [E], [F], 1)
    assert [(c.was, c.now) for c in diff.new_failures] == [("Pass", "Fail"), (None, "Timeout")]
    assert (diff.missing[0].was, diff.missing[0].now) == ("Pass", None)
    assert diff.lanes_not_compared == ["gpu-memcheck"]
    assert diff.regression


def test_missing_cases_alone_are_a_regression(baseline: Path, journal: Callable[..., Path]) -> None:
    diff = compare(read_baseline(baseline), load_lanes([journal("gpu", [(A, Status.PASS)])]))
    assert diff.regression and not diff.new_failures and len(diff.missing) == 4


def test_fixed_and_new_passing_cases_are_no_regression(baseline: Path, journal: Callable[..., Path]) -> None:
    path = journal("gpu", [(i, Status.PASS) for i in (A, B, C, D, E, F)])
    assert not compare(read_baseline(baseline), load_lanes([path])).regression


def test_a_new_failure_that_passes_on_its_rerun_is_a_flake(baseline: Path, now: Path) -> None:
    asked: list[tuple[str, list[str]]] = []

    def rerun(lane: str, case_ids: list[str]) -> dict[str, CaseRecord]:
        asked.append((lane, case_ids))
        return {A: CaseRecord(A, Status.PASS, lane), G: CaseRecord(G, Status.TIMEOUT, lane)}

    diff = rerun_new_failures(compare(read_baseline(baseline), load_lanes([now])), rerun)
    assert asked == [("gpu", [A, G])]  # once, new failures only
    assert [(c.id, c.now, c.detail) for c in diff.flakes] == [(A, "Flake", "Fail first (out[0]=1), Pass on re-run")]
    assert [(c.id, c.detail) for c in diff.new_failures] == [(G, "Timeout on re-run")]
    assert diff.regression  # G still fails, and E is still missing


def test_the_diff_renders_counts_and_cases() -> None:
    diff = Diff(new_failures=[Change("gpu", A, "Pass", "Fail", "out[0]=1\nmore")] * 3, unchanged=5)
    text = diff.render(limit=2)
    assert text.splitlines()[0] == ("REGRESSION: 3 new failures, 0 missing, 0 flakes, 0 still failing, 0 fixed, "
                                    "0 new cases, 5 unchanged")
    assert f"  gpu  {A}  Pass -> Fail  out[0]=1" in text
    assert "  ... and 1 more (--json has them all)" in text
    assert diff.to_json()["regression"] is True


RERUN_SCRIPT = """
import sys
from pathlib import Path
from harness.journal import CaseRecord, JournalWriter, SessionRecord
from harness.statuses import Status
lane, ids, journal = sys.argv[1:]
with JournalWriter(Path(journal)) as w:
    w.write(SessionRecord(lane, "pr", 7, ("numba",)))
    for line in Path(ids).read_text().split():
        w.write(CaseRecord(line, Status.PASS, lane))
sys.exit(1)  # the exit status of a re-run is not its verdict
"""


def test_the_command_rerun_reads_the_journal_its_command_writes(baseline: Path, now: Path) -> None:
    rerun = CommandRerun([sys.executable, "-c", RERUN_SCRIPT, "{lane}", "{ids}", "{journal}"])
    diff = rerun_new_failures(compare(read_baseline(baseline), load_lanes([now])), rerun)
    assert ids(diff.flakes) == [A, G] and diff.new_failures == []


def test_a_rerun_that_writes_no_journal_leaves_the_failures(baseline: Path, now: Path) -> None:
    diff = rerun_new_failures(compare(read_baseline(baseline), load_lanes([now])),
                              CommandRerun([sys.executable, "-c", "pass", "{ids}"]))
    assert [c.detail for c in diff.new_failures] == ["out[0]=1 (no verdict from the re-run)",
                                                     "no verdict from the re-run"]


def test_a_rerun_template_with_an_unknown_placeholder_is_refused() -> None:
    with pytest.raises(ReportError, match=r"--rerun: unknown placeholder\(s\) \{case\}; known: \{ids\}"):
        CommandRerun(["run", "{case}"])


def test_a_rerun_command_that_cannot_start_is_an_error(baseline: Path, now: Path) -> None:
    with pytest.raises(ReportError, match="--rerun: cannot start 'no-such-program-here'"):
        rerun_new_failures(compare(read_baseline(baseline), load_lanes([now])),
                           CommandRerun(["no-such-program-here", "{ids}"]))
