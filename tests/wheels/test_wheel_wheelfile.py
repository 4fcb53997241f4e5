"""Reading a wheel: names, payload, modules, entry points, and errors that name the file."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from wheels import WheelsError
from wheels.wheelfile import read_wheel


def test_a_built_wheel_describes_itself(built: Any) -> None:
    record = next(w for w in built.manifest.wheels if w.name == "tiny-plug")
    wheel = read_wheel(built.dist / record.file)
    assert (wheel.name, wheel.version) == ("tiny-plug", "2.0")
    assert wheel.generator.startswith("setuptools (")
    assert wheel.entry_points("coopcheck.backends") == {"plug": "tiny_plug.adapter:Adapter"}
    assert wheel.entry_points("console_scripts") == {}
    assert wheel.modules == ["tiny_plug", "tiny_plug.adapter", "tiny_plug.sub"]
    assert wheel.packages == {"tiny_plug"}
    assert PurePosixPath("tiny_plug/py.typed") in wheel.payload
    assert not any(path.parts[0].endswith(".dist-info") for path in wheel.payload)


def test_a_file_that_is_no_zip_is_named(tmp_path: Path) -> None:
    path = tmp_path / "tiny-1.0-py3-none-any.whl"
    path.write_bytes(b"not a zip")
    with pytest.raises(WheelsError, match=r"tiny-1\.0-py3-none-any\.whl: cannot read the wheel"):
        read_wheel(path)


def test_a_bad_wheel_name_is_named(tmp_path: Path) -> None:
    with pytest.raises(WheelsError, match=r"^tiny\.whl: "):
        read_wheel(tmp_path / "tiny.whl")
