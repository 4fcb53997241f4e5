"""Compile tests share one adapter (one build per kernel key) and the contracts' resource tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import coopcheck
import pytest
from coopcheck_numba.adapter import NumbaAdapter

from harness.contracts import Contract
from harness.inspect import inspect_artifacts, resource_violations

ARCH = "sm_90"
#: Registers a thread of a 1024-thread block may use: 64K registers per SM on sm_90.
MAX_REGISTERS = 65536 // 1024


@pytest.fixture(scope="session")
def adapter() -> NumbaAdapter:
    return NumbaAdapter()


@pytest.fixture(scope="session")
def fits_a_1024_thread_block(adapter: NumbaAdapter) -> Callable[[coopcheck.KernelSpec, Contract, Sequence[str]],
                                                                 coopcheck.Artifacts]:
    """What every family's kernel of a 1024-thread block must do: compile for sm_90 without a GPU, name its
    specialization, meet its contract's resource rules (``methods``: the contract's algorithms) and use at most
    64 registers a thread; returns its artifacts (for the family's shared-memory check)."""
    def check(spec: coopcheck.KernelSpec, contract: Contract, methods: Sequence[str]) -> coopcheck.Artifacts:
        artifacts = adapter.artifacts(adapter.compile(spec, arch=ARCH))
        assert artifacts.cubin is not None and coopcheck.kernel_symbol(spec) in artifacts.kernel_name
        report = inspect_artifacts(artifacts)
        point = {"dtype": spec.dtype, "block": "1024", "ipt": spec.items_per_thread, "alg": spec.algorithm,
                 **dict(spec.variant)}
        assert resource_violations(report, spec.algorithm, contract.resources_for(point), methods) == []
        assert report.registers <= MAX_REGISTERS, f"{report.registers} registers: a 1024-thread block cannot launch"
        return artifacts

    return check
