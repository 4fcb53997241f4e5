"""coopcheck.fatbin on hand-assembled bytes: listing, extraction, scanning inside other bytes, bad input."""

from __future__ import annotations

import pytest
from coopcheck import fatbin

PTX_TEXT = b"//\n.version 7.8\n.target sm_90\n.address_size 64\n"


def test_lists_entries_in_order_with_kind_arch_version_and_flags(assembler):
    data = assembler.container(
        assembler.entry(fatbin.KIND_ELF, 80, assembler.elf(256)),
        assembler.entry(fatbin.KIND_ELF, 90, assembler.elf(320)),
        assembler.entry(fatbin.KIND_PTX, 90, PTX_TEXT, header_size=80, version=(7, 8)),
    )
    listed = [(str(e), e.version, e.header_size) for e in fatbin.entries(data)]
    assert listed == [("ELF sm_80", (1, 8), 64), ("ELF sm_90", (1, 8), 64), ("PTX sm_90", (7, 8), 80)]


def test_a_larger_entry_header_moves_the_next_entry(assembler):
    # sm_100 and later carry a 112-byte entry header; the next entry follows its payload.
    data = assembler.container(
        assembler.entry(fatbin.KIND_ELF, 100, assembler.elf(200), header_size=112, flags=0x1000011),
        assembler.entry(fatbin.KIND_ELF, 120, assembler.elf(200), header_size=112, flags=0x1000011),
    )
    first, second = fatbin.entries(data)
    assert (first.sm, second.sm) == ("sm_100", "sm_120")
    assert second.header_offset == first.payload_offset + first.payload_size
    assert not first.compressed


def test_extracts_ptx_without_its_padding(assembler):
    data = assembler.container(assembler.entry(fatbin.KIND_PTX, 90, PTX_TEXT + b"\0", header_size=80))
    (entry,) = fatbin.entries(data)
    assert entry.payload_size > len(PTX_TEXT)
    assert fatbin.extract(data, entry) == PTX_TEXT


def test_extracts_an_elf_trimmed_to_its_own_extent(assembler):
    image = assembler.elf(195)  # not a multiple of the container's 8-byte padding
    data = assembler.container(assembler.entry(fatbin.KIND_ELF, 90, image))
    (entry,) = fatbin.entries(data)
    assert entry.payload_size == 200
    assert fatbin.extract(data, entry) == image


def test_an_elf_entry_that_is_no_elf_is_refused(assembler):
    data = assembler.container(assembler.entry(fatbin.KIND_ELF, 90, b"\0" * 64))
    (entry,) = fatbin.entries(data)
    with pytest.raises(fatbin.FatbinError, match="ELF sm_90 at byte 16 is not a 64-bit ELF image"):
        fatbin.extract(data, entry)


def test_an_elf_cut_short_is_refused(assembler):
    data = assembler.container(assembler.entry(fatbin.KIND_ELF, 90, assembler.elf(256)[:200]))
    (entry,) = fatbin.entries(data)
    with pytest.raises(fatbin.FatbinError, match="the ELF spans 256 bytes, more than the 200 the entry holds"):
        fatbin.extract(data, entry)


def test_a_compressed_entry_is_listed_but_not_extracted(assembler):
    zstd_frame = b"\x28\xb5\x2f\xfd" + b"\x11" * 20
    data = assembler.container(
        assembler.entry(fatbin.KIND_PTX, 90, zstd_frame, header_size=80, flags=0x8011, uncompressed_size=999)
    )
    (entry,) = fatbin.entries(data)
    assert entry.compressed and entry.compressed_size == len(zstd_frame) and entry.uncompressed_size == 999
    assert str(entry) == "PTX sm_90 (compressed)"
    with pytest.raises(fatbin.FatbinError, match=r"zstd-compressed; .*--compress=false"):
        fatbin.extract(data, entry)


def test_finds_every_container_inside_other_bytes(assembler):
    # As in a host object: containers inside other section data, one after another.
    first = assembler.container(assembler.entry(fatbin.KIND_ELF, 80, assembler.elf(256)))
    second = assembler.container(assembler.entry(fatbin.KIND_ELF, 90, assembler.elf(256)))
    data = b"\x7fELF host object" + bytes(37) + first + bytes(5) + second + b"trailer"
    entries = fatbin.entries(data)
    assert [e.sm for e in entries] == ["sm_80", "sm_90"]
    assert fatbin.extract(data, entries[1]) == assembler.elf(256)


def test_a_chance_magic_number_is_passed_over(assembler):
    real = assembler.container(assembler.entry(fatbin.KIND_ELF, 90, assembler.elf(256)))
    chance = real[:4] + b"\x07\x00\x99\x00" + b"\xff" * 8  # version 7, header size 153: no container
    (entry,) = fatbin.entries(chance + real)
    assert entry.sm == "sm_90"


def test_bytes_without_a_container_are_refused():
    with pytest.raises(fatbin.FatbinError, match=r"no fatbin container \(magic 0xba55ed50\) in 9 bytes"):
        fatbin.entries(b"not a fat")


def test_an_entry_running_past_its_container_is_refused(assembler):
    data = bytearray(assembler.container(assembler.entry(fatbin.KIND_ELF, 90, assembler.elf(256))))
    data[16 + 8] += 8  # the entry claims 8 payload bytes more than its container holds
    with pytest.raises(fatbin.FatbinError, match="entry at byte 16: header size 64 and payload size 264"):
        fatbin.entries(bytes(data))
