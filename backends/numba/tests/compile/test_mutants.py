"""The checks bite: the resource rules flag a direct Load that uses shared memory, and a transpose, an Exchange
a Shuffle and a Scan without their barriers show fewer BAR than the real ones (racecheck's evidence is ``mutants.py``'s
GPU run)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import coopcheck
import pytest
from coopcheck.ptx import entry_name
from coopcheck_numba import kernels, toolchain
from coopcheck_numba.adapter import NumbaAdapter

from harness.inspect import KernelReport, inspect_artifacts, resource_violations

ARCH = "sm_90"


def _inspect(kernel: Any, dynamic_shared_bytes: int) -> KernelReport:
    ptx = toolchain.compile_ptx(kernel.dispatcher.py_func, kernel.signature, ARCH, kernel.symbol)
    artifacts = coopcheck.Artifacts(kernel_name=entry_name(ptx), ptx=ptx, arch=ARCH,
                               cubin=toolchain.link_cubin(ptx, ARCH, kernel.symbol),
                               dynamic_shared_bytes=dynamic_shared_bytes)
    return inspect_artifacts(artifacts)


def test_direct_through_shared_memory_is_flagged(mutants: ModuleType, resources: dict[str, Any]) -> None:
    report = _inspect(mutants.direct_through_shared(), dynamic_shared_bytes=0)
    found = resource_violations(report, "direct", resources["block.load"])
    for rule in ("shared_bytes:", "barriers:", "forbid_sass BAR", "forbid_sass LDS", "forbid_sass STS"):
        assert any(message.startswith(rule) for message in found), (rule, found)


def test_transpose_without_its_barrier_has_fewer_bar(mutants: ModuleType, adapter: NumbaAdapter,
                                                     resources: dict[str, Any]) -> None:
    spec = mutants.SPEC
    real = inspect_artifacts(adapter.artifacts(adapter.compile(spec, arch=ARCH)))
    racy = _inspect(mutants.transpose_without_barrier(), dynamic_shared_bytes=spec.tile * 4)
    assert len(racy.find("BAR")) < len(real.find("BAR"))
    assert resource_violations(real, spec.algorithm, resources[spec.operation]) == []
    assert any(m.startswith("require_sass BAR") for m in
               resource_violations(racy, spec.algorithm, resources[spec.operation]))


@pytest.mark.parametrize("family", ["exchange", "shuffle", "scan"])
def test_a_family_probe_without_its_barrier_has_fewer_bar(mutants: ModuleType, adapter: NumbaAdapter,
                                                          family: str) -> None:
    spec, without_barrier = mutants.FAMILY_PROBES[family]
    artifacts = adapter.artifacts(adapter.compile(spec, arch=ARCH))
    with without_barrier():
        racy_kernel = kernels.contract_kernel(spec)
    racy = _inspect(racy_kernel, dynamic_shared_bytes=artifacts.dynamic_shared_bytes)
    assert len(racy.find("BAR")) < len(inspect_artifacts(artifacts).find("BAR"))
    # the builders' caches were bypassed: the real kernel of this process is still the real one
    assert kernels.contract_kernel(spec) is adapter.compile(spec, arch=ARCH).build.kernel
