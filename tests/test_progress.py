"""Progress of a run: counted from the journal against the plan, shown live on a terminal and in a few plain lines
elsewhere."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.contracts import load_contracts
from harness.expectations import Ledger
from harness.journal import CaseRecord, GroupRecord, final_cases, read_journal, to_json
from harness.progress import PLAIN_STEPS, JournalTail, RunProgress, Tally
from harness.session import RunConfig, planned_groups
from harness.statuses import Status

ESCAPE = re.compile(r"\x1b\[")


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _plan(contracts: Path) -> list[tuple[str, list[str]]]:
    config = RunConfig(lane="simulator", profile="full", backends=["model"], contracts_dir=contracts)
    return [(backend, [c.id for c in cases]) for backend, cases in planned_groups(config, load_contracts(contracts))]


def _groups(plan: list[tuple[str, list[str]]]) -> Iterator[tuple[GroupRecord, list[CaseRecord]]]:
    for _backend, ids in plan:
        yield GroupRecord(ids[0], tuple(ids)), [CaseRecord(cid, Status.PASS, "simulator") for cid in ids]


def test_plain_progress_is_a_line_per_tenth_naming_groups_cases_failures_and_time(small_contracts: Path) -> None:
    plan = _plan(small_contracts)
    stream, clock, journal = io.StringIO(), Clock(), Path("j.jsonl")
    cases = sum(len(ids) for _, ids in plan)
    with RunProgress(plan, Ledger([], {}), stream, clock) as progress:
        for group, records in _groups(plan):
            clock.now += 0.5
            records[-1] = CaseRecord(records[-1].id, Status.FAIL, "simulator")  # a failure per group
            progress.feed(journal, [group, *records])
    lines = stream.getvalue().splitlines()
    assert not ESCAPE.search(stream.getvalue())  # no terminal, no control sequences
    assert 1 <= len(lines) <= PLAIN_STEPS + int(clock.now // 30) + 1
    assert all(line.startswith("progress: model ") for line in lines)
    assert lines[-1].endswith(f"groups {len(plan)}/{len(plan)}  cases {cases}/{cases}  {len(plan)} failed  "
                              f"{int(clock.now) // 60}:{int(clock.now) % 60:02d} elapsed, done")


def test_a_group_left_unfinished_and_run_again_counts_once() -> None:
    ids = ["block.load/model/dtype=int16,block=64,ipt=1,alg=direct,valid=zero,oob=none,offset=zero",
           "block.load/model/dtype=int16,block=64,ipt=1,alg=direct,valid=one,oob=none,offset=zero"]
    progress = RunProgress([("model", ids)], Ledger([], {}), io.StringIO())
    journal = Path("j.jsonl")
    progress.feed(journal, [GroupRecord("k", tuple(ids)), CaseRecord(ids[0], Status.PASS, "simulator")], live=False)
    progress.feed(journal, [GroupRecord("k", (ids[1],)), CaseRecord(ids[1], Status.PASS, "simulator")])
    tally = progress.tallies["model"]
    assert (tally.groups_done, tally.done, tally.done_before) == (1, 2, 1)


def test_groups_announced_ahead_of_their_verdicts_each_count(small_contracts: Path) -> None:
    """A host-lane batch announces all its groups, then records their verdicts: the line read 'groups 26/854' at the
    end of a host lane over pr, one group per batch."""
    plan = _plan(small_contracts)[:3]
    progress = RunProgress(plan, Ledger([], {}), io.StringIO())
    announced, verdicts = zip(*_groups(plan), strict=True)
    progress.feed(Path("j.jsonl"), [*announced, *(record for records in verdicts for record in records)])
    tally = progress.tallies["model"]
    assert (tally.groups_done, tally.done) == (3, sum(len(ids) for _, ids in plan))


def test_the_estimate_comes_from_this_run_s_pace_not_a_resumed_journal_s() -> None:
    tally = Tally(groups=4, cases=100, started=0.0, done_before=50, accepted={str(i): True for i in range(60)})
    assert tally.text(10.0) == "groups 0/4  cases 60/100  0 failed  0:10 elapsed  about 0:40 left"
    assert tally.text(1.0).endswith("estimating")  # the first seconds (rejections) say nothing of the pace


def test_a_tail_reads_complete_lines_only(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    tail = JournalTail(journal)
    assert tail.read() == []
    record = CaseRecord("block.load/model/dtype=int16,block=64,ipt=1,alg=direct", Status.PASS, "host")
    line = to_json(record) + "\n"
    journal.write_text(line + line[:10])
    assert tail.read() == [record]
    with journal.open("a") as fh:
        fh.write(line[10:])
    assert tail.read() == [record]


def _run(contracts: Path, journal: Path) -> list[str]:
    return [sys.executable, "-m", "harness", "run", "--lane", "simulator", "--backend", "model", "--profile", "full",
            "--contracts", str(contracts), "--journal", str(journal)]


def _cases(journal: Path) -> int:
    return len(final_cases(read_journal(journal)))


@pytest.mark.usefixtures("model_backend")
def test_a_run_on_a_terminal_shows_live_progress(small_contracts: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE",
                                                            "TTY_INTERACTIVE")}
    main, child = pty.openpty()
    proc = subprocess.Popen(_run(small_contracts, journal), stdin=child, stdout=child, stderr=child,
                            env={**env, "TERM": "xterm-256color", "COLUMNS": "200"})
    os.close(child)
    shown, deadline = b"", time.monotonic() + 60
    while time.monotonic() < deadline:  # read until the run closes its side (EOF), never past the deadline
        if not select.select([main], [], [], 1)[0]:
            continue
        try:
            chunk = os.read(main, 1 << 16)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        shown += chunk
    else:
        proc.kill()
    os.close(main)
    assert proc.wait(timeout=60) == 0
    text = shown.decode()
    n = _cases(journal)
    assert "\x1b[?25l" in text  # a live display hides the cursor while it redraws
    assert re.search(rf"model .*cases {n}/{n}  0 failed  \d+:\d\d elapsed, done", text)


@pytest.mark.usefixtures("model_backend")
def test_a_run_off_a_terminal_prints_a_few_plain_progress_lines(small_contracts: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    done = subprocess.run(_run(small_contracts, journal), capture_output=True, text=True, timeout=60, check=True)
    lines = [line for line in done.stderr.splitlines() if line.startswith("progress: ")]
    n = _cases(journal)
    assert not ESCAPE.search(done.stderr + done.stdout)
    assert 1 <= len(lines) <= PLAIN_STEPS + 1 and f"cases {n}/{n}  0 failed" in lines[-1]


def test_a_backend_the_run_leaves_out_is_passed_over() -> None:
    """A resumed journal may hold groups of a backend that this run's --ids-file leaves out."""
    other = "block.load/numba/dtype=int16,block=64,ipt=1,alg=direct,valid=zero,oob=none,offset=zero"
    mine = other.replace("/numba/", "/model/")
    progress = RunProgress([("model", [mine])], Ledger([], {}), io.StringIO())
    progress.feed(Path("j.jsonl"), [GroupRecord("k", (other,)), CaseRecord(other, Status.FAIL, "simulator")],
                  live=False)
    assert set(progress.tallies) == {"model"} and progress.tallies["model"].done == 0
