"""An on-disk cache of host-compiled PTX and cubins, keyed by specialization, arch and toolchain.

Opt-in through ``COOP_NUMBA_CACHE_DIR`` (nothing is written anywhere without it). An entry is two
files named by the sha256 of (toolchain fingerprint, arch, kernel symbol), written atomically, so
concurrent test workers may share one directory.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from coopcheck.cachefiles import write_atomically

ENV = "COOP_NUMBA_CACHE_DIR"


class ArtifactCache:
    """PTX + cubin per key under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def from_environment(cls) -> ArtifactCache | None:
        """The cache that ``COOP_NUMBA_CACHE_DIR`` names, or None when it is unset or empty."""
        root = os.environ.get(ENV, "")
        return cls(Path(root)) if root else None

    @staticmethod
    def key(fingerprint: str, arch: str, symbol: str) -> str:
        return hashlib.sha256(f"{fingerprint}\0{arch}\0{symbol}".encode()).hexdigest()

    def get(self, key: str) -> tuple[str, bytes] | None:
        """(ptx, cubin) stored under ``key``, or None."""
        try:
            return (self.root / f"{key}.ptx").read_text(), (self.root / f"{key}.cubin").read_bytes()
        except FileNotFoundError:
            return None

    def put(self, key: str, ptx: str, cubin: bytes) -> None:
        # cubin last: ``get`` finds an entry only once both files are complete.
        write_atomically(self.root / f"{key}.ptx", ptx.encode())
        write_atomically(self.root / f"{key}.cubin", cubin)
