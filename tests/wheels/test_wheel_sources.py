"""Source matching: every module and stub of a wheel equals its source, and no source module is left out."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from tests.wheels.memory import tiny_plug_wheel
from wheels.sources import match_sources
from wheels.wheelfile import read_wheel

PLUG = PurePosixPath("backends/plug")
#: The plug's modules and stubs as its sources hold them (see conftest.TINY_REPO).
PLUG_SOURCES = {
    "tiny_plug/__init__.py": b'"""Tiny plug."""\n',
    "tiny_plug/adapter.py": b"class Adapter:\n    name = 'plug'\n",
    "tiny_plug/adapter.pyi": b"class Adapter:\n    name: str\n",
    "tiny_plug/sub/__init__.py": b"",
}




def test_a_built_wheel_matches_its_sources(built: Any) -> None:
    record = next(w for w in built.manifest.wheels if w.name == "tiny-plug")
    result = match_sources(read_wheel(built.dist / record.file), built.repo.root, PLUG)
    assert (result.matched, result.problems) == (4, [])


def test_changed_bytes_are_named(tiny: Any) -> None:
    result = match_sources(tiny_plug_wheel({**PLUG_SOURCES, "tiny_plug/adapter.py": b"changed\n"}), tiny.root, PLUG)
    assert result.problems == [
        "tiny_plug-2.0-py3-none-any.whl: tiny_plug/adapter.py: differs from backends/plug/src/tiny_plug/adapter.py"
    ]
    assert result.matched == 3


def test_a_source_module_the_wheel_lacks_is_named(tiny: Any) -> None:
    shipped = {path: blob for path, blob in PLUG_SOURCES.items() if path != "tiny_plug/sub/__init__.py"}
    result = match_sources(tiny_plug_wheel(shipped), tiny.root, PLUG)
    assert result.problems == [
        "tiny_plug-2.0-py3-none-any.whl: lacks tiny_plug/sub/__init__.py "
        "(source backends/plug/src/tiny_plug/sub/__init__.py)"
    ]


def test_a_module_without_source_is_named(tiny: Any) -> None:
    result = match_sources(tiny_plug_wheel({**PLUG_SOURCES, "tiny_plug/generated.py": b""}), tiny.root, PLUG)
    assert result.problems == [
        "tiny_plug-2.0-py3-none-any.whl: tiny_plug/generated.py: no source at backends/plug/src/tiny_plug/generated.py"
    ]


def test_a_package_without_any_source_is_named(tiny: Any) -> None:
    result = match_sources(tiny_plug_wheel({**PLUG_SOURCES, "other/__init__.py": b""}), tiny.root, PLUG)
    assert result.problems == ["tiny_plug-2.0-py3-none-any.whl: package 'other' has no source under backends/plug"]


def test_two_equally_good_source_folders_are_ambiguous(tiny: Any) -> None:
    tiny.write({f"backends/plug/vendor/{path}": blob.decode() for path, blob in PLUG_SOURCES.items()})
    result = match_sources(tiny_plug_wheel(PLUG_SOURCES), tiny.root, PLUG)
    assert result.problems == [
        "tiny_plug-2.0-py3-none-any.whl: package 'tiny_plug' matches several source folders: "
        "['backends/plug/src', 'backends/plug/vendor']"
    ]


def test_the_folder_sharing_most_files_wins_then_the_shallowest(tiny: Any) -> None:
    """A flat layout in the repository root, next to a test folder that mirrors the package."""
    tiny.write(
        {
            "tiny_plug/__init__.py": PLUG_SOURCES["tiny_plug/__init__.py"].decode(),
            "tests/tiny_plug/__init__.py": "",
        }
    )
    result = match_sources(
        tiny_plug_wheel({"tiny_plug/__init__.py": PLUG_SOURCES["tiny_plug/__init__.py"]}), tiny.root, PurePosixPath(".")
    )
    assert (result.matched, result.problems) == (1, [])


def test_a_single_module_distribution(tiny: Any) -> None:
    tiny.write({"backends/plug/tiny_single.py": "VALUE = 1\n"})
    result = match_sources(tiny_plug_wheel({"tiny_single.py": b"VALUE = 1\n"}), tiny.root, PLUG)
    assert (result.matched, result.problems) == (1, [])
