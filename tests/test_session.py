"""Runs end to end on the model backend: verdicts, crash and hang isolation, resume, bad backends."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from pathlib import Path
from typing import Any

import coopcheck
import pytest

from harness import session
from harness.cases import Case, group_by_kernel
from harness.contracts import Contract, load_contracts
from harness.engine import Engine
from harness.errors import HarnessError
from harness.journal import (
    CaseRecord,
    EndRecord,
    GroupRecord,
    JournalWriter,
    LaunchRecord,
    SessionRecord,
    final_cases,
    read_journal,
)
from harness.lanes import lane_cases
from harness.session import RunConfig, planned_groups, resolve_backends, run_worker, supervise
from harness.statuses import Status
from tests.support.model_backend import FAULT_ENV, KEY_LEAVES_OUT_ENV

CRASHING = "coop_block_load__float64__ipt3__striped"


def _config(contracts: Path) -> RunConfig:
    return RunConfig(lane="simulator", profile="full", backends=["model"], contracts_dir=contracts)


def _statuses(journal: Path) -> Counter[Status]:
    return Counter(r.status for r in final_cases(read_journal(journal)).values())


@pytest.mark.usefixtures("model_backend")
def test_correct_backend_passes_everything(small_contracts: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    counts = run_worker(_config(small_contracts), journal)
    records = list(read_journal(journal))
    assert set(counts) == {"Pass"} and counts["Pass"] > 300
    assert isinstance(records[-1], EndRecord)
    launches = [r for r in records if isinstance(r, LaunchRecord)]
    groups = [r for r in records if isinstance(r, GroupRecord)]
    assert len(launches) == sum(1 for g in groups if "reject=" not in g.cases[0])  # one launch per kernel


@pytest.mark.usefixtures("model_backend")
def test_a_crashing_kernel_costs_only_its_group(small_contracts: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, f"crash:{CRASHING}")
    journal = tmp_path / "j.jsonl"
    supervise(_config(small_contracts), journal, group_timeout=120)
    finals = final_cases(read_journal(journal))
    crashed = {cid for cid, r in finals.items() if r.status is Status.CRASH}
    assert crashed and all("dtype=float64,block=" in c and ",ipt=3,alg=striped" in c for c in crashed)
    assert all("worker died with signal SIGSEGV" in finals[c].detail for c in crashed)
    assert _statuses(journal)[Status.PASS] == len(finals) - len(crashed)
    assert isinstance(list(read_journal(journal))[-1], EndRecord)


@pytest.mark.usefixtures("model_backend")
def test_a_hanging_kernel_times_out(small_contracts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, f"hang:{CRASHING}")
    journal = tmp_path / "j.jsonl"
    supervise(_config(small_contracts), journal, group_timeout=4)
    statuses = _statuses(journal)
    assert statuses[Status.TIMEOUT] > 0 and statuses[Status.PASS] > 300
    assert set(statuses) == {Status.PASS, Status.TIMEOUT}


@pytest.mark.usefixtures("model_backend")
def test_a_raising_launch_is_a_crash_in_process(small_contracts: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, f"raise:{CRASHING}")
    journal = tmp_path / "j.jsonl"
    run_worker(_config(small_contracts), journal)
    crashes = [r for r in final_cases(read_journal(journal)).values() if r.status is Status.CRASH]
    assert crashes and all("planted launch failure in " + CRASHING in r.detail for r in crashes)


@pytest.mark.usefixtures("model_backend")
def test_resume_runs_only_what_is_missing(small_contracts: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    run_worker(_config(small_contracts), journal)
    lines = journal.read_text().splitlines(keepends=True)
    first_case = next(i for i, line in enumerate(lines) if '"type":"case"' in line)
    cut = first_case + 50
    journal.write_text("".join(lines[:cut]) + lines[cut][:20])  # a torn line, as a kill leaves it
    kept = set(final_cases(read_journal(journal)))
    run_worker(_config(small_contracts), journal)
    records = list(read_journal(journal))
    rerun = [r.id for r in records[cut:] if isinstance(r, CaseRecord)]
    assert kept.isdisjoint(rerun)
    assert len(final_cases(records)) == len(kept) + len(rerun)


@pytest.mark.usefixtures("model_backend")
def test_unknown_backend_is_named(small_contracts: Path, tmp_path: Path) -> None:
    config = _config(small_contracts)
    config.backends = ["cuda-fortran"]
    with pytest.raises(HarnessError, match="unknown backend\\(s\\) cuda-fortran; installed: model"):
        run_worker(config, tmp_path / "j.jsonl")


def test_backends_may_be_named_in_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """A matrix lane passes its backends as one argument: ``--backend numba,cutlass`` is two backends."""
    monkeypatch.setattr(coopcheck, "available", lambda: ["cccl", "cutlass", "numba", "rustfatbin"])
    assert resolve_backends(["numba,rustfatbin", "cutlass"]) == ["numba", "rustfatbin", "cutlass"]
    with pytest.raises(HarnessError, match=r"unknown backend\(s\) fortran; installed: cccl, cutlass"):
        resolve_backends(["numba,fortran"])


@pytest.mark.usefixtures("model_backend")
def test_the_session_record_holds_what_an_identical_rerun_needs(small_contracts: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COOP_TOOLKIT", "cuda-13.0")
    config = _config(small_contracts)
    config.seed, config.max_blocks, config.arch = 11, 9, "sm_100"
    journal = tmp_path / "j.jsonl"
    run_worker(config, journal)
    [session] = [r for r in read_journal(journal) if isinstance(r, SessionRecord)]
    assert (session.lane, session.profile, session.seed, session.max_blocks, session.arch) == (
        "simulator", "full", 11, 9, "sm_100")
    assert session.tags == {"lane": "simulator", "arch": "sm_100", "toolkit": "cuda-13.0"}  # what expectations match
    launches = [r for r in read_journal(journal) if isinstance(r, LaunchRecord)]
    # groups split at max_blocks: two cases of four data patterns (blocks) each per launch
    assert max(len(launch.blocks) for launch in launches) == 8 and max(len(launch.cases) for launch in launches) == 2


@pytest.mark.usefixtures("model_backend")
def test_the_end_record_says_where_the_time_went(small_contracts: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    journal = tmp_path / "j.jsonl"
    assert main(["run", "--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts),
                 "--journal", str(journal), "--no-isolate"]) == 0
    [end] = [r for r in read_journal(journal) if isinstance(r, EndRecord)]
    assert set(end.phases) == {"model"}
    assert {"startup", "compile", "build", "launch", "judge", "journal"} <= set(end.phases["model"])
    assert all(seconds >= 0 for seconds in end.phases["model"].values()) and end.phases["model"]["launch"] > 0
    assert "model       seconds by phase (summed over workers): " in capsys.readouterr().out


def _sliced_whole_lane(config: RunConfig, contracts: list[Contract]) -> list[tuple[str, list[str]]]:
    """What a shard runs by definition: every case of the lane grouped by kernel, then its share."""
    k, n = config.shard
    out = []
    for backend in config.backends:
        for contract in contracts:
            groups = list(group_by_kernel(lane_cases(contract, backend, config.profile, config.lane)))
            share = (groups[k - 1::n] if config.lane == "simulator"
                     else groups[(k - 1) * len(groups) // n:k * len(groups) // n])
            out += [(backend, [c.id for c in cases]) for _spec, cases in share]
    return out


@pytest.mark.parametrize(("profile", "lane"), [("smoke", "gpu"), ("pr", "gpu"), ("pr", "host"), ("smoke", "host"),
                                             ("smoke", "simulator"), ("pr", "simulator")])
def test_a_shard_plans_exactly_its_slice_of_the_whole_lane(profile: str, lane: str) -> None:
    """A worker plans only its shard's groups (making every case of a full lane was most of its start); what it
    plans is still its share of the whole lane's groups, case for case: the k-th slice, or in the simulator (whose
    time is its launches, and its costly kernel points sit together) every n-th group from the k-th."""
    contracts = load_contracts(None)
    for shard in [(1, 1), (1, 3), (2, 3), (3, 3), (5, 16)]:
        config = RunConfig(lane=lane, profile=profile, backends=["numba", "cccl"], shard=shard)
        planned = [(backend, [c.id for c in cases]) for backend, cases in planned_groups(config, contracts)]
        assert planned == _sliced_whole_lane(config, contracts), shard


def _costs(config: RunConfig, contracts: list[Contract]) -> dict[str, float]:
    """Made-up measured costs for two groups in three (the others are unseen), skewed by several orders."""
    kernels = [cases[0].kernel_id for _backend, cases in planned_groups(config, contracts)]
    return {kernel: float((i * 7919) % 1000) ** 2 / 100 for i, kernel in enumerate(kernels) if i % 3}


@pytest.mark.parametrize("balanced", [False, True])
def test_the_shards_together_plan_the_unsharded_lane_once(balanced: bool) -> None:
    """Merged shards equal a single worker's run: every case of the unsharded plan in exactly one shard."""
    contracts = load_contracts(None)
    whole = RunConfig(lane="gpu", profile="pr", backends=["numba", "cccl"])
    costs = _costs(whole, contracts) if balanced else None
    unsharded = sorted(c.id for _backend, cases in planned_groups(whole, contracts) for c in cases)
    for n in (2, 3, 8):
        planned = [c.id for k in range(1, n + 1) for _backend, cases in
                   planned_groups(RunConfig(lane="gpu", profile="pr", backends=["numba", "cccl"], shard=(k, n),
                                            costs=costs), contracts) for c in cases]
        assert sorted(planned) == unsharded, n


