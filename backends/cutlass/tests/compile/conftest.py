"""Compile tests share one adapter with a fresh disk cache (so the DSL really compiles, once per
kernel key), its inspection reports, the contracts' resource tables, and what every family's kernel must keep."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import coopcheck
import pytest
from coopcheck_cutlass.adapter import CutlassAdapter

from harness.contracts import Contract
from harness.inspect import KernelReport, inspect_artifacts, resource_violations

ARCH = "sm_90"
#: Registers of one SM on sm_90: a block of T threads launches only with at most 65536 / T registers a thread.
SM_REGISTERS = 65536
#: ``(spec, artifacts, contract)`` -> what the artifacts break (see :func:`violations`).
Violations = Callable[[coopcheck.KernelSpec, coopcheck.Artifacts, Contract], list[str]]


@pytest.fixture(scope="session")
def adapter(tmp_path_factory: pytest.TempPathFactory) -> CutlassAdapter:
    return CutlassAdapter(disk_cache=tmp_path_factory.mktemp("artifact-cache"))


@pytest.fixture(scope="session")
def inspect(adapter: CutlassAdapter) -> Any:
    """spec -> the inspection report of its compiled kernel (each inspected once)."""

    @cache
    def report(spec: coopcheck.KernelSpec) -> KernelReport:
        return inspect_artifacts(adapter.artifacts(adapter.compile(spec, arch=ARCH)))

    return report


@pytest.fixture(scope="session")
def violations() -> Violations:
    """``(spec, artifacts, contract)`` -> the resource rules of ``contract`` at the spec's kernel point (their
    ``when`` read from its axes) that the artifacts break, and a line where its registers do not fit its block."""
    def found(spec: coopcheck.KernelSpec, artifacts: coopcheck.Artifacts, contract: Contract) -> list[str]:
        report = inspect_artifacts(artifacts)
        point = {"dtype": spec.dtype, "block": "x".join(map(str, spec.block)), "ipt": spec.items_per_thread,
                 "alg": spec.algorithm, **dict(spec.variant)}
        broken = resource_violations(report, spec.algorithm, contract.resources_for(point),
                                     contract.oracle.ALGORITHMS)
        if report.registers * spec.threads > SM_REGISTERS:
            broken.append(f"registers: {report.registers} x {spec.threads} threads exceed the SM's {SM_REGISTERS}")
        return broken

    return found


@pytest.fixture(scope="session")
def meets_its_contract(adapter: CutlassAdapter, violations: Violations) -> Callable[[coopcheck.KernelSpec, Contract],
                                                                                   coopcheck.Artifacts]:
    """What every family's kernel must do on the host: compile for sm_90a without a GPU, be named by its
    specialization (its PTX entry and its cubin), and break none of its contract's resource rules and no register
    limit (:func:`violations`); returns its artifacts for the family's own checks."""
    def check(spec: coopcheck.KernelSpec, contract: Contract) -> coopcheck.Artifacts:
        artifacts = adapter.artifacts(adapter.compile(spec, arch=ARCH))
        assert artifacts.kernel_name == coopcheck.kernel_symbol(spec, include_block=True) + "_0"
        assert re.search(rf"^\.visible \.entry {artifacts.kernel_name}\(", artifacts.ptx or "", re.M)
        assert artifacts.kernel_name.encode() in (artifacts.cubin or b"")
        assert violations(spec, artifacts, contract) == []
        return artifacts

    return check


@pytest.fixture(scope="session")
def shuffles_without_shared_memory(meets_its_contract: Callable[[coopcheck.KernelSpec, Contract], coopcheck.Artifacts]
                                   ) -> Callable[[coopcheck.KernelSpec, Contract, int], str]:
    """What a warp family's kernel must do on the host past :func:`meets_its_contract`: take no shared memory and
    emit exactly ``shuffles`` item shuffles (two 32-bit ``shfl.sync.idx`` each for 8-byte items); returns its PTX."""
    def check(spec: coopcheck.KernelSpec, contract: Contract, shuffles: int) -> str:
        artifacts = meets_its_contract(spec, contract)
        ptx = artifacts.ptx or ""
        assert artifacts.dynamic_shared_bytes == 0 and not re.search(r"\.shared\b", ptx)
        words = 2 if spec.dtype.endswith("64") else 1
        assert len(re.findall(r"\bshfl\.sync\.idx\.b32\b", ptx)) == words * shuffles
        return ptx

    return check
