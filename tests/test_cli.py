"""The command line: counts, parallel shards that split a lane exactly, and handled errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.journal import final_cases, read_journal


def test_list_prints_both_profiles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "block.load   full   4081 kernel points   361164 run cases in  1504392 blocks" in out
    assert "block.store  pr      124 kernel points     4911 run cases in    20403 blocks" in out


@pytest.mark.usefixtures("model_backend")
def test_jobs_split_the_lane_into_disjoint_shards(small_contracts: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "lane.jsonl"
    common = ["--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts), "--profile", "full"]
    assert main(["run", *common, "--journal", str(journal), "--jobs", "3"]) == 0
    shards = [set(final_cases(read_journal(tmp_path / f"lane.shard{k}of3.jsonl"))) for k in (1, 2, 3)]
    assert all(shards) and not (shards[0] & shards[1]) and not (shards[1] & shards[2])
    single = tmp_path / "single.jsonl"
    assert main(["run", *common, "--journal", str(single), "--no-isolate"]) == 0
    assert set().union(*shards) == set(final_cases(read_journal(single)))
    assert f"{len(set().union(*shards))} of {len(set().union(*shards))} cases accepted" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--lane", "gpu-racecheck"], "use `python -m harness.sanitizer lane --tool racecheck`"),
    (["run", "--lane", "host", "--backend", "cuda-fortran"], "unknown backend(s) cuda-fortran"),
    (["run", "--resume", "no/such/journal.jsonl"], "no such journal to resume"),
])
def test_handled_errors_exit_2_with_one_line(argv: list[str], message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bad_shard_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["worker", "--journal", "x.jsonl", "--shard", "3/2"])
    assert "'3/2' is not K/N" in capsys.readouterr().err
