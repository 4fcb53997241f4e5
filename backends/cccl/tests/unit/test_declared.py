"""What the adapter declines on a GPU is what the shipped expectations declare, case for case: a GPU lane of the
cccl backend whose kernels all pass is accepted whole, with no UnexpectedPass and no stale entry. Run on the host,
with the device a GPU machine reports, before any GPU lane finds a gap."""

from __future__ import annotations

import coopcheck
import pytest
from coopcheck_cccl import adapter as cccl

from harness.contracts import contracts_dir, load_contracts
from harness.expectations import Ledger, load_expectations
from harness.families import undeclared
from harness.journal import CaseRecord
from harness.lanes import lane_cases
from harness.statuses import Status


def _verdict(adapter: cccl.CcclAdapter, case: coopcheck.KernelSpec) -> Status:
    """The backend's own verdict in a gpu lane where every kernel it runs passes (as the engine decides it)."""
    if case.reject is not None:  # type: ignore[attr-defined]
        return Status.NOT_SUPPORTED if undeclared(adapter, case.spec) else Status.PASS  # type: ignore[attr-defined]
    spec = case.spec  # type: ignore[attr-defined]
    declined = (undeclared(adapter, spec) or adapter.unsupported_reason(spec)
                or adapter.unsupported_case(spec, case.case_values()))  # type: ignore[attr-defined]
    return Status.NOT_SUPPORTED if declined else Status.PASS


@pytest.mark.parametrize(("profile", "operations"), [
    ("pr", ("block.load", "block.store", "block.exchange", "block.shuffle", "block.reduce", "block.scan", "warp.reduce",
            "warp.scan")),
    ("full", ("block.reduce",)),
    ("full", ("block.scan",)),
    ("full", ("warp.reduce",)),
    ("full", ("warp.scan",)),
])
def test_a_passing_gpu_lane_is_accepted_whole(on_a_gpu: cccl.CcclAdapter, profile: str,
                                             operations: tuple[str, ...]) -> None:
    ledger = Ledger(load_expectations(contracts_dir() / "expectations.toml"), {"lane": "gpu-racecheck"})
    statuses: dict[Status, int] = {}
    for contract in load_contracts():
        if contract.operation not in operations:
            continue
        for case in lane_cases(contract, "cccl", profile, "gpu"):
            verdict = ledger.resolve(CaseRecord(case.id, _verdict(on_a_gpu, case), "gpu-racecheck"))
            assert verdict.accepted and verdict.status is not Status.UNEXPECTED_PASS, (case.id, verdict)
            statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
    assert statuses[Status.PASS] and statuses[Status.NOT_SUPPORTED]
    if profile == "pr":  # every gpu entry of cccl matched a case of the lane
        assert [p for p in ledger.problems() if "cccl" in p] == []
