"""Representative kernels compile for sm_90a without a GPU and keep the contracts' resource rules;
their entry names carry the specialization and their launch asks for exactly the scratch they use."""

from __future__ import annotations

import re
from typing import Any

import coopcheck
import pytest
from coopcheck_cutlass.adapter import CutlassAdapter
from coopcheck_cutlass.plan import spec_plan

from harness.inspect import resource_violations

ARCH = "sm_90"


def test_the_kernel_keeps_the_contract_resource_rules(representative: coopcheck.KernelSpec, inspect: Any,
                                                      resources: dict[str, Any]) -> None:
    report = inspect(representative)
    assert resource_violations(report, representative.algorithm, resources[representative.operation]) == []


def test_the_entry_name_carries_the_specialization(representative: coopcheck.KernelSpec,
                                                   adapter: CutlassAdapter) -> None:
    artifacts = adapter.artifacts(adapter.compile(representative, arch=ARCH))
    symbol = coopcheck.kernel_symbol(representative, include_block=True)
    assert artifacts.kernel_name == f"{symbol}_0"
    assert re.search(rf"^\.visible \.entry {artifacts.kernel_name}\(", artifacts.ptx or "", re.M)
    assert artifacts.kernel_name.encode() in (artifacts.cubin or b"")
    assert artifacts.arch == "sm_90a"


def test_the_launch_asks_for_exactly_the_scratch_of_the_plan(representative: coopcheck.KernelSpec,
                                                             adapter: CutlassAdapter) -> None:
    artifacts = adapter.artifacts(adapter.compile(representative, arch=ARCH))
    assert artifacts.dynamic_shared_bytes == spec_plan(representative).scratch_bytes


WIDE = {
    coopcheck.KernelSpec("block.load", "int32", (128,), 4, "vectorize"): "LDG.E.128",
    coopcheck.KernelSpec("block.load", "uint8", (16, 8), 16, "vectorize"): "LDG.E.128",
    coopcheck.KernelSpec("block.load", "int16", (8, 4, 2), 4, "vectorize"): "LDG.E.64",
    coopcheck.KernelSpec("block.store", "float64", (64,), 2, "vectorize"): "STG.E.128",
    coopcheck.KernelSpec("block.store", "uint16", (100,), 8, "vectorize"): "STG.E.128",
}


@pytest.mark.parametrize(("spec", "wide"), WIDE.items(),
                         ids=[coopcheck.kernel_symbol(s, include_block=True) for s in WIDE])
def test_vectorize_issues_more_wide_accesses_than_direct(spec: coopcheck.KernelSpec, wide: str, inspect: Any) -> None:
    """Direct has its own 64-bit loads (the per-block offset), so compare counts."""
    direct = coopcheck.KernelSpec(spec.operation, spec.dtype, spec.block, spec.items_per_thread, "direct")
    assert inspect(spec).opcodes[wide] > inspect(direct).opcodes[wide], (
        sorted(inspect(spec).opcodes), sorted(inspect(direct).opcodes))
