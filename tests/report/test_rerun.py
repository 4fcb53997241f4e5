"""``diff --rerun`` end to end on the model backend: identical launches tell a flaky device from a bug.

The lane runs with a seed and a number of blocks per launch of its own; the re-run command takes both
from the journal's session record, so a re-run repeats each launch exactly.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.journal import final_cases, read_journal
from harness.statuses import Status
from tests.support.model_backend import FAULT_ENV

BROKEN = "coop_block_store__int16__ipt1__direct"
SESSION = ["--seed", "99", "--max-blocks", "40"]  # several launches per kernel group, several cases each


def lane(contracts: Path, journal: Path) -> list[str]:
    return ["run", "--lane", "simulator", "--backend", "model", "--contracts", str(contracts), "--profile", "full",
            *SESSION, "--no-isolate", "--journal", str(journal)]


def rerun_command(contracts: Path) -> str:
    return shlex.join([sys.executable, "-m", "harness", "run", "--lane", "{lane}", "--backend", "model",
                       "--contracts", str(contracts), "--profile", "{profile}", "--seed", "{seed}",
                       "--max-blocks", "{max_blocks}", "--arch", "{arch}", "--no-isolate",
                       "--ids-file", "{ids}", "--journal", "{journal}"])


@pytest.fixture
def baseline(small_contracts: Path, tmp_path: Path) -> Path:
    assert main(lane(small_contracts, tmp_path / "clean.jsonl")) == 0
    path = tmp_path / "baseline.json"
    assert main(["baseline", str(tmp_path / "clean.jsonl"), "--out", str(path)]) == 0
    return path


def diff(contracts: Path, baseline: Path, journal: Path, out: Path) -> tuple[int, dict[str, Any]]:
    code = main(["diff", "--baseline", str(baseline), str(journal), "--rerun", rerun_command(contracts),
                 "--json", str(out), "--expectations", str(contracts / "expectations.toml")])
    return code, json.loads(out.read_text())


def failed(journal: Path) -> set[str]:
    return {cid for cid, r in final_cases(read_journal(journal)).items() if r.status is Status.FAIL}


@pytest.mark.usefixtures("model_backend")
def test_a_bug_at_one_block_position_stays_a_new_failure(small_contracts: Path, baseline: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Block 1 of each launch is corrupted: a re-run of the failing cases alone, or with other blocks per
    launch, would put them elsewhere and pass; the identical re-run fails them again, every time."""
    monkeypatch.setenv(FAULT_ENV, f"corrupt-second:{BROKEN}")
    assert main(lane(small_contracts, tmp_path / "now.jsonl")) == 1
    code, result = diff(small_contracts, baseline, tmp_path / "now.jsonl", tmp_path / "diff.json")
    assert code == 1 and result["regression"]
    assert {c["id"] for c in result["new_failures"]} == failed(tmp_path / "now.jsonl")
    assert len(result["new_failures"]) > 2  # block 1 of each of several launches per group
    assert all(c["detail"].endswith("(failed again in 3 of 3 identical re-runs)") for c in result["new_failures"])
    assert result["flakes"] == []


@pytest.mark.usefixtures("model_backend")
def test_random_bit_flips_are_flakes_that_fail_the_gate(small_contracts: Path, baseline: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """One random bit of one random block per launch: identical re-runs disagree, so the cases the flips hit in
    any run are Flakes, undeclared, and the gate fails; declared as flakes (bug and expiry), they pass it."""
    monkeypatch.setenv(FAULT_ENV, "flip:coop_block_")
    assert main(lane(small_contracts, tmp_path / "now.jsonl")) == 1
    code, result = diff(small_contracts, baseline, tmp_path / "now.jsonl", tmp_path / "diff.json")
    assert code == 1 and result["regression"]
    flakes = {c["id"] for c in result["flakes"]}
    assert len(flakes) > len(failed(tmp_path / "now.jsonl"))  # hit in the original run or in a re-run
    assert all("identical runs disagree" in c["detail"] for c in result["flakes"])
    assert len(result["new_failures"]) < len(flakes) / 4  # only a case the flips hit in all four runs stays
    (small_contracts / "expectations.toml").write_text(
        'schema = 1\n[[expect]]\ncases = "*/model/*"\nstatus = "Flake"\nbug = "https://bugs.example/flaky-device"\n'
        'expires = 2099-01-01\nreason = "the device flips bits"\n')
    code, result = diff(small_contracts, baseline, tmp_path / "now.jsonl", tmp_path / "declared.json")
    assert (code, result["regression"], result["flakes"], result["new_failures"]) == (0, False, [], [])
    assert result["known_flakes"]
