"""Requirement comparison between a wheel's core metadata and its pyproject."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from wheels import WheelsError
from wheels.metadata import requirement_problems, third_party
from wheels.wheelfile import Wheel, read_wheel

WHERE = "backends/plug/pyproject.toml"
TABLE = {
    "dependencies": ["tiny-base", "numpy>=1.24", "never-here; python_version < '3'"],
    "optional-dependencies": {"Fancy": ["rich>=13"]},
}


def wheel(*headers: str) -> Wheel:
    metadata = "Metadata-Version: 2.1\nName: tiny-plug\nVersion: 2.0\n" + "".join(f"{h}\n" for h in headers)
    dist_info = PurePosixPath("tiny_plug-2.0.dist-info")
    return Wheel(
        Path("tiny_plug-2.0-py3-none-any.whl"),
        "tiny-plug",  # type: ignore[arg-type]
        "2.0",
        {dist_info / "METADATA": metadata.encode()},
        dist_info,
    )


def plug(built: Any) -> Wheel:
    record = next(w for w in built.manifest.wheels if w.name == "tiny-plug")
    return read_wheel(built.dist / record.file)


def test_setuptools_metadata_matches_its_pyproject(built: Any) -> None:
    assert requirement_problems(plug(built), TABLE, WHERE) == []


def test_spelling_does_not_count() -> None:
    spelled = wheel(
        "Requires-Dist: Tiny_Base",
        "Requires-Dist: NumPy >= 1.24",
        "Requires-Dist: rich>=13; extra == 'fancy'",
        "Provides-Extra: fancy",
    )
    assert requirement_problems(spelled, TABLE, WHERE) == []


def test_a_changed_specifier_is_named() -> None:
    changed = wheel(
        "Requires-Dist: tiny-base",
        "Requires-Dist: numpy>=1.25",
        "Requires-Dist: rich>=13; extra == 'fancy'",
        "Provides-Extra: fancy",
    )
    problems = requirement_problems(changed, TABLE, WHERE)
    name = "tiny_plug-2.0-py3-none-any.whl"
    assert problems == [
        f"{name}: requirements: numpy>=1.25 not in {WHERE}",
        f"{name}: requirements: lacks numpy>=1.24 of {WHERE}",
    ]


def test_a_changed_extra_is_named_once() -> None:
    changed = wheel(
        "Requires-Dist: tiny-base",
        "Requires-Dist: numpy>=1.24",
        "Requires-Dist: rich>=14; extra == 'fancy'",
        "Provides-Extra: fancy",
    )
    name = "tiny_plug-2.0-py3-none-any.whl"
    assert requirement_problems(changed, TABLE, WHERE) == [
        f"{name}: extra 'fancy': rich>=14 not in {WHERE}",
        f"{name}: extra 'fancy': lacks rich>=13 of {WHERE}",
    ]


def test_a_missing_or_undeclared_extra_is_named() -> None:
    base = ["Requires-Dist: tiny-base", "Requires-Dist: numpy>=1.24"]
    name = "tiny_plug-2.0-py3-none-any.whl"
    assert requirement_problems(wheel(*base), TABLE, WHERE) == [f"{name}: extra 'fancy' missing, {WHERE} declares it"]
    undeclared = requirement_problems(wheel(*base, "Provides-Extra: fancy", "Provides-Extra: gpu"), TABLE, WHERE)
    assert f"{name}: extra 'gpu' not declared in {WHERE}" in undeclared


def test_dynamic_dependencies_cannot_be_checked() -> None:
    with pytest.raises(WheelsError, match=f"{WHERE}: dependencies are dynamic"):
        requirement_problems(wheel(), {"dynamic": ["dependencies"]}, WHERE)


def test_third_party_leaves_out_own_distributions_and_false_markers(built: Any) -> None:
    assert third_party(plug(built), ["Tiny_Base", "tiny-plug"]) == {"numpy"}
