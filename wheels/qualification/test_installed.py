"""The virtualenv holds exactly the manifest's wheels, consistently, and imports resolve to them."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path

from wheels.inventory import Inventory
from wheels.manifest import WheelRecord


def test_runs_outside_the_repository(inventory: Inventory) -> None:
    assert not Path.cwd().resolve().is_relative_to(inventory.repo_root), f"working directory {Path.cwd()}"


def test_pip_check() -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_installed_files_are_the_wheel(record: WheelRecord, inventory: Inventory, site_packages: set[Path]) -> None:
    installed = importlib.metadata.distribution(record.name)
    location = Path(str(installed.locate_file(""))).resolve()
    assert location in site_packages, f"{record.name} is installed in {location}, not this virtualenv"
    assert installed.version == record.version
    differ = [
        str(path)
        for path, blob in inventory.wheels[record.name].payload.items()
        if not (location / path).is_file() or (location / path).read_bytes() != blob
    ]
    assert not differ, f"{record.file}: installed files missing or different: {differ}"


def locate(name: str) -> ModuleSpec | None:
    """Where ``import name`` would load from, asked of the import system's finders without running any module.

    ``importlib.util.find_spec`` would run the parent packages, and with them imports of optional extras.
    """
    parent, _, _ = name.rpartition(".")
    path = None
    if parent:
        found = locate(parent)
        if found is None or found.submodule_search_locations is None:
            return None
        path = list(found.submodule_search_locations)
    for finder in sys.meta_path:
        spec = finder.find_spec(name, path)
        if spec is not None:
            return spec
    return None


def test_imports_resolve_to_site_packages(record: WheelRecord, inventory: Inventory, site_packages: set[Path]) -> None:
    elsewhere = {}
    for name in inventory.wheels[record.name].modules:
        spec = locate(name)
        origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
        if origin is None or not any(origin.is_relative_to(folder) for folder in site_packages):
            elsewhere[name] = str(origin)
    assert not elsewhere, f"{record.file}: modules imported from outside {sorted(site_packages)}: {elsewhere}"
