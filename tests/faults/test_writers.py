"""Item 1: a journal has one writer at a time, and a run's worker dies with the run that started it."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import JournalError
from harness.journal import CaseRecord, GroupRecord, JournalWriter
from harness.statuses import Status
from tests.faults.runs import Children, alive, group_in_flight, planned_ids, recorded, wait_until
from tests.support.model_backend import FAULT_ENV

#: The kernel the hang is planted in, and the kernel id of one of its groups (the worker sleeps inside it).
HANGING = "coop_block_load__float64__ipt3__striped"
HANGING_GROUP = "block.load/model/dtype=float64,block=64,ipt=3,alg=striped"


def test_a_second_writer_is_refused_while_the_first_holds_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with JournalWriter(path) as first:
        first.write(CaseRecord("a/b/c=1", Status.PASS, "gpu"))
        with pytest.raises(JournalError, match=r"j\.jsonl: another writer holds this journal"):
            JournalWriter(path)
    with JournalWriter(path) as second:  # the lock went with the first writer
        second.write(CaseRecord("a/b/c=2", Status.PASS, "gpu"))
    assert recorded(path) == {"a/b/c=1": 1, "a/b/c=2": 1}


def hanging_run(children: Children, lane: list[str], journal: Path,
                monkeypatch: pytest.MonkeyPatch) -> tuple[subprocess.Popen[bytes], GroupRecord]:
    """Start a run whose worker hangs inside a group; (the run, the group in flight) once it is in there."""
    monkeypatch.setenv(FAULT_ENV, f"hang:{HANGING}")
    run = children.start("run", *lane, "--journal", journal, "--group-timeout", "600")
    assert wait_until(lambda: group_in_flight(journal, HANGING_GROUP) is not None, 60), children.log(run)
    group = group_in_flight(journal, HANGING_GROUP)
    assert group is not None
    children.seen.add(group.pid)
    monkeypatch.delenv(FAULT_ENV)
    return run, group


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_a_killed_run_leaves_no_writer_behind(sig: signal.Signals, children: Children, lane: list[str],
                                              small_contracts: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    journal = tmp_path / "j.jsonl"
    run, group = hanging_run(children, lane, journal, monkeypatch)
    worker = group.pid
    os.kill(run.pid, sig)
    assert children.wait(run, 20) == -sig
    assert wait_until(lambda: not alive(worker), 10), "the worker outlived the run that started it"
    assert main(["run", *lane, "--resume", str(journal), "--no-isolate"]) == 0
    counts = recorded(journal)
    assert set(counts) == planned_ids(small_contracts) and set(counts.values()) == {1}


@pytest.mark.usefixtures("model_backend")
def test_a_resume_while_the_run_still_writes_is_refused(children: Children, lane: list[str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.jsonl"
    hanging_run(children, lane, journal, monkeypatch)
    before = recorded(journal)
    assert main(["run", *lane, "--resume", str(journal), "--group-timeout", "5"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {journal}: another writer holds this journal (a run, or the worker of one, still " \
                  "writes it): one writer at a time\n"
    assert recorded(journal) == before
