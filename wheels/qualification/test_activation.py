"""Activation (``coopcheck.register`` + importing the backend's namespace) in fresh interpreters.

In this virtualenv every backend activates in either order, alone or all together, and importing
the base loads no toolchain. In a virtualenv without the backends' third-party requirements, a
backend that needs one refuses with ``coopcheck.BackendUnavailable`` naming it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from wheels.inventory import BASE, Backend, Inventory

Probe = Callable[..., dict[str, Any]]
#: Top-level modules that importing the base must not load.
TOOLCHAIN_MODULES = frozenset({"numba", "numba_cuda", "cutlass", "cuda", "torch"})
ORDERS = ("register-then-import", "import-then-register")


def activation(backend: Backend, order: str) -> list[str]:
    steps = [f"register:{backend.name}", f"import:{backend.namespace}"]
    return steps if order == "register-then-import" else steps[::-1]


def top_level(report: dict[str, Any]) -> set[str]:
    return {module.partition(".")[0] for module in report["modules"]}


def test_base_import_is_host_only(inventory: Inventory, probe: Probe) -> None:
    report = probe(sys.executable, *(f"import:{name}" for name in inventory.wheels[BASE].modules))
    assert report["error"] is None, report["error"]
    loaded = top_level(report) & (TOOLCHAIN_MODULES | {backend.namespace for backend in inventory.backends})
    assert not loaded, f"importing {BASE} loaded {sorted(loaded)}"
    assert report["active"] == [], "importing the base activated a backend"


@pytest.mark.parametrize("order", ORDERS)
def test_activation(backend: Backend, order: str, probe: Probe) -> None:
    report = probe(sys.executable, *activation(backend, order))
    assert report["error"] is None, report["error"]
    assert report["active"] == [backend.name]
    assert report["adapters"] == {backend.name: backend.name}, "the adapter's name differs from its entry point"


def test_all_backends_active_in_one_process(inventory: Inventory, probe: Probe) -> None:
    backends = inventory.backends
    steps = [f"register:{b.name}" for b in backends] + [f"import:{b.namespace}" for b in backends]
    report = probe(sys.executable, *steps)
    assert report["error"] is None, report["error"]
    assert report["active"] == sorted(b.name for b in backends)


def test_base_imports_without_any_requirement(bare_python: Path, probe: Probe) -> None:
    report = probe(bare_python, f"import:{BASE}")
    assert report["error"] is None, report["error"]


@pytest.mark.parametrize("order", ORDERS)
def test_activation_without_requirements(backend: Backend, order: str, bare_python: Path, probe: Probe) -> None:
    """With none of its third-party requirements installed, a backend that has some refuses by name."""
    report = probe(bare_python, *activation(backend, order))
    error = report["error"]
    if not backend.third_party:
        assert error is None, f"backend {backend.name!r} needs no third-party distribution, yet: {error}"
        return
    missing = sorted(backend.third_party)
    assert error is not None, f"backend {backend.name!r} activated without {missing}"
    assert error["type"] == "coopcheck.availability.BackendUnavailable", (
        f"backend {backend.name!r} without {missing} must raise coopcheck.BackendUnavailable (call coopcheck.require "
        f"before importing its toolchain), not {error['type']}: {error['message']}"
    )
    assert error["backend"] == backend.name
    named = {canonicalize_name(Requirement(dist).name) for dist in error["missing"].values()}
    assert named & backend.third_party, f"names {sorted(named)}, none of its requirements {missing}"
    assert report["active"] == []
