"""A tiny throwaway repository with two distributions, laid out like the real one, and its built wheels.

Builds use ``--no-isolation`` (this environment's setuptools), so the suite stays fast and offline.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from wheels.build import build_all
from wheels.manifest import Manifest

#: A stand-in for compiled device code and the build manifest its build writes beside it.
FATBIN = "not really a fatbin\n"
KERNELS_MANIFEST = {
    "tools": {"rustc": "rustc 1.96.0", "ptxas": "13.0"},
    "capabilities": [{"arch": "sm_80"}, {"arch": "sm_90", "ptx": True}],
    "sha256": hashlib.sha256(FATBIN.encode()).hexdigest(),
}
#: path -> text of the tiny repository: a dependency-free base, a backend with a stub, package data,
#: requirements and an extra, a root pyproject that only configures tools, and an ignored folder.
TINY_REPO = {
    ".gitignore": "build/\n*.egg-info/\ndist/\n",
    "pyproject.toml": "[tool.ruff]\nline-length = 100\n",
    "backends/base/pyproject.toml": """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-base"
version = "1.0"
dependencies = []

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools.package-data]
tiny_base = ["py.typed"]
""",
    "backends/base/src/tiny_base/__init__.py": '"""Tiny base."""\n',
    "backends/base/src/tiny_base/py.typed": "",
    "backends/plug/pyproject.toml": """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny_plug"
version = "2.0"
dependencies = ["tiny-base", "numpy>=1.24", "never-here; python_version < '3'"]

[project.optional-dependencies]
Fancy = ["rich>=13"]

[project.entry-points."coopcheck.backends"]
plug = "tiny_plug.adapter:Adapter"

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools.package-data]
tiny_plug = ["py.typed", "*.pyi", "kernels.*"]
""",
    "backends/plug/src/tiny_plug/__init__.py": '"""Tiny plug."""\n',
    "backends/plug/src/tiny_plug/adapter.py": "class Adapter:\n    name = 'plug'\n",
    "backends/plug/src/tiny_plug/adapter.pyi": "class Adapter:\n    name: str\n",
    "backends/plug/src/tiny_plug/sub/__init__.py": "",
    "backends/plug/src/tiny_plug/py.typed": "",
    "backends/plug/src/tiny_plug/kernels.fatbin": FATBIN,
    "backends/plug/src/tiny_plug/kernels.json": json.dumps(KERNELS_MANIFEST),
}


@dataclass(frozen=True)
class Repo:
    """A git work tree to write files into."""

    root: Path

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", "-C", str(self.root), *args], capture_output=True, text=True, check=True)
        return done.stdout

    def write(self, files: dict[str, str]) -> None:
        for relative, text in files.items():
            path = self.root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def commit(self) -> str:
        self.git("add", "-A")
        self.git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "tiny")
        return self.git("rev-parse", "HEAD").strip()


def make_repo(root: Path) -> Repo:
    """:data:`TINY_REPO` as a committed git repository at ``root``."""
    root.mkdir(parents=True)
    repo = Repo(root)
    repo.git("init", "-q")
    repo.write(TINY_REPO)
    repo.commit()
    return repo


@pytest.fixture
def tiny(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def empty_git(tmp_path: Path) -> Repo:
    """A git repository without a commit."""
    repo = Repo(tmp_path / "empty")
    repo.root.mkdir()
    repo.git("init", "-q")
    return repo


@dataclass(frozen=True)
class Built:
    """The tiny repository built once per session: do not change it, copy ``dist`` first."""

    repo: Repo
    dist: Path
    manifest: Manifest


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    repo = make_repo(tmp_path_factory.mktemp("built") / "repo")
    dist = repo.root / "dist"
    return Built(repo, dist, build_all(repo.root, dist, isolation=False))


@pytest.fixture
def dist_copy(built: Built, tmp_path: Path) -> Path:
    """A private copy of the built wheels and manifest."""
    return Path(shutil.copytree(built.dist, tmp_path / "dist", ignore=shutil.ignore_patterns("logs")))
