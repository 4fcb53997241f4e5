"""The fatbin a wheel ships and its manifest: which archs and kernels it holds, and their images.

The installed package's ``data/`` folder holds both (written by the wheel build); the variable
``COOP_RUSTFATBIN_FATBIN`` or the ``fatbin`` argument points at another build's fatbin, whose
manifest lies beside it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from coopcheck import fatbin

from coopcheck_rustfatbin.build import FATBIN_NAME, MANIFEST_NAME, MANIFEST_SCHEMA

FATBIN_ENV = "COOP_RUSTFATBIN_FATBIN"


class LoaderError(RuntimeError):
    """The shipped kernels cannot be found, loaded or launched; the message names kernel and cause."""


class Bundle:
    """One built fatbin and its manifest, read once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        manifest_path = path.with_name(MANIFEST_NAME)
        try:
            self.data = path.read_bytes()
            self.manifest: dict[str, Any] = json.loads(manifest_path.read_text())
        except FileNotFoundError as exc:
            raise LoaderError(
                f"{exc.filename}: missing; build the kernels with `python -m coopcheck_rustfatbin.build` "
                f"(or point {FATBIN_ENV} at a built {FATBIN_NAME})"
            ) from None
        if self.manifest.get("schema") != MANIFEST_SCHEMA:
            raise LoaderError(f"{manifest_path}: manifest schema {self.manifest.get('schema')!r}, "
                              f"this package reads {MANIFEST_SCHEMA}")
        try:
            self.entries = fatbin.entries(self.data)
        except fatbin.FatbinError as exc:
            raise LoaderError(f"{path}: {exc}") from None
        self._symbols = {c["arch"]: frozenset(c["symbols"]) for c in self.manifest["capabilities"]}
        self._images: dict[tuple[int, str], bytes | None] = {}

    @classmethod
    def default(cls) -> Bundle:
        """The fatbin named by ``COOP_RUSTFATBIN_FATBIN``, else the one installed with this package."""
        given = os.environ.get(FATBIN_ENV)
        return cls(Path(given) if given else Path(__file__).resolve().parent / "data" / FATBIN_NAME)

    def archs(self) -> list[str]:
        """The SM archs the fatbin has SASS for, as the manifest lists them."""
        return list(self._symbols)

    def describe(self) -> str:
        """``ELF sm_80, ELF sm_90, PTX sm_90``: the entries, for messages."""
        return ", ".join(map(str, self.entries)) or "no entries"

    def symbols(self, arch: str) -> frozenset[str]:
        if arch not in self._symbols:
            raise LoaderError(f"{self.path}: no build for {arch}; it has {self.describe()}")
        return self._symbols[arch]

    def image(self, kind: int, arch: str) -> bytes | None:
        """The plain payload of the ``kind`` entry for exactly ``arch``, or None when there is none."""
        if (kind, arch) not in self._images:
            entry = next((e for e in self.entries if e.kind == kind and e.sm == arch), None)
            try:
                self._images[kind, arch] = fatbin.extract(self.data, entry) if entry else None
            except fatbin.FatbinError as exc:
                raise LoaderError(f"{self.path}: {exc}") from None
        return self._images[kind, arch]

    def elf(self, arch: str) -> bytes:
        """The cubin for ``arch``: every kernel of that capability's pass."""
        image = self.image(fatbin.KIND_ELF, arch)
        if image is None:
            raise LoaderError(f"{self.path}: no ELF for {arch}; it has {self.describe()}")
        return image
