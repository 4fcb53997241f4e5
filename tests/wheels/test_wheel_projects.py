"""Distribution discovery and the git state a build records."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from wheels import WheelsError
from wheels.projects import discover, source_files, source_state


def test_discover_globs_backends_and_skips_a_tool_only_root(tiny: Any) -> None:
    projects = discover(tiny.root)
    assert [(p.name, str(p.directory)) for p in projects] == [
        ("tiny-base", "backends/base"),
        ("tiny-plug", "backends/plug"),
    ]
    assert projects[1].static_version == "2.0"


def test_discover_includes_a_root_distribution(tiny: Any) -> None:
    tiny.write({"pyproject.toml": '[project]\nname = "Tiny.Harness"\ndynamic = ["version"]\n'})
    root = discover(tiny.root)[-1]
    assert (root.name, str(root.directory), root.static_version) == ("tiny-harness", ".", None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[project\n", "backends/base/pyproject.toml: not valid TOML"),
        ("[project]\nversion = '1'\n", "backends/base/pyproject.toml: [project] has no static 'name'"),
        (
            "[project]\nname = 'Tiny_Plug'\n",
            "backends/plug/pyproject.toml: distribution 'tiny-plug' is also in",
        ),
    ],
    ids=["toml", "nameless", "duplicate"],
)
def test_discover_errors_name_the_file(tiny: Any, text: str, message: str) -> None:
    tiny.write({"backends/base/pyproject.toml": text})
    with pytest.raises(WheelsError, match=re.escape(message)):
        discover(tiny.root)


def test_source_files_are_tracked_or_untracked_never_ignored_or_deleted(tiny: Any) -> None:
    tiny.write({"backends/base/new.py": "", "backends/base/build/lib/stale.py": ""})
    (tiny.root / "backends/base/src/tiny_base/py.typed").unlink()
    assert source_files(tiny.root, PurePosixPath("backends/base")) == [
        PurePosixPath("backends/base/new.py"),
        PurePosixPath("backends/base/pyproject.toml"),
        PurePosixPath("backends/base/src/tiny_base/__init__.py"),
    ]


def test_source_state_before_the_first_commit(empty_git: Any) -> None:
    assert source_state(empty_git.root) == (None, True)


def test_source_state_clean_then_dirty(tiny: Any) -> None:
    head = tiny.git("rev-parse", "HEAD").strip()
    assert source_state(tiny.root) == (head, False)
    tiny.write({"backends/base/untracked.txt": ""})
    assert source_state(tiny.root) == (head, True)


def test_source_state_outside_git_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WheelsError, match="git status failed"):
        source_state(tmp_path)
