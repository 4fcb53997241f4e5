"""The regression diff: its categories, identical re-runs of whole groups (Flake), and the command re-runner."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.expectations import Ledger, load_expectations
from harness.journal import CaseRecord, EndRecord, GroupRecord, JournalWriter, SessionRecord
from harness.report.baseline import read_baseline, write_baseline
from harness.report.diff import Change, CommandRerun, Diff, Rerun, compare, rerun_groups
from harness.report.errors import ReportError
from harness.report.verdicts import Lane, load_lanes
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
def now(journal: Callable[..., Path], tmp_path: Path) -> Path:
    """A and G are new failures, in the kernel groups [A, B, C] and [F, G]; the session ran with seed 7,
    16 blocks per launch, for sm_90a."""
    path = tmp_path / "now.jsonl"
    with JournalWriter(path) as writer:
        writer.write(SessionRecord("gpu", "pr", 7, ("numba",), arch="sm_90a", max_blocks=16))
        writer.write(GroupRecord("k1", (A, B, C)))
        writer.write(GroupRecord("k2", (F, G)))
        for case_id, status, detail in ((A, Status.FAIL, "out[0]=1"), (B, Status.PASS, ""), (C, Status.PASS, ""),
                                        (D, Status.FAIL, ""), (F, Status.PASS, ""), (G, Status.TIMEOUT, "")):
            writer.write(CaseRecord(case_id, status, "gpu", detail))
        writer.write(EndRecord({}))
    return path


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


Verdicts = dict[str, Status]


def fake(*runs: Verdicts) -> tuple[Rerun, list[tuple[str, list[str]]]]:
    """A re-runner whose n-th run gives ``runs[n]`` (a status per id; an id it lacks gets no verdict)."""
    asked: list[tuple[str, list[str]]] = []

    def rerun(lane: Lane, case_ids: list[str]) -> dict[str, CaseRecord]:
        statuses = runs[len(asked)]
        asked.append((lane.name, case_ids))
        return {i: CaseRecord(i, statuses[i], lane.name, f"{statuses[i]} on re-run {len(asked)}")
                for i in case_ids if i in statuses}

    return rerun, asked


def rerun_diff(baseline: Path, now: Path, rerun: Rerun, ledger: Ledger | None = None, times: int = 3) -> Diff:
    ledger = ledger or Ledger([])
    lanes = load_lanes([now], ledger=ledger)
    first = compare(read_baseline(baseline), lanes)
    return compare(read_baseline(baseline), lanes, rerun_groups(first, lanes, rerun, ledger, times))


def test_reruns_repeat_every_group_holding_a_new_failure_whole(baseline: Path, now: Path) -> None:
    """A and G are new failures: their groups [A, B, C] and [F, G] run again, whole, three times."""
    same = {A: Status.FAIL, B: Status.PASS, C: Status.PASS, F: Status.PASS, G: Status.TIMEOUT}
    rerun, asked = fake(same, same, same)
    diff = rerun_diff(baseline, now, rerun)
    assert asked == [("gpu", [A, B, C, F, G])] * 3
    assert [(c.id, c.detail) for c in diff.new_failures] == [
        (A, "out[0]=1 (failed again in 3 of 3 identical re-runs)"),
        (G, "failed again in 3 of 3 identical re-runs")]
    assert diff.flakes == [] and diff.regression


def test_identical_runs_that_disagree_make_an_undeclared_flake_a_regression(baseline: Path, now: Path) -> None:
    """A passes a re-run; G's re-runs disagree among themselves; C, which passed, fails one."""
    first = {A: Status.FAIL, B: Status.PASS, C: Status.PASS, F: Status.PASS, G: Status.TIMEOUT}
    rerun, _ = fake({**first, A: Status.PASS}, {**first, G: Status.CRASH}, {**first, C: Status.FAIL})
    diff = rerun_diff(baseline, now, rerun)
    assert [(c.id, c.was, c.now) for c in diff.flakes] == [(C, "Pass", "Flake"), (A, "Pass", "Flake"),
                                                           (G, None, "Flake")]  # in id order
    assert diff.flakes[1].detail == "4 identical runs disagree: Fail, Pass, Fail, Fail; Fail: out[0]=1"
    assert diff.flakes[2].detail.startswith("4 identical runs disagree: Timeout, Timeout, Crash, Timeout; ")
    assert diff.new_failures == [] and diff.unchanged == 0  # C counts as a Flake, not as unchanged
    assert diff.regression


def test_an_undeclared_flake_is_a_regression(journal: Callable[..., Path], tmp_path: Path) -> None:
    base = tmp_path / "b.json"
    write_baseline(load_lanes([journal("gpu", [(A, Status.PASS), (B, Status.PASS)], name="base")]), base)
    now = journal("gpu", [(A, Status.FAIL, "out[0]=1"), (B, Status.PASS)], name="now", groups=[("k", [A, B])])
    rerun, _ = fake(*[{A: Status.PASS, B: Status.PASS}] * 3)
    diff = rerun_diff(base, now, rerun)
    assert ids(diff.flakes) == [A] and diff.regression