@pytest.mark.parametrize("lane", ["gpu", "simulator"])
def test_a_kernel_that_serves_several_groups_is_planned_into_one_shard(lane: str) -> None:
    """numba's kernel key leaves the block shape out: every group of one key runs in one shard, the shards
    together still plan the unsharded lane once, and the contiguous shards stay within one kernel's groups of an
    equal share."""
    contracts = load_contracts(None)
    backends = ["numba", "cccl"]

    def key(backend: str, spec: coopcheck.KernelSpec) -> object:
        return (backend, dataclasses.replace(spec, block=()) if backend == "numba" else spec)

    whole = planned_groups(RunConfig(lane=lane, profile="pr", backends=backends), contracts)
    largest = max(Counter(key(b, cases[0].spec) for b, cases in whole).values())
    for n in (2, 3, 8, 16):
        shards = [planned_groups(RunConfig(lane=lane, profile="pr", backends=backends, shard=(k, n)), contracts, key)
                  for k in range(1, n + 1)]
        keys = [{key(b, cases[0].spec) for b, cases in shard} for shard in shards]
        assert sum(map(len, keys)) == len(set().union(*keys)), n
        assert sorted(c.id for shard in shards for _b, cases in shard for c in cases) == sorted(
            c.id for _b, cases in whole for c in cases)
        if lane == "gpu":
            per_contract = len(contracts) * len(backends)
            assert max(map(len, shards)) - min(map(len, shards)) <= 2 * per_contract * largest, n


