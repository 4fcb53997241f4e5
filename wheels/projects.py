"""The repository's distributions, found by globbing pyproject files, and the git state they are built from.

A distribution is any ``backends/*/pyproject.toml`` or the root ``pyproject.toml`` that has a
``[project]`` table; nothing here names a particular backend.
"""

from __future__ import annotations

import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name

from wheels import WheelsError

#: Where distributions live, relative to the repository root, in the order they are built.
PYPROJECT_GLOBS = ("backends/*/pyproject.toml", "pyproject.toml")
WHOLE_TREE = PurePosixPath(".")


@dataclass(frozen=True)
class Project:
    """One distribution's source: its folder (relative to the repository root) and its pyproject table."""

    name: NormalizedName
    directory: PurePosixPath
    table: dict[str, Any]

    @property
    def static_version(self) -> str | None:
        """The version the pyproject states, or None when the build backend computes it."""
        version = self.table.get("version")
        return None if "version" in self.table.get("dynamic", ()) else version


def discover(root: Path) -> list[Project]:
    """Every distribution under ``root``; raises :class:`WheelsError` for a nameless or duplicate one."""
    projects: dict[NormalizedName, Project] = {}
    for pattern in PYPROJECT_GLOBS:
        for path in sorted(root.glob(pattern)):
            where = path.relative_to(root).as_posix()
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise WheelsError(f"{where}: not valid TOML: {exc}") from exc
            table = data.get("project")
            if table is None:  # a pyproject that only configures tools
                continue
            if not isinstance(table.get("name"), str):
                raise WheelsError(f"{where}: [project] has no static 'name'")
            name = canonicalize_name(table["name"])
            if name in projects:
                raise WheelsError(f"{where}: distribution {name!r} is also in {projects[name].directory}")
            directory = PurePosixPath(path.parent.relative_to(root).as_posix())
            projects[name] = Project(name, directory, table)
    return list(projects.values())


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)


def source_files(root: Path, directory: PurePosixPath = WHOLE_TREE) -> list[PurePosixPath]:
    """Files under ``directory`` that a build may see: tracked or untracked, never ignored."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", str(directory))
    if listed.returncode:
        raise WheelsError(f"{root}: cannot list source files: {listed.stderr.strip()}")
    # --cached still lists a tracked file deleted from the work tree; a build never sees it.
    return sorted(PurePosixPath(p) for p in listed.stdout.split("\0") if p and (root / p).is_file())


def source_state(root: Path) -> tuple[str | None, bool]:
    """The commit the work tree is on (None before the first commit) and whether it differs from it."""
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    commit = head.stdout.strip() if head.returncode == 0 else None
    status = _git(root, "status", "--porcelain", "--untracked-files=normal")
    if status.returncode:
        raise WheelsError(f"{root}: git status failed: {status.stderr.strip()}")
    return commit, commit is None or bool(status.stdout.strip())
