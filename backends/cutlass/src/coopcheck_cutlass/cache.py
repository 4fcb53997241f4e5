"""On-disk cache of compile artifacts (PTX, cubin, entry name, launch shared memory), keyed by the
specialization, the target, the DSL's version and settings and this package's own source, so a
repeated compile-only run reads files (under a millisecond) instead of tracing and compiling again
(a quarter to half a second per kernel) and does not even import the DSL.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import astuple
from functools import cache
from importlib.metadata import version
from pathlib import Path

import coopcheck
from coopcheck.cachefiles import add_sources, cache_root

#: Cache folder; empty or "none" turns the cache off. Default: the user's cache folder, coopcheck-cutlass/.
CACHE_DIR_ENV = "COOP_CUTLASS_CACHE_DIR"
_FILES = ("meta.json", "kernel.ptx", "kernel.cubin")
#: The DSL's own settings (arch, line info, compiler options...) may change what it emits.
DSL_SETTINGS = "CUTE_DSL_"


def default_root() -> Path | None:
    """The configured cache folder, or None when the cache is off."""
    return cache_root(CACHE_DIR_ENV, "coopcheck-cutlass")


@cache
def toolchain_digest() -> str:
    """What else decides the output: the DSL's version and the source of this package and of the shared ABI package
    its kernels are built from (coop's version alone would keep a cubin across an edit there)."""
    import coopcheck_cutlass

    digest = hashlib.sha256()
    digest.update(f"nvidia-cutlass-dsl {version('nvidia-cutlass-dsl')}; coop {coopcheck.__version__}".encode())
    add_sources(digest, coopcheck_cutlass, coopcheck)
    return digest.hexdigest()


class ArtifactCache:
    """Artifacts by (spec, target) under ``root``; entries appear atomically, so concurrent
    workers sharing the folder never read half an entry."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _entry(self, spec: coopcheck.KernelSpec, target: str) -> Path:
        settings = sorted((k, v) for k, v in os.environ.items() if k.startswith(DSL_SETTINGS))
        key = json.dumps([astuple(spec), target, toolchain_digest(), settings])
        return self.root / hashlib.sha256(key.encode()).hexdigest()

    def get(self, spec: coopcheck.KernelSpec, target: str) -> coopcheck.Artifacts | None:
        entry = self._entry(spec, target)
        try:
            meta = json.loads((entry / "meta.json").read_text())
            ptx = (entry / "kernel.ptx").read_text()
            cubin = (entry / "kernel.cubin").read_bytes()
        except FileNotFoundError:
            return None
        return coopcheck.Artifacts(kernel_name=meta["kernel_name"], cubin=cubin, ptx=ptx, arch=meta["arch"],
                              dynamic_shared_bytes=meta["dynamic_shared_bytes"])

    def put(self, spec: coopcheck.KernelSpec, target: str, artifacts: coopcheck.Artifacts) -> None:
        assert artifacts.ptx is not None and artifacts.cubin is not None
        entry = self._entry(spec, target)
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=self.root, prefix=".staging-"))
        meta = {"kernel_name": artifacts.kernel_name, "arch": artifacts.arch,
                "dynamic_shared_bytes": artifacts.dynamic_shared_bytes}
        (staging / "meta.json").write_text(json.dumps(meta))
        (staging / "kernel.ptx").write_text(artifacts.ptx)
        (staging / "kernel.cubin").write_bytes(artifacts.cubin)
        try:
            staging.rename(entry)
        except OSError:  # another worker stored the same entry first
            for name in _FILES:
                (staging / name).unlink()
            staging.rmdir()
