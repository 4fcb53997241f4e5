"""The build manifest: which wheels were built from which source with which tools, and their sha256.

:func:`write_manifest` and :func:`read_manifest` are the one pair that writes and reads it;
:func:`verify` checks a dist folder against it before anything installs from there.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wheels import WheelsError
from wheels.wheelfile import sha256

SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True)
class WheelRecord:
    """One built wheel; ``native`` lists its compiled artifacts (see :mod:`wheels.native`)."""

    name: str
    version: str
    file: str
    sha256: str
    project: str  # source folder, relative to the repository root
    build_backend: str  # as the wheel's WHEEL file names it
    native: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Manifest:
    """Everything one ``wheels.build`` run produced."""

    source_commit: str | None  # None before the repository's first commit
    dirty: bool  # the work tree differed from ``source_commit`` (always True without one)
    toolchain: dict[str, str]  # python and build frontend versions
    wheels: tuple[WheelRecord, ...]


def write_manifest(manifest: Manifest, path: Path) -> None:
    document = {"schema": SCHEMA_VERSION, **asdict(manifest)}
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")


_RECORD_TYPES: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "version": str,
    "file": str,
    "sha256": str,
    "project": str,
    "build_backend": str,
    "native": list,
}


def read_manifest(path: Path) -> Manifest:
    """Parse and validate ``path``; errors name the file and the offending key."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WheelsError(f"{path}: no manifest; run `python -m wheels.build` first") from None
    except json.JSONDecodeError as exc:
        raise WheelsError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(document, dict) or document.get("schema") != SCHEMA_VERSION:
        found = document.get("schema") if isinstance(document, dict) else document
        raise WheelsError(f"{path}: schema is {found!r}, this tool reads schema {SCHEMA_VERSION}")
    _expect(document, "source_commit", (str, type(None)), path)
    _expect(document, "dirty", bool, path)
    _expect(document, "toolchain", dict, path)
    records = _expect(document, "wheels", list, path)
    wheels = []
    for index, record in enumerate(records):
        where = f"wheels[{index}]"
        if not isinstance(record, dict):
            raise WheelsError(f"{path}: {where} is not an object")
        for key, kind in _RECORD_TYPES.items():
            _expect(record, key, kind, path, where)
        if unknown := sorted(set(record) - set(_RECORD_TYPES)):
            raise WheelsError(f"{path}: {where} has unknown keys {unknown}")
        wheels.append(WheelRecord(**record))
    return Manifest(document["source_commit"], document["dirty"], document["toolchain"], tuple(wheels))


def _expect(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path, where: str = "") -> Any:
    name = f"{where}.{key}" if where else key
    if key not in obj:
        raise WheelsError(f"{path}: {name} is missing")
    if not isinstance(obj[key], kind):
        raise WheelsError(f"{path}: {name} has type {type(obj[key]).__name__}")
    return obj[key]


def verify(dist: Path) -> Manifest:
    """Check every wheel in ``dist`` against ``dist/manifest.json``; raise naming each file that fails.

    A listed wheel must be present with the recorded sha256, and no unlisted wheel may be present.
    """
    manifest = read_manifest(dist / MANIFEST_NAME)
    present = {path.name for path in dist.glob("*.whl")}
    problems = []
    for wheel in manifest.wheels:
        if wheel.file not in present:
            problems.append(f"{wheel.file}: listed in the manifest but missing")
        elif (actual := sha256(dist / wheel.file)) != wheel.sha256:
            problems.append(f"{wheel.file}: sha256 is {actual}, the manifest says {wheel.sha256}; refused")
    unlisted = present - {wheel.file for wheel in manifest.wheels}
    problems += [f"{name}: not in the manifest" for name in sorted(unlisted)]
    if problems:
        raise WheelsError(f"{dist}: wheels fail verification:\n  " + "\n  ".join(problems))
    return manifest
