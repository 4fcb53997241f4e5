"""Compiled device code inside a wheel, and the build manifest it ships beside each artifact.

A wheel may carry fatbins; each ``<stem>.fatbin`` sits next to ``<stem>.json``, written by the
build that made it, naming the ``tools`` (name -> version), the ``capabilities`` (objects with an
``arch``) and the artifact's ``sha256``. The build manifest of ``wheels.build`` carries those over.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePosixPath
from typing import Any

from wheels import WheelsError
from wheels.wheelfile import Wheel

#: Suffixes of compiled device code that must come with a build manifest.
ARTIFACT_SUFFIXES = (".fatbin",)


def _build_manifest(wheel: Wheel, artifact: PurePosixPath) -> dict[str, Any]:
    sidecar = artifact.with_suffix(".json")
    where = f"{wheel.path.name}: {sidecar}"
    if sidecar not in wheel.payload:
        raise WheelsError(f"{wheel.path.name}: {artifact} has no build manifest {sidecar.name} beside it")
    try:
        document = json.loads(wheel.payload[sidecar])
    except json.JSONDecodeError as exc:
        raise WheelsError(f"{where}: not valid JSON: {exc}") from exc
    tools = document.get("tools") if isinstance(document, dict) else None
    capabilities = document.get("capabilities") if isinstance(document, dict) else None
    if not isinstance(tools, dict) or not all(isinstance(v, str) for v in tools.values()):
        raise WheelsError(f"{where}: 'tools' must map each tool to its version")
    if not isinstance(capabilities, list) or not all(
        isinstance(c, dict) and isinstance(c.get("arch"), str) for c in capabilities
    ):
        raise WheelsError(f"{where}: 'capabilities' must be a list of objects with an 'arch'")
    actual = hashlib.sha256(wheel.payload[artifact]).hexdigest()
    if document.get("sha256") != actual:
        raise WheelsError(f"{where}: describes sha256 {document.get('sha256')}, but {artifact} has {actual}")
    return {
        "artifact": str(artifact),
        "sha256": actual,
        "tools": tools,
        "capabilities": [capability["arch"] for capability in capabilities],
    }


def native_builds(wheel: Wheel) -> list[dict[str, Any]]:
    """For each artifact of compiled device code in ``wheel``: its sha256, tools and capabilities."""
    artifacts = sorted(path for path in wheel.payload if path.suffix in ARTIFACT_SUFFIXES)
    return [_build_manifest(wheel, artifact) for artifact in artifacts]
