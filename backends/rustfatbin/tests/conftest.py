"""Fixtures shared by the rustfatbin tests: fatbin bytes assembled by hand, in the layout
``coopcheck.fatbin`` documents (so parser tests do not depend on a toolchain)."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
from coopcheck import fatbin
from coopcheck_rustfatbin import abi
from coopcheck_rustfatbin.build import FATBIN_NAME, MANIFEST_NAME, MANIFEST_SCHEMA


@dataclass(frozen=True)
class EntrySpec:
    """One entry to assemble; ``header_size`` 64 (ELF), 80 (PTX) or 112 (sm_100 and later)."""

    kind: int
    arch: int
    payload: bytes
    flags: int = 0x11
    header_size: int = 64
    version: tuple[int, int] = (1, 8)
    uncompressed_size: int = 0

    def to_bytes(self) -> bytes:
        padded = self.payload + b"\0" * (-len(self.payload) % 8)
        compressed = len(self.payload) if self.flags & fatbin.FLAG_COMPRESSED else 0
        major, minor = self.version
        header = struct.pack("<HHIQIIHHIII", self.kind, 0x0101, self.header_size, len(padded), compressed, 0,
                             minor, major, self.arch, 0, 0)
        header += struct.pack("<QQQ", self.flags, 0, self.uncompressed_size)
        header += b"\0" * (self.header_size - len(header))
        return header + padded


def container(*entries: EntrySpec | bytes) -> bytes:
    """A fatbin container holding ``entries`` (assembled, or raw entry bytes copied from elsewhere)."""
    body = b"".join(e.to_bytes() if isinstance(e, EntrySpec) else e for e in entries)
    return struct.pack("<IHHQ", fatbin.MAGIC, 1, 16, len(body)) + body


def elf_image(size: int, *, sections: int = 2) -> bytes:
    """A minimal ELF64 image of ``size`` bytes: header, section data, then the section table."""
    shentsize = 64
    shoff = size - sections * shentsize
    assert shoff >= 64, f"an ELF of {sections} sections needs more than {size} bytes"
    header = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    header += struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 0, 0, shentsize, sections, 0)
    body = bytearray(size)
    body[: len(header)] = header
    for index in range(1, sections):  # section 0 is the null section
        at = shoff + index * shentsize
        struct.pack_into("<IIQQQQ", body, at, 0, 1, 0, 0, 64, shoff - 64)  # PROGBITS data before the table
    return bytes(body)


def write_build(directory: Path, *entries: EntrySpec) -> Path:
    """A fatbin of ``entries`` and its manifest in ``directory``, as ``coopcheck_rustfatbin.build`` lays
    them out; each ELF entry's pass exports every contract kernel. Returns the fatbin's path."""
    path = directory / FATBIN_NAME
    path.write_bytes(container(*entries))
    passes = [{"arch": f"sm_{e.arch}", "ptx": False, "symbols": sorted(abi.exported_symbols())}
              for e in entries if e.kind == fatbin.KIND_ELF]
    manifest = {"schema": MANIFEST_SCHEMA, "tools": {"rustc": "assembled by hand"}, "capabilities": passes}
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest))
    return path


class Assembler:
    """What the fixture hands out: ``entry(...)``, ``container(...)``, ``elf(size)``, ``build(dir, ...)``."""

    entry = EntrySpec
    container = staticmethod(container)
    elf = staticmethod(elf_image)
    build = staticmethod(write_build)


@pytest.fixture
def assembler() -> type[Assembler]:
    return Assembler
