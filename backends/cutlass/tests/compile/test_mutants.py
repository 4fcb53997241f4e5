"""The checks bite: the host resource rules flag a direct Load staged through shared memory and a
transpose without its barrier (racecheck's evidence is ``mutants.py`` run on a GPU)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from coopcheck_cutlass.adapter import CutlassAdapter

from harness.inspect import inspect_artifacts, resource_violations

ARCH = "sm_90"


def test_direct_through_shared_memory_is_flagged(mutants: ModuleType, resources: dict[str, Any]) -> None:
    _, compiled = mutants.compile_mutant(mutants.direct_through_shared, mutants.DIRECT)
    found = resource_violations(inspect_artifacts(compiled.artifacts), "direct", resources["block.load"])
    for rule in ("shared_bytes:", "barriers:", "forbid_sass BAR", "forbid_sass LDS", "forbid_sass STS"):
        assert any(message.startswith(rule) for message in found), (rule, found)


def test_transpose_without_its_barrier_is_flagged(mutants: ModuleType, adapter: CutlassAdapter,
                                                  resources: dict[str, Any]) -> None:
    spec = mutants.TRANSPOSE
    real = inspect_artifacts(adapter.artifacts(adapter.compile(spec, arch=ARCH)))
    _, compiled = mutants.compile_mutant(mutants.transpose_without_barrier, spec)
    racy = inspect_artifacts(compiled.artifacts)
    assert resource_violations(real, spec.algorithm, resources[spec.operation]) == []
    found = resource_violations(racy, spec.algorithm, resources[spec.operation])
    assert [m for m in found if m.startswith("require_sass BAR")], found
    assert racy.find("STS") and racy.find("LDS")


@pytest.mark.parametrize("mutant", ["direct_through_shared", "transpose_without_barrier"])
def test_a_mutant_leaves_the_real_kernel_alone(mutant: str, mutants: ModuleType,
                                               resources: dict[str, Any]) -> None:
    """Mutants compile in an adapter of their own: the shared adapter's kernels stay clean."""
    spec = mutants.DIRECT if mutant == "direct_through_shared" else mutants.TRANSPOSE
    mutants.compile_mutant(getattr(mutants, mutant), spec)
    report = inspect_artifacts(CutlassAdapter(disk_cache=False).compile(spec, arch=ARCH).artifacts)
    assert resource_violations(report, spec.algorithm, resources[spec.operation]) == []
