"""Fixtures shared by the harness's own tests (the model backend registered as an installed one, small contracts)
and the fault suite's figures, printed at the end of every session."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from coopcheck import registry

from harness.fingerprint import MANIFEST_ENV
from tests.faults.figures import Figures
from tests.support.model_backend import ENTRY_POINT

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_wheel_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's own runs are source runs: tox points COOP_WHEEL_MANIFEST at wheels/dist, which a fresh
    clone's host env has not built yet (a test that needs a manifest sets its own)."""
    monkeypatch.delenv(MANIFEST_ENV, raising=False)


@pytest.fixture
def model_backend(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Register backend 'model' in this process and, through a dist-info folder, in child processes."""
    name, _, value = (part.strip() for part in ENTRY_POINT.partition("="))
    monkeypatch.setattr(registry, "_entry_points", lambda: {name: EntryPoint(name, value, registry.GROUP)})
    monkeypatch.setattr(registry, "_active", {})
    site = tmp_path / "site"
    info = site / "coop_model_backend-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: coop-model-backend\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[{registry.GROUP}]\n{ENTRY_POINT}\n")
    paths = [str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    yield site


@pytest.fixture
def small_contracts(tmp_path: Path) -> Path:
    """The shipped Load and Store contracts cut down to a few kernel points, for end-to-end runs in seconds (the
    families the model backend's tests were written against: another family gets its own end-to-end tests)."""
    folder = tmp_path / "contracts"
    folder.mkdir()
    for path in (ROOT / "contracts" / name for name in ("block_load.toml", "block_store.toml")):
        text = path.read_text()
        text = text.replace('dtype = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64", '
                            '"float16", "float32", "float64"]', 'dtype = ["int16", "float64"]')
        text = text.replace('block = ["32", "64", "100", "128", "256", "1024", "16x8", "32x4", "8x4x2", "4x4x4", '
                            '"5x3x2"]', 'block = ["64", "5x3x2"]')
        text = text.replace("ipt = [1, 2, 3, 4, 7, 8, 16]", "ipt = [1, 3]")
        text = re.sub(r"(?m)^when = .*\n", "", text)  # rule conditions may name values cut above
        (folder / path.name).write_text(text)
    (folder / "expectations.toml").write_text("schema = 1\n")
    return folder


def pytest_configure(config: pytest.Config) -> None:
    """The fault suite's figures print at the session's end (registered here: an xdist controller collects
    nothing, so it never loads the conftest of tests/faults)."""
    config.pluginmanager.register(Figures(), "fault-figures")
