"""What a manifest describes: its wheels, the projects they were built from and the backends they provide."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wheels.manifest import Manifest, read_manifest
from wheels.metadata import third_party
from wheels.projects import Project, discover
from wheels.wheelfile import Wheel, read_wheel

#: The dependency-free base distribution; its import package has the same name.
BASE = "coopcheck"
#: Entry-point group through which backends arrive (``coopcheck.registry.GROUP``).
BACKENDS_GROUP = "coopcheck.backends"


@dataclass(frozen=True)
class Backend:
    """One ``coopcheck.backends`` entry point and the qualified namespace package it lives in."""

    name: str
    distribution: str
    namespace: str  # top-level package of the entry point's module, e.g. ``coopcheck_numba``
    third_party: frozenset[str]  # requirements that are not the project's own distributions


@dataclass(frozen=True)
class Inventory:
    """Everything a qualification run checks, read once."""

    repo_root: Path
    dist: Path
    manifest: Manifest
    wheels: dict[str, Wheel]  # by distribution name
    projects: dict[str, Project]  # by distribution name
    backends: tuple[Backend, ...]


def take_inventory(repo_root: Path, manifest_path: Path) -> Inventory:
    """Read the manifest, its wheels, the backends they declare and the repository's projects."""
    dist = manifest_path.parent
    manifest = read_manifest(manifest_path)
    wheels = {record.name: read_wheel(dist / record.file) for record in manifest.wheels}
    backends = [
        Backend(
            name,
            distribution,
            namespace=reference.partition(":")[0].split(".")[0].strip(),
            third_party=frozenset(third_party(wheel, wheels)),
        )
        for distribution, wheel in wheels.items()
        for name, reference in wheel.entry_points(BACKENDS_GROUP).items()
    ]
    projects: dict[str, Project] = {project.name: project for project in discover(repo_root)}
    return Inventory(repo_root, dist, manifest, wheels, projects, tuple(backends))
