"""Reading CUDA fatbins: list their entries (PTX or ELF, per SM arch) and extract plain ones.

Pure Python on purpose: a backend's loader and the harness's inspector both need it and neither
may import the other. The layout (CUDA 13 ``fatbinary``, checked against ``cuobjdump``):

* a container is a 16-byte header ``<IHHQ>`` (magic 0xBA55ED50, version 1, header size 16,
  payload size) followed by that many bytes of entries; a host object's ``.nv_fatbin`` section
  may hold several containers back to back, so :func:`entries` scans for the magic;
* an entry is a header of at least 64 bytes (64 for ELF, 80 for PTX, 112 for sm_100 and later),
  ``<HHIQIIHHI>`` for kind (1 PTX, 2 ELF), a format word, header size, padded payload size,
  compressed size, options offset, minor and major version (PTX ISA, or the ELF's format), and
  SM arch; flags ``<Q>`` at byte 40 (0x8000: the payload is zstd-compressed) and the
  uncompressed size ``<Q>`` at byte 56; the payload follows the header and the next entry the
  payload.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
FLAG_COMPRESSED = 0x8000

_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHI")
_FLAGS_AT, _UNCOMPRESSED_AT = 40, 56
_ENTRY_HEADER_MIN = 64
_KIND_NAMES = {KIND_PTX: "PTX", KIND_ELF: "ELF"}
_SHT_NOBITS = 8  # an ELF section that occupies no bytes in the file (.bss-like)


class FatbinError(ValueError):
    """Bytes that hold no readable fatbin, or an entry that cannot be extracted."""


@dataclass(frozen=True)
class Entry:
    """One image of a fatbin; offsets are absolute in the bytes it was read from."""

    kind: int
    arch: int  # 90 for sm_90
    version: tuple[int, int]  # (major, minor): the PTX ISA for PTX
    flags: int
    header_offset: int
    header_size: int
    payload_size: int  # padded, as stored
    compressed_size: int  # 0 unless compressed
    uncompressed_size: int  # 0 unless compressed

    @property
    def kind_name(self) -> str:
        return _KIND_NAMES.get(self.kind, f"kind-{self.kind}")

    @property
    def sm(self) -> str:
        return f"sm_{self.arch}"

    @property
    def compressed(self) -> bool:
        return bool(self.flags & FLAG_COMPRESSED)

    @property
    def payload_offset(self) -> int:
        return self.header_offset + self.header_size

    def __str__(self) -> str:
        """``ELF sm_90`` or ``PTX sm_90 (compressed)``."""
        return f"{self.kind_name} {self.sm}" + (" (compressed)" if self.compressed else "")


def entries(data: bytes) -> list[Entry]:
    """Every entry of every fatbin container in ``data`` (a fatbin, or a host object embedding some).

    A magic number whose header is not a plausible container (version 1, header size 16, payload
    inside ``data``) is taken for a chance match and passed over; a plausible container whose
    entries do not fit raises :class:`FatbinError`, as does ``data`` without any container.

    >>> entries(b"no fatbin here")
    Traceback (most recent call last):
    coopcheck.fatbin.FatbinError: no fatbin container (magic 0xba55ed50) in 14 bytes
    """
    found: list[Entry] = []
    containers = 0
    magic = struct.pack("<I", MAGIC)
    at = data.find(magic)
    while at >= 0:
        if at + _CONTAINER.size <= len(data):
            _, version, header_size, size = _CONTAINER.unpack_from(data, at)
            end = at + header_size + size
            if version == 1 and header_size == _CONTAINER.size and end <= len(data):
                found += _container_entries(data, at + header_size, end)
                containers += 1
                at = data.find(magic, end)
                continue
        at = data.find(magic, at + 1)
    if not containers:
        raise FatbinError(f"no fatbin container (magic {MAGIC:#x}) in {len(data)} bytes")
    return found


def _container_entries(data: bytes, start: int, end: int) -> list[Entry]:
    found = []
    at = start
    while at < end:
        if at + _ENTRY_HEADER_MIN > end:
            raise FatbinError(f"fatbin entry at byte {at}: header runs past its container's end ({end})")
        kind, _, header_size, size, compressed, _, minor, major, arch = _ENTRY.unpack_from(data, at)
        (flags,) = struct.unpack_from("<Q", data, at + _FLAGS_AT)
        (uncompressed,) = struct.unpack_from("<Q", data, at + _UNCOMPRESSED_AT)
        if header_size < _ENTRY_HEADER_MIN or at + header_size + size > end:
            raise FatbinError(
                f"fatbin entry at byte {at}: header size {header_size} and payload size {size} "
                f"do not fit its container (which ends at byte {end})"
            )
        found.append(Entry(kind, arch, (major, minor), flags, at, header_size, size, compressed, uncompressed))
        at += header_size + size
    return found


def extract(data: bytes, entry: Entry) -> bytes:
    """The payload of ``entry``: an ELF trimmed to its own extent, PTX text without its NUL padding.

    A compressed entry cannot be extracted: that needs a zstd decompressor, which this
    dependency-free reader does not carry (``fatbinary --compress=false`` keeps entries plain).
    """
    if entry.compressed:
        raise FatbinError(
            f"{entry} at byte {entry.header_offset} is zstd-compressed; extracting it needs a zstd "
            "decompressor, which this reader does not have (build with fatbinary --compress=false)"
        )
    payload = data[entry.payload_offset : entry.payload_offset + entry.payload_size]
    if entry.kind == KIND_PTX:
        return payload.rstrip(b"\0")
    if entry.kind == KIND_ELF:
        return payload[: _elf_extent(payload, entry)]
    return payload


def _elf_extent(image: bytes, entry: Entry) -> int:
    """Bytes an ELF64 image spans: its headers, program and section tables and section contents."""
    if image[:5] != b"\x7fELF\x02":
        raise FatbinError(f"{entry} at byte {entry.header_offset} is not a 64-bit ELF image")
    phoff, shoff = struct.unpack_from("<QQ", image, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", image, 0x36)
    extent: int = max(0x40, phoff + phentsize * phnum, shoff + shentsize * shnum)
    if extent <= len(image):  # the section table is inside: its entries can be read
        for index in range(shnum):
            kind, offset, size = _section_span(image, shoff + index * shentsize)
            if kind != _SHT_NOBITS:
                extent = max(extent, offset + size)
    if extent > len(image):
        raise FatbinError(
            f"{entry} at byte {entry.header_offset}: the ELF spans {extent} bytes, "
            f"more than the {len(image)} the entry holds"
        )
    return extent


def _section_span(image: bytes, at: int) -> tuple[int, int, int]:
    """(sh_type, sh_offset, sh_size) of the ELF64 section header at byte ``at``."""
    (kind,) = struct.unpack_from("<I", image, at + 4)
    offset, size = struct.unpack_from("<QQ", image, at + 0x18)
    return kind, offset, size
