"""``wheels.build``: fresh wheels from an export of the tree, and the manifest that describes them."""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from wheels import WheelsError
from wheels.build import build_all
from wheels.manifest import MANIFEST_NAME, read_manifest
from wheels.wheelfile import read_wheel, sha256


def test_manifest_records_every_wheel(built: Any) -> None:
    manifest = built.manifest
    assert read_manifest(built.dist / MANIFEST_NAME) == manifest
    assert [(w.name, w.version, w.project) for w in manifest.wheels] == [
        ("tiny-base", "1.0", "backends/base"),
        ("tiny-plug", "2.0", "backends/plug"),
    ]
    for wheel in manifest.wheels:
        assert wheel.sha256 == sha256(built.dist / wheel.file)
        assert wheel.build_backend.startswith("setuptools (")
    assert sorted(p.name for p in built.dist.glob("*.whl")) == sorted(w.file for w in manifest.wheels)


def test_manifest_records_source_and_toolchain(built: Any) -> None:
    manifest = built.manifest
    assert (manifest.source_commit, manifest.dirty) == (built.repo.git("rev-parse", "HEAD").strip(), False)
    assert set(manifest.toolchain) == {"python", "build"}


def test_native_build_manifests_are_carried_over(built: Any) -> None:
    plug = next(w for w in built.manifest.wheels if w.name == "tiny-plug")
    assert plug.native == [
        {
            "artifact": "tiny_plug/kernels.fatbin",
            "sha256": hashlib.sha256(b"not really a fatbin\n").hexdigest(),
            "tools": {"rustc": "rustc 1.96.0", "ptxas": "13.0"},
            "capabilities": ["sm_80", "sm_90"],
        }
    ]
    assert built.manifest.wheels[0].native == []


def test_build_sees_the_tree_a_clone_would_plus_changes(tiny: Any) -> None:
    """Ignored build output from an earlier in-place build stays out, untracked sources go in (dirty)."""
    tiny.write(
        {
            "backends/base/build/lib/tiny_base/stale.py": "",
            "backends/base/src/tiny_base/extra.py": "X = 1\n",
            "dist/old-0.1-py3-none-any.whl": "",
        }
    )
    manifest = build_all(tiny.root, tiny.root / "dist", isolation=False)
    base = read_wheel(tiny.root / "dist" / manifest.wheels[0].file)
    assert PurePosixPath("tiny_base/stale.py") not in base.members
    assert base.members[PurePosixPath("tiny_base/extra.py")] == b"X = 1\n"
    assert manifest.dirty is True
    assert not (tiny.root / "dist/old-0.1-py3-none-any.whl").exists(), "the dist folder is wiped first"


def test_failed_build_names_the_project_and_shows_the_log(tiny: Any) -> None:
    tiny.write({"backends/base/pyproject.toml": '[project]\nname = "tiny-base"\nversion = "not a version"\n'})
    with pytest.raises(WheelsError, match=r"backends/base: `python -m build --wheel` exited 1; last lines of "):
        build_all(tiny.root, tiny.root / "dist", isolation=False)
    assert (tiny.root / "dist/logs/tiny-base.log").is_file()


def test_no_distribution_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WheelsError, match=r"no distribution matches backends/\*/pyproject.toml, pyproject.toml"):
        build_all(tmp_path, tmp_path / "dist", isolation=False)
