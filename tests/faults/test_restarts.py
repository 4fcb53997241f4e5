"""Item 2: a worker lost outside a group costs a restart, not the run; a worker that never gets anywhere
stops the run with one line saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.contracts import load_contracts
from harness.errors import HarnessError
from harness.journal import EndRecord, SessionRecord, final_cases, read_journal
from harness.session import RunConfig, planned_groups, supervise
from harness.statuses import Status
from tests.faults.runs import planned_ids, recorded
from tests.support.model_backend import LOST_ENV, START_ENV


def _config(contracts: Path) -> RunConfig:
    return RunConfig(lane="simulator", profile="full", backends=["model"], contracts_dir=contracts)


@pytest.mark.usefixtures("model_backend")
def test_a_worker_lost_between_groups_costs_a_restart(small_contracts: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    lost = tmp_path / "lost-once"
    monkeypatch.setenv(LOST_ENV, str(lost))
    journal = tmp_path / "j.jsonl"
    supervise(_config(small_contracts), journal, group_timeout=60)
    assert lost.exists()  # the first worker was killed before its first group
    assert "worker restarted after charging 0 case(s)" in capsys.readouterr().err
    counts = recorded(journal)
    assert set(counts) == planned_ids(small_contracts) and set(counts.values()) == {1}
    assert {r.status for r in final_cases(read_journal(journal)).values()} == {Status.PASS}
    assert isinstance(list(read_journal(journal))[-1], EndRecord)


@pytest.mark.usefixtures("model_backend")
def test_a_worker_that_never_gets_anywhere_stops_the_run(small_contracts: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOST_ENV, "always")
    with pytest.raises(HarnessError, match=r"j\.jsonl: the worker was lost 3 times in a row before it recorded "
                                           r"a verdict \(last: worker died with signal SIGKILL\); see the journal"):
        supervise(_config(small_contracts), tmp_path / "j.jsonl", group_timeout=60)


@pytest.mark.usefixtures("model_backend")
def test_a_short_group_timeout_spares_a_starting_worker(small_contracts: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting (here: a backend that takes 2 s to activate) is no kernel group: --group-timeout 1 spares it
    (the smoke profile's launches of these small contracts take milliseconds, however loaded the machine)."""
    monkeypatch.setenv(START_ENV, "2")
    journal = tmp_path / "j.jsonl"
    config = _config(small_contracts)
    config.profile = "smoke"
    supervise(config, journal, group_timeout=1)
    assert {r.status for r in final_cases(read_journal(journal)).values()} == {Status.PASS}
    assert set(recorded(journal).values()) == {1} and isinstance(list(read_journal(journal))[-1], EndRecord)


@pytest.mark.usefixtures("model_backend")
def test_a_worker_over_its_memory_starts_afresh_between_groups(small_contracts: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A backend whose compiles pile up in the worker (the CuTe DSL keeps about 3 MB of every kernel it built, so a
    worker of a full host lane grew to 17 GB and the kernel then killed it) is started afresh between groups once
    the worker's resident memory passes ``worker_memory``: nothing is charged, every case is recorded once, and
    each incarnation's phase seconds are kept (an end record each)."""
    journal = tmp_path / "j.jsonl"
    config = _config(small_contracts)
    groups = planned_groups(config, load_contracts(small_contracts))
    config.only_ids = frozenset(case.id for _, cases in groups[4:7] for case in cases)  # three groups
    config.worker_memory = 1  # byte: every worker is over it as soon as it has run one batch of groups
    supervise(config, journal, group_timeout=60)
    err = capsys.readouterr().err
    counts = recorded(journal)
    assert set(counts) == config.only_ids and set(counts.values()) == {1}
    assert {r.status for r in final_cases(read_journal(journal)).values()} == {Status.PASS}
    records = list(read_journal(journal))
    sessions = [r for r in records if isinstance(r, SessionRecord)]
    ends = [r for r in records if isinstance(r, EndRecord)]
    assert len(sessions) == len(ends) >= 2 and isinstance(records[-1], EndRecord)
    assert err.count("started afresh") == len(sessions) - 1 and "charging" not in err
    assert all(end.phases["model"]["startup"] > 0 for end in ends)  # every incarnation's phases are kept
