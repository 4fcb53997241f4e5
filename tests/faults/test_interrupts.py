"""Item 3: an interrupt stops a run at once, charges nothing to the group in flight, and leaves a journal
that ``--resume`` continues."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.journal import CaseRecord, EndRecord, read_journal
from harness.statuses import Status
from tests.faults.runs import Children, alive, group_in_flight, planned_ids, recorded, wait_until
from tests.faults.test_writers import HANGING, HANGING_GROUP
from tests.support.model_backend import FAULT_ENV


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize("to", ["process group", "run alone"])  # Ctrl-C signals the terminal's process group
def test_an_interrupt_stops_the_run_and_charges_nothing(to: str, children: Children, lane: list[str],
                                                        small_contracts: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    journal = tmp_path / "j.jsonl"
    monkeypatch.setenv(FAULT_ENV, f"hang:{HANGING}")
    run = children.start("run", *lane, "--journal", journal, "--group-timeout", "600")
    assert wait_until(lambda: group_in_flight(journal, HANGING_GROUP) is not None, 60), children.log(run)
    group = group_in_flight(journal, HANGING_GROUP)
    assert group is not None
    children.seen.add(group.pid)
    monkeypatch.delenv(FAULT_ENV)
    sent = time.monotonic()
    (os.killpg if to == "process group" else os.kill)(run.pid, signal.SIGINT)
    status = children.wait(run, 30)
    assert status == 130, children.log(run)
    assert time.monotonic() - sent < 10
    assert wait_until(lambda: not alive(group.pid), 10), "the worker outlived the interrupted run"
    assert f"interrupted: {journal} keeps what it recorded; continue with --resume" in children.log(run)
    records = list(read_journal(journal))
    assert not any(isinstance(r, CaseRecord) and r.status in (Status.CRASH, Status.TIMEOUT) for r in records)
    assert not set(group.cases) & set(recorded(journal)) and not isinstance(records[-1], EndRecord)
    assert main(["run", *lane, "--resume", str(journal), "--no-isolate"]) == 0
    counts = recorded(journal)
    assert set(counts) == planned_ids(small_contracts) and set(counts.values()) == {1}
