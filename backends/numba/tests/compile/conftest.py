"""Compile tests share one adapter (one build per kernel key) and the contracts' resource tables."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from coop_numba.adapter import NumbaAdapter


@pytest.fixture(scope="session")
def adapter() -> NumbaAdapter:
    return NumbaAdapter()


@pytest.fixture(scope="session")
def resources() -> dict[str, tuple[dict[str, Any], ...]]:
    """operation -> the resource rules of its shipped contract."""
    from harness.contracts import load_contracts

    return {contract.operation: contract.resources for contract in load_contracts()}


@pytest.fixture(scope="session")
def mutants() -> ModuleType:
    """``tests/mutants.py``, which is also a script, loaded by path."""
    path = Path(__file__).parent.parent / "mutants.py"
    spec = importlib.util.spec_from_file_location("coop_numba_mutants", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
