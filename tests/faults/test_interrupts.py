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
from tests.faults.runs import Children, alive, planned_ids, recorded, wait_until
from tests.faults.test_writers import hanging_run


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize("to", ["process group", "run alone"])  # Ctrl-C signals the terminal's process group
def test_an_interrupt_stops_the_run_and_charges_nothing(to: str, children: Children, lane: list[str],
                                                        small_contracts: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    journal = tmp_path / "j.jsonl"
    run, group = hanging_run(children, lane, journal, monkeypatch)
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