def test_balanced_shards_carry_about_equal_measured_cost() -> None:
    contracts = load_contracts(None)
    whole = RunConfig(lane="gpu", profile="pr", backends=["numba"])
    costs = _costs(whole, contracts)
    mean = sum(costs.values()) / len(costs)

    def loads(balanced: bool) -> list[float]:
        return [sum(costs.get(cases[0].kernel_id, mean) for _backend, cases in planned_groups(
            RunConfig(lane="gpu", profile="pr", backends=["numba"], shard=(k, 4), costs=costs if balanced else None),
            contracts)) for k in range(1, 5)]

    balanced, contiguous = loads(True), loads(False)
    assert max(balanced) - min(balanced) <= max(costs.values())  # greedy longest-first bound
    assert max(balanced) < max(contiguous)


@pytest.mark.usefixtures("model_backend")
def test_the_session_record_names_the_gpu_its_worker_saw(small_contracts: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5")
    run_worker(_config(small_contracts), tmp_path / "five.jsonl")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    run_worker(_config(small_contracts), tmp_path / "any.jsonl")
    sessions = [r for name in ("five", "any") for r in read_journal(tmp_path / f"{name}.jsonl")
                if isinstance(r, SessionRecord)]
    assert [s.gpu for s in sessions] == ["5", ""]


@pytest.mark.usefixtures("model_backend")
def test_a_host_lane_batch_disassembles_a_full_chunk_of_kernels(small_contracts: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The host lane compiles a batch, then lists its kernels' SASS in one disassembly. A shard holds each kernel's
    groups together, so a batch cut at a count of groups held a handful of kernels (numba's Warp Scan over full on 8
    workers: inspect 573 s -> 1,857 s summed); a batch holds that count of kernels, every batch but the last full."""
    monkeypatch.setenv(KEY_LEAVES_OUT_ENV, "block")
    monkeypatch.setattr("harness.session.INSPECT_CHUNK", 4)
    calls: list[set[object]] = []

    def prefetch(engine: Engine, specs: list[coopcheck.KernelSpec]) -> None:
        calls.append({engine.adapter.kernel_key(spec) for spec in specs})

    monkeypatch.setattr(Engine, "prefetch_inspections", prefetch)
    monkeypatch.setattr(Engine, "run_group", lambda engine, spec, cases: [])  # the model's kernels have no SASS
    config = RunConfig(lane="host", profile="full", backends=["model"], contracts_dir=small_contracts, shard=(1, 2))
    run_worker(config, tmp_path / "j.jsonl")
    assert len(calls) > 2 and all(len(kernels) == 4 for kernels in calls[:-1]) and 0 < len(calls[-1]) <= 4
    assert sum(map(len, calls)) == len(set().union(*calls))  # each kernel in one batch: its groups sit together


@pytest.mark.usefixtures("model_backend")
def test_a_sharded_workers_plan_is_part_of_its_startup(small_contracts: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A shard's plan asks its backends for their kernel keys, so they activate while it is made; the plan's time
    after that (making the shard's cases: seconds over a full profile) is still the worker's start, as it was when
    the plan came before any backend activated."""
    planned = session.planned_groups

    def slow_plan(*args: Any) -> list[tuple[str, list[Case]]]:
        plan = planned(*args)
        time.sleep(0.5)
        return plan

    monkeypatch.setattr(session, "planned_groups", slow_plan)
    config = _config(small_contracts)
    config.shard = (1, 2)
    run_worker(config, tmp_path / "j.jsonl")
    [end] = [r for r in read_journal(tmp_path / "j.jsonl") if isinstance(r, EndRecord)]
    assert end.phases["model"]["startup"] >= 0.5


@pytest.mark.usefixtures("model_backend")
def test_a_balanced_journal_resumes_only_with_the_same_costs(small_contracts: Path, tmp_path: Path) -> None:
    config = _config(small_contracts)
    config.shard, config.costs = (1, 2), {"block.load/model/dtype=int16": 3.0}
    journal = tmp_path / "j.jsonl"
    with JournalWriter(journal) as writer:
        writer.write(config.session_record())
    run_worker(config, journal)  # the same costs: resumed
    config.costs = {"block.load/model/dtype=int16": 4.0}
    with pytest.raises(HarnessError, match=r"balance_sha256: journal '[0-9a-f]{8}', this run '[0-9a-f]{8}'"):
        run_worker(config, journal)


def test_a_worker_is_told_its_memory_in_gib_and_reads_it_back_as_bytes() -> None:
    from harness.cli import build_parser

    config = RunConfig(lane="gpu", worker_memory=3 * 2**30 + 7)
    args = build_parser().parse_args(["worker", "--journal", "j.jsonl", *config.worker_args()])
    assert args.worker_memory == config.worker_memory
