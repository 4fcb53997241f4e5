"""The manifest's write/read pair and the verification that guards every install."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from wheels import WheelsError
from wheels.manifest import MANIFEST_NAME, Manifest, WheelRecord, read_manifest, verify, write_manifest

RECORD = WheelRecord("tiny-plug", "2.0", "tiny_plug-2.0-py3-none-any.whl", "ab" * 32, "backends/plug", "setuptools (1)")


def test_write_then_read_round_trips(tmp_path: Path) -> None:
    manifest = Manifest(
        "0" * 40, False, {"python": "3.11.7"}, (RECORD, replace(RECORD, native=[{"artifact": "k.fatbin"}]))
    )
    write_manifest(manifest, tmp_path / MANIFEST_NAME)
    assert read_manifest(tmp_path / MANIFEST_NAME) == manifest


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema=2), "schema is 2, this tool reads schema 1"),
        (lambda d: d.pop("dirty"), "dirty is missing"),
        (lambda d: d["wheels"][0].pop("sha256"), "wheels[0].sha256 is missing"),
        (lambda d: d["wheels"][0].update(version=2), "wheels[0].version has type int"),
        (lambda d: d["wheels"][0].update(extra=1), "wheels[0] has unknown keys ['extra']"),
    ],
    ids=["schema", "top-level-key", "record-key", "record-type", "unknown-key"],
)
def test_read_names_the_file_and_key(tmp_path: Path, edit: object, message: str) -> None:
    path = tmp_path / MANIFEST_NAME
    write_manifest(Manifest(None, True, {}, (RECORD,)), path)
    document = json.loads(path.read_text())
    edit(document)  # type: ignore[operator]
    path.write_text(json.dumps(document))
    with pytest.raises(WheelsError, match=re.escape(f"{path}: {message}")):
        read_manifest(path)


def test_read_without_a_manifest_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(WheelsError, match=r"no manifest; run `python -m wheels.build` first"):
        read_manifest(tmp_path / MANIFEST_NAME)


def test_verify_accepts_the_built_dist(dist_copy: Path) -> None:
    assert verify(dist_copy) == read_manifest(dist_copy / MANIFEST_NAME)


def test_verify_refuses_a_tampered_wheel_by_name(dist_copy: Path) -> None:
    wheel = next(dist_copy.glob("tiny_plug-*.whl"))
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    with pytest.raises(WheelsError, match=rf"{wheel.name}: sha256 is [0-9a-f]{{64}}, the manifest says .*; refused"):
        verify(dist_copy)


def test_verify_refuses_missing_and_unlisted_wheels(dist_copy: Path) -> None:
    wheel = next(dist_copy.glob("tiny_base-*.whl"))
    wheel.rename(dist_copy / "intruder-1.0-py3-none-any.whl")
    with pytest.raises(WheelsError) as refused:
        verify(dist_copy)
    assert f"{wheel.name}: listed in the manifest but missing" in str(refused.value)
    assert "intruder-1.0-py3-none-any.whl: not in the manifest" in str(refused.value)
