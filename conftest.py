"""Markers from the path (a test's folder says what it needs), so lanes select by marker, not by name;
the id of a kernel-spec parameter; and the fixtures every backend's tests share."""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any

import coopcheck
import pytest

#: folder name under backends/<name>/tests/ -> marker
FOLDER_MARKERS = {"compile": "compile", "runtime": "runtime"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        if "backends" in parts and "tests" in parts:
            folder = parts[parts.index("tests") + 1] if parts.index("tests") + 1 < len(parts) else ""
            if folder in FOLDER_MARKERS:
                item.add_marker(FOLDER_MARKERS[folder])


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A kernel spec parameter is named as its kernel is (:func:`coopcheck.kernel_symbol`, with the block): the name
    its cubin, listing and sanitizer records carry."""
    return coopcheck.kernel_symbol(val, include_block=True) if isinstance(val, coopcheck.KernelSpec) else None


@pytest.fixture(scope="session")
def resources() -> dict[str, tuple[dict[str, Any], ...]]:
    """operation -> the resource rules of its shipped contract."""
    from harness.contracts import load_contracts

    return {contract.operation: contract.resources for contract in load_contracts()}


@pytest.fixture(scope="module")
def adapter(request: pytest.FixtureRequest) -> coopcheck.Adapter:
    """The requesting backend's registered adapter (``backends/<name>/tests/...``), failing, not skipping,
    where it cannot launch: runtime tests launch kernels."""
    name = next(p for p in request.path.parents if p.name == "tests").parent.name
    adapter = coopcheck.register(name)
    if not adapter.can_launch():
        pytest.fail(f"runtime tests launch kernels and this process has no CUDA device that {name} can launch "
                    f"on; run them on a GPU: pytest backends/{name}/tests/runtime", pytrace=False)
    return adapter


@pytest.fixture(scope="module")
def mutants(request: pytest.FixtureRequest) -> ModuleType:
    """The requesting backend's ``tests/mutants.py`` (also a script for the GPU), loaded by path."""
    tests = next(p for p in request.path.parents if p.name == "tests")
    spec = importlib.util.spec_from_file_location(f"coop_{tests.parent.name}_mutants", tests / "mutants.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
