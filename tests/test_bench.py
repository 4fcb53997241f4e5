"""The benchmark measures what it says: every mode judged, one launch per check in the naive runner, 10x the
checks in the same launches, and its figures in a JSON file; a backend that cannot launch is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.bench import SIMULATOR_ENV
from harness.cli import main
from tests.support.model_backend import FAULT_ENV, UNSUPPORTED_CASE_ENV, UNSUPPORTED_ENV


@pytest.fixture(autouse=True)
def _no_simulator_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a GPU the benchmark turns numba's simulator on for its process; keep that out of this one."""
    monkeypatch.setenv(SIMULATOR_ENV, "0")


def _bench(contracts: Path, out: Path) -> dict:
    assert main(["bench", "--backend", "model", "--contracts", str(contracts), "--profile", "smoke",
                 "--groups", "2", "--json", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.usefixtures("model_backend")
def test_the_three_modes_run_the_same_checks_in_their_own_launches(small_contracts: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    doc = _bench(small_contracts, tmp_path / "bench.json")
    by_mode = {m["mode"]: m for m in doc["results"]}
    batched, naive, tenfold = by_mode["batched"], by_mode["naive"], by_mode["tenfold"]
    assert batched["checks"] == naive["checks"] and tenfold["checks"] == 10 * batched["checks"]
    assert naive["launches"] == naive["checks"] and batched["launches"] == tenfold["launches"] == 4  # 2 per contract
    assert all(m["not_passed"] == 0 for m in doc["results"])
    [row] = doc["ratios"]
    assert row["batched_over_naive"] > 1 and row["tenfold_time_over_batched"] > 0
    out = capsys.readouterr().out
    assert "batched/naive" in out and "10x the checks took" in out


@pytest.mark.usefixtures("model_backend")
def test_a_benchmark_of_wrong_answers_says_so(small_contracts: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, "corrupt:coop_block_")
    doc = _bench(small_contracts, tmp_path / "bench.json")
    assert all(m["not_passed"] > 0 for m in doc["results"])


def test_without_a_backend_that_can_launch_it_names_the_others(capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from coopcheck import registry

    monkeypatch.setattr(registry, "_entry_points", lambda: {})
    monkeypatch.setattr(registry, "_active", {})
    assert main(["bench"]) == 2
    assert "no installed backend can launch here" in capsys.readouterr().err


@pytest.mark.usefixtures("model_backend")
def test_only_cases_the_backend_runs_are_checks(small_contracts: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A declared NotSupported costs no launch: counted as a check it would inflate checks/s (cuda.coop declines
    most partial tiles), so the groups a backend does not build and the cases it declines are left out."""
    full = _bench(small_contracts, tmp_path / "full.json")["results"][0]["checks"]
    monkeypatch.setenv(UNSUPPORTED_ENV, "direct")
    monkeypatch.setenv(UNSUPPORTED_CASE_ENV, "offset=1")
    doc = _bench(small_contracts, tmp_path / "bench.json")
    assert all(m["not_passed"] == 0 for m in doc["results"])
    assert 0 < doc["results"][0]["checks"] < full