def test_a_declared_flake_is_a_known_flake(journal: Callable[..., Path], tmp_path: Path) -> None:
    base = tmp_path / "b.json"
    write_baseline(load_lanes([journal("gpu", [(A, Status.PASS), (B, Status.PASS)], name="base")]), base)
    now = journal("gpu", [(A, Status.FAIL, "out[0]=1"), (B, Status.PASS)], name="now", groups=[("k", [A, B])])
    flakes = tmp_path / "flakes.toml"
    flakes.write_text(f'schema = 1\n[[expect]]\ncases = "{A}"\nstatus = "Flake"\nbug = "https://bugs.example/7"\n'
                      'expires = 2099-01-01\nreason = "intermittent on this driver"\n')
    ledger = Ledger(load_expectations(flakes))
    first = compare(read_baseline(base), load_lanes([now], ledger=ledger))
    assert first.new_failures == [] and [(c.id, c.detail) for c in first.known_flakes] == [
        (A, "declared flaky (https://bugs.example/7): out[0]=1")]  # accepted: nothing to re-run
    assert not first.regression
    again = journal("gpu", [(A, Status.PASS), (B, Status.FAIL, "out[1]=0")], name="again", groups=[("k", [A, B])])
    rerun, _ = fake(*[{A: Status.FAIL, B: Status.FAIL}] * 3)  # B's re-run hits A, which fails now and then
    diff = rerun_diff(base, again, rerun, ledger)
    assert [(c.id, c.now) for c in diff.known_flakes] == [(A, "Flake")]
    assert diff.known_flakes[0].detail == ("4 identical runs disagree: Pass, Flake, Flake, Flake; Flake: Fail on "
                                           "re-run 1 (declared: https://bugs.example/7)")
    assert [(c.id, c.detail) for c in diff.new_failures] == [(B, "out[1]=0 (failed again in 3 of 3 identical re-runs)")]


def test_a_new_failure_no_group_holds_is_not_rerun(baseline: Path, journal: Callable[..., Path]) -> None:
    now = journal("gpu", [(A, Status.FAIL, "out[0]=1")], name="ungrouped")
    rerun, asked = fake()
    diff = rerun_diff(baseline, now, rerun)
    assert asked == []
    assert [c.detail for c in diff.new_failures] == [
        "out[0]=1 (not re-run: no kernel group of its journal holds it, so its launch cannot be repeated)"]


def test_the_diff_renders_counts_and_cases() -> None:
    diff = Diff(new_failures=[Change("gpu", A, "Pass", "Fail", "out[0]=1\nmore")] * 3, unchanged=5)
    text = diff.render(limit=2)
    assert text.splitlines()[0] == ("REGRESSION: 3 new failures, 0 missing, 0 flakes, 0 still failing, 0 fixed, "
                                    "0 new cases, 0 known flakes, 5 unchanged")
    assert f"  gpu  {A}  Pass -> Fail  out[0]=1" in text
    assert "  ... and 1 more (--json has them all)" in text
    assert diff.to_json()["regression"] is True


RERUN_SCRIPT = """
import json, sys
from pathlib import Path
from harness.journal import CaseRecord, JournalWriter, SessionRecord
from harness.statuses import Status
lane, ids, journal, seed, max_blocks, profile, arch, log = sys.argv[1:]
with open(log, "a") as fh:
    fh.write(json.dumps([lane, Path(ids).read_text().split(), seed, max_blocks, profile, arch]) + "\\n")
with JournalWriter(Path(journal)) as w:
    w.write(SessionRecord(lane, profile, int(seed), ("numba",)))
    for line in Path(ids).read_text().split():
        w.write(CaseRecord(line, Status.PASS, lane))
sys.exit(1)  # the exit status of a re-run is not its verdict
"""


def test_the_command_rerun_fills_the_session_values_and_reads_the_journal_it_writes(
        baseline: Path, now: Path, tmp_path: Path) -> None:
    log = tmp_path / "asked.jsonl"
    rerun = CommandRerun([sys.executable, "-c", RERUN_SCRIPT, "{lane}", "{ids}", "{journal}", "{seed}",
                          "{max_blocks}", "{profile}", "{arch}", str(log)])
    diff = rerun_diff(baseline, now, rerun, times=2)
    asked = [json.loads(line) for line in log.read_text().splitlines()]
    assert asked == [["gpu", [A, B, C, F, G], "7", "16", "pr", "sm_90a"]] * 2  # the session's values
    assert ids(diff.flakes) == [A, G] and diff.new_failures == []


def test_a_rerun_that_writes_no_journal_leaves_the_failures(baseline: Path, now: Path) -> None:
    diff = rerun_diff(baseline, now, CommandRerun([sys.executable, "-c", "pass", "{ids}"]))
    assert [c.detail for c in diff.new_failures] == ["out[0]=1 (no verdict from the re-runs)",
                                                     "no verdict from the re-runs"]


def test_a_rerun_template_with_an_unknown_placeholder_is_refused() -> None:
    with pytest.raises(ReportError, match=r"--rerun: unknown placeholder\(s\) \{case\}; known: \{arch\}, \{ids\}, "
                                          r"\{journal\}, \{lane\}, \{max_blocks\}, \{profile\}, \{seed\}"):
        CommandRerun(["run", "{case}"])


def test_a_rerun_command_that_cannot_start_is_an_error(baseline: Path, now: Path) -> None:
    with pytest.raises(ReportError, match="--rerun: cannot start 'no-such-program-here'"):
        rerun_diff(baseline, now, CommandRerun(["no-such-program-here", "{ids}"]))

