"""The environment fingerprint recorded at the start of every run (reports render it)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path
from typing import Any

import coopcheck.registry
from packaging.utils import canonicalize_name

from harness.datafile import read_json
from harness.errors import HarnessError

#: The project's distributions are ``coopcheck`` and ``coopcheck-*``: every one installed is recorded.
OWN = "coopcheck"
#: The third-party packages whose versions decide a run.
THIRD_PARTY = ("numpy", "numba", "numba-cuda", "nvidia-cutlass-dsl", "cuda-cccl", "cuda-bindings", "torch", "pytest",
               "pytest-xdist")
MANIFEST_ENV = "COOP_WHEEL_MANIFEST"


def _command(*args: str) -> str | None:
    """First line of a tool's answer, or None when the tool is absent or fails (never raises)."""
    if shutil.which(args[0]) is None:
        return None
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else None


def gpu_present() -> bool:
    """A GPU the driver lists (asks nvidia-smi; never initializes CUDA in this process)."""
    listing = _command("nvidia-smi", "-L")
    return listing is not None and "GPU" in listing


def _packages() -> dict[str, str]:
    own: dict[str, str] = {canonicalize_name(d.metadata["Name"]): d.version for d in distributions()
                           if d.metadata["Name"]}
    found = {name: own[name] for name in sorted(own) if name == OWN or name.startswith(f"{OWN}-")}
    for name in THIRD_PARTY:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def _git() -> dict[str, Any]:
    commit = _command("git", "rev-parse", "HEAD")
    if commit is None:
        return {}
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True, check=False).stdout.strip() != ""
    return {"commit": commit, "dirty": dirty}


def _manifest() -> dict[str, Any]:
    path = os.environ.get(MANIFEST_ENV)
    if not path or not Path(path).is_file():
        return {}
    return {"wheel_manifest": read_json(Path(path), HarnessError, f"${MANIFEST_ENV} {path}")}


def _toolchains(backends: Sequence[str]) -> dict[str, Any]:
    """What each backend compiles with, as its adapter reports it; one that cannot say records why."""
    found: dict[str, dict[str, str]] = {}
    for name in backends:
        try:
            versions = coopcheck.registry.toolchain(name)
        except Exception as exc:
            versions = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
        if versions:
            found[name] = versions
    return {"toolchains": found} if found else {}


def fingerprint(backends: Sequence[str] = ()) -> dict[str, Any]:
    """What ran where: interpreter, packages, GPU, driver, CUDA tools, the backends' own toolchains, source
    commit, wheels."""
    gpu = _command("nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader")
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": _packages(),
        "gpu": gpu,
        "ptxas": _command("ptxas", "--version"),
        "compute_sanitizer": _command("compute-sanitizer", "--version"),
        **_toolchains(backends),
        **_git(),
        **_manifest(),
    }
