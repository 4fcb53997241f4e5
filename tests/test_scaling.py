"""Group costs from a run's journals, the cost-balanced assignment, and the predicted wall time per GPU count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.journal import CaseRecord, EndRecord, GroupRecord, JournalWriter, SessionRecord
from harness.scaling import balance, group_costs, predict
from harness.statuses import Status


def test_balance_puts_the_costliest_group_first_onto_the_least_loaded_shard() -> None:
    assert balance([4.0, 3.0, 3.0, 2.0], 2) == [0, 1, 1, 0]  # loads 6 and 6
    assert balance([1.0, 5.0, 1.0, 1.0, 1.0], 2) == [1, 0, 1, 1, 1]  # one costly group alone
    assert balance([2.0, 2.0, 2.0], 3) == [0, 1, 2]  # ties: the earlier group, the lower shard
    assert balance([1.0, 2.0], 1) == [0, 0]


def _journal(path: Path, groups: dict[str, list[float]], startup: float, rerun: str | None = None) -> Path:
    """A finished run's journal: one group record and its case records (``seconds`` each) per group."""
    with JournalWriter(path) as writer:
        writer.write(SessionRecord("gpu", "full", 0, ("model",)))
        for kernel, seconds in groups.items():
            cases = [f"{kernel},valid={i}" for i in range(len(seconds))]
            writer.write(GroupRecord(kernel, tuple(cases)))
            for case, spent in zip(cases, seconds, strict=True):
                writer.write(CaseRecord(case, Status.PASS, "gpu", seconds=spent))
        if rerun is not None:  # a case recorded again (a resumed attempt): its last record counts
            writer.write(GroupRecord(rerun, (f"{rerun},valid=0",)))
            writer.write(CaseRecord(f"{rerun},valid=0", Status.PASS, "gpu", seconds=0.5, attempt=2))
        writer.write(EndRecord({"Pass": 1}, phases={"model": {"startup": startup, "launch": 1.0}}))
    return path


def test_group_costs_sum_each_groups_cases_last_seconds(tmp_path: Path) -> None:
    one = _journal(tmp_path / "a.jsonl", {"k/a": [1.0, 1.5], "k/b": [2.0]}, 1.0, rerun="k/a")
    two = _journal(tmp_path / "b.jsonl", {"k/c": [0.25]}, 3.0)
    assert group_costs([one, two]) == {"k/a": 2.0, "k/b": 2.0, "k/c": 0.25}


def test_predict_adds_the_startup_to_each_gpus_balanced_share(tmp_path: Path) -> None:
    one = _journal(tmp_path / "a.jsonl", {"k/a": [2.0, 2.0], "k/b": [3.0]}, 1.0)
    two = _journal(tmp_path / "b.jsonl", {"k/c": [3.0], "k/d": [2.0]}, 3.0)
    prediction = predict([one, two], [1, 2, 4])
    assert prediction["startup_seconds"] == 2.0 and prediction["groups"] == 4
    assert [(p["gpus"], p["seconds"], p["speedup"]) for p in prediction["predictions"]] == [
        (1, 14.0, 1.0), (2, 8.0, 1.75), (4, 6.0, 14.0 / 6.0)]


def test_predict_prints_a_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = _journal(tmp_path / "a.jsonl", {"k/a": [2.0, 2.0], "k/b": [3.0], "k/c": [3.0], "k/d": [2.0]}, 2.0)
    assert main(["predict", str(journal), "--gpus", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "4 kernel groups, 12.0 s of measured group time, 2.0 s startup per worker" in out
    assert "     1        14.0     1.00x" in out and "     2         8.0     1.75x" in out
    assert main(["predict", str(journal), "--gpus", "8", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["predictions"] == [{"gpus": 8, "seconds": 6.0, "speedup": 14.0 / 6.0}]


def test_predict_refuses_journals_without_timed_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "e.jsonl"
    with JournalWriter(empty) as writer:
        writer.write(SessionRecord("gpu", "full", 0, ("model",)))
    assert main(["predict", str(empty)]) == 2
    assert f"{empty}: no kernel group with timed cases to predict from" in capsys.readouterr().err
