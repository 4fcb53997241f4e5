"""Qualification of installed wheels: options, the repository's ``wheels`` tooling, per-wheel parameters.

``python -m wheels.qualify`` runs these tests with a fresh virtualenv's interpreter. Only the
``wheels`` tooling is loaded from the repository, by path: putting the repository on ``sys.path``
would let its sources shadow the installed wheels under test.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from wheels.inventory import Inventory

#: Runs ``import:<module>`` and ``register:<backend>`` steps in order and prints a JSON report.
PROBE = """
import importlib, json, sys
report = {"error": None, "adapters": {}}
try:
    for step in sys.argv[1:]:
        action, _, target = step.partition(":")
        if action == "register":
            import coopcheck
            report["adapters"][target] = coopcheck.register(target).name
        else:
            importlib.import_module(target)
except Exception as exc:
    report["error"] = {
        "type": f"{type(exc).__module__}.{type(exc).__qualname__}", "message": str(exc),
        "backend": getattr(exc, "backend", None), "missing": getattr(exc, "missing", None),
    }
import coopcheck
report["active"] = sorted(coopcheck.active())
report["modules"] = sorted(sys.modules)
print(json.dumps(report))
"""
Probe = Callable[..., dict[str, Any]]

INVENTORY = pytest.StashKey["Inventory"]()
MATCHED = pytest.StashKey[dict[str, int]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("qualification", "qualification of installed wheels")
    group.addoption("--repo-root", type=Path, help="repository the wheels were built from")
    group.addoption("--manifest", type=Path, help="manifest.json written by `python -m wheels.build`")


def _load_tooling(repo_root: Path) -> None:
    init = repo_root / "wheels" / "__init__.py"
    search = [str(init.parent)]
    spec = importlib.util.spec_from_file_location("wheels", init, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise pytest.UsageError(f"--repo-root {repo_root}: no wheels/__init__.py there")
    module = importlib.util.module_from_spec(spec)
    sys.modules["wheels"] = module
    spec.loader.exec_module(module)


def pytest_configure(config: pytest.Config) -> None:
    repo_root, manifest = config.getoption("--repo-root"), config.getoption("--manifest")
    if repo_root is None or manifest is None:
        raise pytest.UsageError("--repo-root and --manifest are required; run `python -m wheels.qualify`")
    _load_tooling(repo_root.resolve())
    from wheels import WheelsError
    from wheels.inventory import take_inventory

    try:
        inventory = take_inventory(repo_root.resolve(), manifest.resolve())
    except WheelsError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not inventory.backends:
        raise pytest.UsageError(f"{manifest}: no wheel declares a backend entry point: nothing to qualify")
    config.stash[INVENTORY] = inventory
    config.stash[MATCHED] = {}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    inventory = metafunc.config.stash[INVENTORY]
    if "record" in metafunc.fixturenames:
        records = inventory.manifest.wheels
        metafunc.parametrize("record", records, ids=[record.name for record in records])
    if "backend" in metafunc.fixturenames:
        backends = inventory.backends
        metafunc.parametrize("backend", backends, ids=[backend.name for backend in backends])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    matched = config.stash.get(MATCHED, {})
    if matched:
        per_wheel = ", ".join(f"{name} {count}" for name, count in sorted(matched.items()))
        terminalreporter.write_line(f"{sum(matched.values())} sources/stubs match ({per_wheel})")


@pytest.fixture(scope="session")
def inventory(pytestconfig: pytest.Config) -> Inventory:
    return pytestconfig.stash[INVENTORY]


@pytest.fixture(scope="session")
def matched_sources(pytestconfig: pytest.Config) -> dict[str, int]:
    """Sources/stubs matched per wheel, for the summary line."""
    return pytestconfig.stash[MATCHED]


@pytest.fixture(scope="session")
def site_packages() -> set[Path]:
    """This virtualenv's site-packages folders, where every project import must resolve."""
    return {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}


@pytest.fixture(scope="session")
def bare_python(inventory: Inventory, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding the project's wheels and none of their third-party requirements."""
    from wheels.install import install
    from wheels.qualify import make_venv

    python = make_venv(tmp_path_factory.mktemp("bare") / "venv", inherit=False)
    install(inventory.dist, python, with_dependencies=False)
    return python


@pytest.fixture(scope="session")
def probe() -> Probe:
    """Run :data:`PROBE` in a fresh isolated interpreter (``python -I``) and return its report."""

    def run(python: Path | str, *steps: str) -> dict[str, Any]:
        done = subprocess.run([str(python), "-I", "-c", PROBE, *steps], capture_output=True, text=True)
        assert done.returncode == 0, f"probe {steps} crashed:\n{done.stderr}"
        report: dict[str, Any] = json.loads(done.stdout)
        return report

    return run
