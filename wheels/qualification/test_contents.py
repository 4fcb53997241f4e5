"""Each wheel against its source: modules and stubs byte for byte, py.typed, metadata, manifest record."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest
from packaging.version import Version

from wheels.inventory import BACKENDS_GROUP, BASE, Backend, Inventory
from wheels.manifest import WheelRecord
from wheels.metadata import requirement_problems
from wheels.native import native_builds
from wheels.sources import match_sources


def test_every_project_has_one_wheel(inventory: Inventory) -> None:
    assert sorted(inventory.wheels) == sorted(inventory.projects), "rebuild with `python -m wheels.build`"


def test_sources_match(record: WheelRecord, inventory: Inventory, matched_sources: dict[str, int]) -> None:
    wheel = inventory.wheels[record.name]
    result = match_sources(wheel, inventory.repo_root, PurePosixPath(record.project))
    matched_sources[record.name] = result.matched
    if result.problems:
        pytest.fail("\n".join(result.problems), pytrace=False)
    assert result.matched, f"{record.file}: ships no module"


def test_packages_are_typed(record: WheelRecord, inventory: Inventory) -> None:
    wheel = inventory.wheels[record.name]
    untyped = sorted(name for name in wheel.packages if PurePosixPath(name, "py.typed") not in wheel.payload)
    assert not untyped, f"{record.file}: no py.typed in {untyped}"


def test_requirements_match_pyproject(record: WheelRecord, inventory: Inventory) -> None:
    project = inventory.projects[record.name]
    wheel = inventory.wheels[record.name]
    problems = requirement_problems(wheel, project.table, f"{project.directory}/pyproject.toml")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_base_requires_nothing(inventory: Inventory) -> None:
    requires = inventory.wheels[BASE].metadata.get_all("Requires-Dist")
    assert requires is None, f"the base distribution must stay dependency-free, it requires {requires}"


def test_version_matches_pyproject(record: WheelRecord, inventory: Inventory) -> None:
    declared = inventory.projects[record.name].static_version
    if declared is not None:  # a computed version has nothing to compare with
        assert Version(declared) == Version(record.version), f"{record.file}: pyproject says {declared}"


def test_manifest_describes_wheel(record: WheelRecord, inventory: Inventory) -> None:
    wheel = inventory.wheels[record.name]
    assert (wheel.name, wheel.version, wheel.generator) == (record.name, record.version, record.build_backend)
    assert record.native == native_builds(wheel)


def test_backend_distributions_declare_one_backend(record: WheelRecord, inventory: Inventory) -> None:
    """Each backends/<name> distribution but the base provides one backend; the others provide none."""
    declared = inventory.wheels[record.name].entry_points(BACKENDS_GROUP)
    is_backend = PurePosixPath(record.project).parent == PurePosixPath("backends") and record.name != BASE
    assert len(declared) == int(is_backend), f"{record.file}: {BACKENDS_GROUP} entry points {declared}"


def test_backend_namespace_is_its_own_package(inventory: Inventory, backend: Backend) -> None:
    assert backend.namespace in inventory.wheels[backend.distribution].packages, (
        f"backend {backend.name!r}: entry point module {backend.namespace!r} is not a package of its wheel"
    )
