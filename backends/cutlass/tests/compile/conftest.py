"""Compile tests share one adapter with a fresh disk cache (so the DSL really compiles, once per
kernel key), its inspection reports, and the contracts' resource tables."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import coop
import pytest
from coop_cutlass.adapter import CutlassAdapter

from harness.inspect import KernelReport, inspect_artifacts

ARCH = "sm_90"


@pytest.fixture(scope="session")
def adapter(tmp_path_factory: pytest.TempPathFactory) -> CutlassAdapter:
    return CutlassAdapter(disk_cache=tmp_path_factory.mktemp("artifact-cache"))


@pytest.fixture(scope="session")
def inspect(adapter: CutlassAdapter) -> Any:
    """spec -> the inspection report of its compiled kernel (each inspected once)."""

    @cache
    def report(spec: coop.KernelSpec) -> KernelReport:
        return inspect_artifacts(adapter.artifacts(adapter.compile(spec, arch=ARCH)))

    return report


@pytest.fixture(scope="session")
def resources() -> dict[str, tuple[dict[str, Any], ...]]:
    """operation -> the resource rules of its shipped contract."""
    from harness.contracts import load_contracts

    return {contract.operation: contract.resources for contract in load_contracts()}


@pytest.fixture(scope="session")
def mutants() -> ModuleType:
    """``tests/mutants.py``, which is also a script, loaded by path."""
    path = Path(__file__).parent.parent / "mutants.py"
    spec = importlib.util.spec_from_file_location("coop_cutlass_mutants", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
