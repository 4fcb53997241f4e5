"""The engine charges a backend only with what its adapter did: harness errors stop the run with a message
naming the group and record nothing; an output off the ABI is a Fail of every case of its launch."""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import coopcheck
import numpy as np
import pytest

from harness.cases import group_by_kernel
from harness.cli import main
from harness.contracts import load_contracts
from harness.engine import CompileFailed, Engine
from harness.errors import HarnessError
from harness.inspect.limits import REGISTERS_PER_BLOCK, block_registers
from harness.journal import CaseRecord, LaunchRecord, Record, ResourceRecord, final_cases, read_journal
from harness.lanes import lane_cases
from harness.oracles import block_load_store as oracle
from harness.statuses import Status
from tests.support.model_backend import UNSUPPORTED_CASE_ENV, ModelAdapter


def _group(contracts: Path, lane: str, contract_id: str = "block.load"):
    contract = next(c for c in load_contracts(contracts) if c.id == contract_id)
    cases = [c for c in lane_cases(contract, "model", "pr", lane) if c.reject is None]
    return next(iter(group_by_kernel(cases)))


def _engine(lane: str, adapter: object, emitted: list[Record]) -> Engine:
    return Engine(adapter, lane, 1, emitted.append)  # type: ignore[arg-type]


def test_an_oracle_failure_is_the_harnesss_error_and_records_nothing(small_contracts: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    spec, cases = _group(small_contracts, "simulator")
    monkeypatch.setattr(oracle, "expected", None)  # the oracle now fails inside itself
    emitted: list[Record] = []
    with pytest.raises(HarnessError, match=r"the harness failed on this group \(no verdict charged to model\): "
                                           r"TypeError.*\(at harness/oracles/block_load_store.py:\d+\)"):
        _engine("simulator", ModelAdapter(), emitted).run_group(spec, cases)
    assert not [r for r in emitted if isinstance(r, CaseRecord)]


def test_a_missing_inspector_dependency_is_one_message(small_contracts: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, cases = _group(small_contracts, "host")
    monkeypatch.setitem(sys.modules, "harness.inspect", None)  # what a missing optional dependency looks like
    emitted: list[Record] = []
    with pytest.raises(HarnessError, match=r"'inspect' extra"):
        _engine("host", ModelAdapter(), emitted).run_group(spec, cases)
    assert not emitted


@pytest.mark.usefixtures("model_backend")
def test_a_harness_error_in_a_run_exits_2_and_charges_nothing(small_contracts: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "harness.inspect", None)
    journal = tmp_path / "j.jsonl"
    code = main(["run", "--lane", "host", "--backend", "model", "--contracts", str(small_contracts),
                 "--journal", str(journal), "--no-isolate"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "'inspect' extra" in err and len(err.strip().splitlines()) == 1
    assert {r.status for r in final_cases(read_journal(journal)).values()} <= {Status.PASS}  # the rejects ran


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_max_blocks_is_checked_where_it_is_parsed(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["run", "--lane", "host", "--max-blocks", value])
    assert stop.value.code == 2
    assert "--max-blocks" in capsys.readouterr().err


class ShortOutput(ModelAdapter):
    """Returns one element too few: the launch broke the ABI, every one of its cases fails."""

    def launch(self, compiled: coopcheck.KernelSpec, spec: coopcheck.KernelSpec,
               batch: coopcheck.LoadBatch | coopcheck.StoreBatch) -> np.ndarray:
        return super().launch(compiled, spec, batch)[:-1]


def test_an_output_off_the_abi_fails_every_case_of_its_launch_by_rule(small_contracts: Path) -> None:
    spec, cases = _group(small_contracts, "simulator", "block.store")
    records = _engine("simulator", ShortOutput(), []).run_group(spec, cases)
    assert {r.status for r in records} == {Status.FAIL} and len(records) == len(cases)
    assert {r.rules for r in records} == {("output-abi",)}
    assert "launch returned int16[" in records[0].detail and "the ABI says int16[" in records[0].detail


class RaisesInUnsupported(ModelAdapter):
    def unsupported_reason(self, spec: coopcheck.KernelSpec) -> str | None:
        raise KeyError(spec.algorithm)


def test_an_adapter_that_raises_while_declaring_support_crashes_its_group(small_contracts: Path) -> None:
    spec, cases = _group(small_contracts, "simulator")
    records = _engine("simulator", RaisesInUnsupported(), []).run_group(spec, cases)
    assert {r.status for r in records} == {Status.CRASH}
    assert records[0].detail.startswith("unsupported_reason failed: KeyError")


class RecordsLaunches(ModelAdapter):
    """Keeps every batch it launches."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[coopcheck.LoadBatch | coopcheck.StoreBatch] = []

    def launch(self, compiled: coopcheck.KernelSpec, spec: coopcheck.KernelSpec,
               batch: coopcheck.LoadBatch | coopcheck.StoreBatch) -> np.ndarray:
        self.batches.append(batch)
        return super().launch(compiled, spec, batch)


def test_cases_an_adapter_declines_are_not_supported_and_never_launched(small_contracts: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter is asked with resolved values (the misaligned offset class is 1 element), per case."""
    monkeypatch.setenv(UNSUPPORTED_CASE_ENV, "offset=1")
    spec, cases = _group(small_contracts, "simulator")
    adapter = RecordsLaunches()
    records = {r.id: r for r in _engine("simulator", adapter, []).run_group(spec, cases)}
    declined = {c.id for c in cases if c["offset"] == "misaligned"}
    assert declined and len(declined) < len(cases)
    assert {records[i].status for i in declined} == {Status.NOT_SUPPORTED}
    assert {records[i].detail for i in declined} == {"the model does not take offset=1"}
    assert {r.status for i, r in records.items() if i not in declined} == {Status.PASS}
    launched = sum(len(batch.valid) for batch in adapter.batches)
    assert launched == (len(cases) - len(declined)) * oracle.blocks_per_case(spec)
    assert all(1 not in batch.offset for batch in adapter.batches)


class WithoutCaseSupport(ModelAdapter):
    unsupported_case = None  # an adapter without the optional method


def test_an_adapter_without_case_support_runs_every_case(small_contracts: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UNSUPPORTED_CASE_ENV, "offset=1")
    spec, cases = _group(small_contracts, "simulator")
    records = _engine("simulator", WithoutCaseSupport(), []).run_group(spec, cases)  # type: ignore[arg-type]
    assert {r.status for r in records} == {Status.PASS} and len(records) == len(cases)


class RaisesInUnsupportedCase(ModelAdapter):
    def unsupported_case(self, spec: coopcheck.KernelSpec, values: object) -> str | None:
        raise KeyError("valid")


def test_an_adapter_that_raises_while_declining_a_case_crashes_that_case(small_contracts: Path) -> None:
    spec, cases = _group(small_contracts, "simulator")
    records = _engine("simulator", RaisesInUnsupportedCase(), []).run_group(spec, cases)
    assert {r.status for r in records} == {Status.CRASH} and len(records) == len(cases)
    assert records[0].detail.startswith("unsupported_case failed: KeyError")


class DeclinesEveryCase(ModelAdapter):
    """Takes the kernel but none of its run cases (an API with no partial tiles, given only partial ones)."""

    def __init__(self) -> None:
        super().__init__()
        self.compiles = 0

    def unsupported_case(self, spec: coopcheck.KernelSpec, values: object) -> str | None:
        return "the model takes no case of this kernel"

    def compile(self, spec: coopcheck.KernelSpec, *, arch: str) -> coopcheck.KernelSpec:
        self.compiles += 1
        return super().compile(spec, arch=arch)


def test_a_group_whose_every_case_is_declined_is_neither_compiled_nor_launched(small_contracts: Path) -> None:
    spec, cases = _group(small_contracts, "simulator")
    adapter = DeclinesEveryCase()
    emitted: list[Record] = []
    records = _engine("simulator", adapter, emitted).run_group(spec, cases)
    assert {r.status for r in records} == {Status.NOT_SUPPORTED} and len(records) == len(cases)
    assert adapter.compiles == 0 and not [r for r in emitted if isinstance(r, LaunchRecord)]


@pytest.mark.parametrize(("declines", "compiles"), [(False, 1), (True, 0)])
def test_preparing_compiles_only_a_group_with_a_case_to_launch(small_contracts: Path, declines: bool,
                                                               compiles: int) -> None:
    """A benchmark prepares its groups off the clock: one whose every case is declined costs no compile."""
    spec, cases = _group(small_contracts, "simulator")
    adapter = DeclinesEveryCase()
    if not declines:
        adapter.unsupported_case = lambda spec, values: None  # type: ignore[method-assign]
    _engine("simulator", adapter, []).prepare(spec, cases)
    assert adapter.compiles == compiles


class CorruptsBlockZero(ModelAdapter):
    """A position-dependent bug: the first block of every launch gets one bit flipped."""

    def launch(self, compiled: coopcheck.KernelSpec, spec: coopcheck.KernelSpec,
               batch: coopcheck.LoadBatch | coopcheck.StoreBatch) -> np.ndarray:
        out = super().launch(compiled, spec, batch)
        out.view(np.uint8)[0] ^= 1
        return out


def test_a_position_dependent_bug_is_charged_to_other_cases_under_another_seed(small_contracts: Path) -> None:
    spec, cases = _group(small_contracts, "simulator")
    failing = []
    for seed in (1, 2, 3):
        engine = Engine(CorruptsBlockZero(), "simulator", seed, lambda record: None)
        failing.append({r.id for r in engine.run_group(spec, cases) if r.status is Status.FAIL})
    assert all(len(ids) == 1 for ids in failing)
    assert len(set().union(*failing)) > 1, "block 0 ran the same case under every seed"


def _report(registers: int = 18, stack_bytes: int = 0, instructions: tuple[Any, ...] = ()) -> Any:
    """An inspector's report of a kernel named ``k`` with no shared memory, local memory or barriers."""
    from harness.inspect import KernelReport

    return KernelReport("k", "sm_90", "ab" * 32, registers=registers, shared_static_bytes=0, shared_dynamic_bytes=0,
                        shared_reserved_bytes=16, local_bytes=0, stack_bytes=stack_bytes, barriers=0, sass="",
                        instructions=instructions, opcodes=Counter(i.mnemonic for i in instructions))


def test_the_host_lane_journals_each_kernels_resource_figures(small_contracts: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A report can only show figures a journal holds: every compile group records what its cubin measured."""
    import harness.inspect
    from harness.inspect import Instruction

    report = _report(stack_bytes=8, instructions=(Instruction(0x30, "CALL.REL.NOINC", "CALL.REL.NOINC 0x40"),))
    monkeypatch.setattr(harness.inspect, "inspect_artifacts", lambda artifacts: report)
    spec, cases = _group(small_contracts, "host")
    emitted: list[Record] = []
    _engine("host", ModelAdapter(), emitted).run_group(spec, cases)
    [measured] = [r for r in emitted if isinstance(r, ResourceRecord)]
    assert measured.id == cases[0].kernel_id and measured.lane == "host" and measured.sha256 == "ab" * 32
    assert measured.figures == {"registers": 18, "shared_bytes": 0, "barriers": 0, "local_bytes": 0,
                                "stack_bytes": 8}
    assert measured.forbidden["CALL"] == 1 and measured.forbidden["LDL"] == 0


def test_the_host_lane_fails_a_kernel_whose_block_cannot_launch(small_contracts: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """No contract table states registers; the block must still fit the register file, or every launch fails."""
    import harness.inspect

    spec, cases = _group(small_contracts, "host")
    # The most registers a thread of this block may have (past it: the register file, or 255 a thread).
    fits = max(r for r in range(1, 256) if block_registers(r, spec.threads) <= REGISTERS_PER_BLOCK)
    verdicts = {}
    for registers in (fits, fits + 8):
        monkeypatch.setattr(harness.inspect, "inspect_artifacts", lambda artifacts, r=registers: _report(r))
        records = _engine("host", ModelAdapter(), []).run_group(spec, cases)
        verdicts[registers] = {(r.status, r.rules) for r in records}
    assert verdicts[fits] == {(Status.PASS, ())}
    assert verdicts[fits + 8] == {(Status.FAIL, ("resources",))}


def test_a_run_cases_seconds_include_its_share_of_the_groups_compile(small_contracts: Path) -> None:
    """A group's cost is its compile and its launches: a cost model fed from case seconds (balanced shards,
    the scaling prediction) would otherwise miss the phase that dominates cuda.coop's and CUTLASS's groups."""
    import time

    class SlowCompile(ModelAdapter):
        def compile(self, spec: coopcheck.KernelSpec, *, arch: str) -> object:
            time.sleep(0.3)
            return super().compile(spec, arch=arch)

    spec, cases = _group(small_contracts, "simulator")
    records = [r for r in _engine("simulator", SlowCompile(), []).run_group(spec, cases) if r.status is Status.PASS]
    assert len(records) == len(cases) and sum(r.seconds for r in records) >= 0.3


def test_resource_rules_are_chosen_per_kernel_point_where_a_kernel_key_spans_several(
        small_contracts: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule whose ``when`` names a block applies to that block's group only, though a backend whose kernels
    take the block at launch compiles (and the engine inspects) one kernel for both."""
    import harness.inspect

    path = small_contracts / "block_load.toml"
    path.write_text(path.read_text() + '\n[[resources]]\nalgorithms = ["*"]\nwhen = { block = ["64"] }\nbarriers = 7\n')
    report = _report()
    monkeypatch.setattr(harness.inspect, "inspect_artifacts", lambda artifacts: report)

    class BlockAtLaunch(ModelAdapter):
        def kernel_key(self, spec: coopcheck.KernelSpec) -> object:
            return (spec.operation, spec.dtype, spec.items_per_thread, spec.algorithm)

    contract = next(c for c in load_contracts(small_contracts) if c.id == "block.load")
    groups = {spec.block: (spec, cases) for spec, cases in group_by_kernel(
        c for c in lane_cases(contract, "model", "full", "host") if c.reject is None and c["alg"] == "direct"
        and c["dtype"] == "int16" and c["ipt"] == 1)}
    engine = _engine("host", BlockAtLaunch(), [])
    statuses = {block: {r.status for r in engine.run_group(*groups[block])} for block in ((5, 3, 2), (64,))}
    assert statuses == {(5, 3, 2): {Status.PASS}, (64,): {Status.FAIL}}


def _host_engine_of_one_key(monkeypatch: pytest.MonkeyPatch, adapter: ModelAdapter) -> Engine:
    """A host lane engine whose adapter gives every spec one kernel key (as numba's leaves statics and block to the
    launch), inspecting by compiling only (the model has no cubin): a compile error, else Pass."""
    monkeypatch.setattr(adapter, "kernel_key", lambda spec: "one key", raising=False)

    def compile_only(self: Engine, spec: coopcheck.KernelSpec, cases: list[Any]) -> list[CaseRecord]:
        try:
            self._compile(spec)
        except CompileFailed as exc:
            return [self._record(c, Status.COMPILE_ERROR, str(exc)) for c in cases]
        return [self._record(c, Status.PASS) for c in cases]

    monkeypatch.setattr(Engine, "_inspect", compile_only)
    return _engine("host", adapter, [])


def test_a_rejection_compiled_ahead_does_not_stand_for_the_valid_kernel_of_its_key(
        small_contracts: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host lane compiles a batch's groups ahead (``prepare``); a rejection case's refusal must not be
    remembered for the kernel key it shares with a valid spec."""
    contract = next(c for c in load_contracts(small_contracts) if c.id == "block.store")
    cases = lane_cases(contract, "model", "pr", "host")
    reject = next(c for c in cases if c.reject is not None)
    spec, valid = next(iter(group_by_kernel(c for c in cases if c.reject is None)))
    engine = _host_engine_of_one_key(monkeypatch, ModelAdapter())
    engine.prepare(reject.spec, [reject])
    records = engine.run_group(spec, valid)
    assert {r.status for r in records} == {Status.PASS}, records[0].detail


def test_a_host_lane_group_compiled_ahead_is_charged_its_compile_once(small_contracts: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Two groups of one kernel key compiled ahead: the first group's verdicts carry the compile, as they do
    when it compiles in ``run_group``; the second's compile is the cached one."""
    contract = next(c for c in load_contracts(small_contracts) if c.id == "block.store")
    groups = list(group_by_kernel(c for c in lane_cases(contract, "model", "pr", "host") if c.reject is None))[:2]
    adapter = ModelAdapter()
    real_compile = adapter.compile

    def slow_compile(spec: coopcheck.KernelSpec, *, arch: str) -> Any:
        time.sleep(0.2)
        return real_compile(spec, arch=arch)

    monkeypatch.setattr(adapter, "compile", slow_compile)
    engine = _host_engine_of_one_key(monkeypatch, adapter)
    for spec, cases in groups:
        engine.prepare(spec, cases)
    first, second = (engine.run_group(spec, cases) for spec, cases in groups)
    assert sum(r.seconds for r in first) >= 0.2 > sum(r.seconds for r in second)
