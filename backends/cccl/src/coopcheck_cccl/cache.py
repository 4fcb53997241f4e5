"""An on-disk cache of the LTO-IR that cuda.coop's factories compile with NVRTC (about 1.2 s each).

cuda.coop 1.1.1 has an opt-in disk cache of its own (``CCCL_ENABLE_CACHE``), but it cannot store
LTO-IR: it ``json.dump``s the bytes into a file opened ``"wb"``, which raises TypeError after creating
the file empty, and the next lookup fails to parse that empty file. So this cache stands in for the one
NVRTC call of a factory (``_nvrtc.compile``), keyed by everything that decides its output: the C++
source (which spells the specialization), the compute capability, the options, the NVRTC version and
the cuda-cccl release (whose bundled headers the source includes). Entries are written atomically, so
parallel workers may share a directory: ``COOP_CCCL_CACHE_DIR`` (default ``~/.cache/coopcheck-cccl``; empty
or none turns the cache off).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coopcheck.cachefiles import cache_root, write_atomically

ENV = "COOP_CCCL_CACHE_DIR"
SCHEMA = 1


class LtoCache:
    """LTO-IR blobs by key under ``root``; ``hits`` and ``misses`` count this process's lookups."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hits = 0
        self.misses = 0

    @classmethod
    def from_environment(cls) -> LtoCache | None:
        """The cache ``COOP_CCCL_CACHE_DIR`` names (unset: ``~/.cache/coopcheck-cccl``; empty or none: None)."""
        root = cache_root(ENV, "coopcheck-cccl")
        return cls(root) if root else None

    @staticmethod
    def key(**inputs: Any) -> str:
        """The sha256 of every input that decides a compile's output (JSON, keys sorted)."""
        text = json.dumps({"schema": SCHEMA, **inputs}, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> bytes | None:
        try:
            blob = (self.root / f"{key}.ltoir").read_bytes()
        except FileNotFoundError:
            self.misses += 1
            return None
        self.hits += 1
        return blob

    def put(self, key: str, blob: bytes) -> None:
        write_atomically(self.root / f"{key}.ltoir", blob)


Compile = Callable[..., tuple[Any, bytes]]


@contextmanager
def serving(cache: LtoCache | None, module: Any, release: str) -> Iterator[None]:
    """While inside, ``module.compile`` (cuda.coop's ``_nvrtc.compile(cpp=, cc=, rdc=, code=)``, which
    returns ``(nvrtc_version, blob)``) answers from ``cache`` and fills it; ``release`` is cuda-cccl's."""
    if cache is None:
        yield
        return
    original: Compile = module.compile

    def compile(**kwargs: Any) -> tuple[Any, bytes]:
        key = cache.key(release=release, nvrtc=_nvrtc_version(), **kwargs)
        blob = cache.get(key)
        if blob is not None:
            return None, blob  # the factory discards the version
        version, blob = original(**kwargs)
        cache.put(key, blob)
        return version, blob

    module.compile = compile
    try:
        yield
    finally:
        module.compile = original


def _nvrtc_version() -> tuple[int, int]:
    from cuda.bindings import nvrtc

    err, major, minor = nvrtc.nvrtcVersion()
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtcVersion failed: {err}")
    return int(major), int(minor)
