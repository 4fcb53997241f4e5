"""Build manifests of compiled device code: found beside each fatbin, checked against its bytes."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest

from tests.wheels.memory import tiny_plug_wheel
from wheels import WheelsError
from wheels.native import native_builds
from wheels.wheelfile import Wheel

FATBIN = b"device code"
GOOD = {"tools": {"ptxas": "13.0"}, "capabilities": [{"arch": "sm_90"}], "sha256": hashlib.sha256(FATBIN).hexdigest()}




def with_manifest(document: Any) -> Wheel:
    return tiny_plug_wheel({"tiny_plug/k.fatbin": FATBIN, "tiny_plug/k.json": json.dumps(document).encode()})


def test_a_wheel_without_device_code_has_none() -> None:
    assert native_builds(tiny_plug_wheel({"tiny_plug/__init__.py": b"", "tiny_plug/data.json": b"{}"})) == []


def test_the_build_manifest_is_summarized() -> None:
    assert native_builds(with_manifest(GOOD)) == [
        {
            "artifact": "tiny_plug/k.fatbin",
            "sha256": GOOD["sha256"],
            "tools": {"ptxas": "13.0"},
            "capabilities": ["sm_90"],
        }
    ]


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"tiny_plug/k.fatbin": FATBIN}, "tiny_plug/k.fatbin has no build manifest k.json beside it"),
        ({"tiny_plug/k.fatbin": FATBIN, "tiny_plug/k.json": b"{"}, "tiny_plug/k.json: not valid JSON"),
    ],
    ids=["missing", "json"],
)
def test_a_missing_or_unreadable_manifest_is_named(members: dict[str, bytes], message: str) -> None:
    with pytest.raises(WheelsError, match=re.escape(f"tiny_plug-2.0-py3-none-any.whl: {message}")):
        native_builds(tiny_plug_wheel(members))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tools": ["ptxas"]}, "'tools' must map each tool to its version"),
        ({"capabilities": [{"sm": 90}]}, "'capabilities' must be a list of objects with an 'arch'"),
        ({"sha256": "0" * 64}, f"describes sha256 {'0' * 64}, but tiny_plug/k.fatbin has {GOOD['sha256']}"),
    ],
    ids=["tools", "capabilities", "sha256"],
)
def test_a_manifest_that_does_not_describe_the_artifact_is_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(WheelsError, match=re.escape(f"tiny_plug/k.json: {message}")):
        native_builds(with_manifest({**GOOD, **change}))
