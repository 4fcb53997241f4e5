"""SASS listings: parsing nvdisasm's lines, opcode patterns, one nvdisasm run per cubin, finding tools."""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.inspect import InspectError, Instruction, KernelReport, inspect_artifacts, listings
from harness.inspect import sass as sass_module
from harness.inspect.sass import check_pattern, matches, parse_listing, split_sections
from harness.inspect.tools import locate_tool

LISTING = """\
//--------------------- .text.k                  --------------------------
\t.section\t.text.k,"ax",@progbits
        .other          k,@"STO_CUDA_ENTRY STV_DEFAULT"
k:
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*00e0*/                   STS.128 [R7], R8 ;
        /*00f0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0100*/               @!P0 LDSM.16.M88.4 R4, [R6] ;
        /*0110*/               @UP1 LDS.U8 R9, [R6+0x4] ;
        /*0120*/               @PT BRA `(.L_x_1) ;
.L_x_1:
        /*1a30*/                   NOP;
//--------------------- SYMBOLS --------------------------
\t.type\t\t.nv.reservedSmem.offset0,@object
"""


def test_parse_keeps_offsets_mnemonics_and_drops_predicates_from_mnemonics() -> None:
    instructions = parse_listing(split_sections(LISTING)[".text.k"], "k")
    assert [(i.offset, i.mnemonic) for i in instructions] == [
        (0x0, "LDC"), (0xE0, "STS.128"), (0xF0, "BAR.SYNC.DEFER_BLOCKING"), (0x100, "LDSM.16.M88.4"),
        (0x110, "LDS.U8"), (0x120, "BRA"), (0x1A30, "NOP"),
    ]
    assert instructions[3].assembly == "@!P0 LDSM.16.M88.4 R4, [R6]"
    assert instructions[3].excerpt() == "@!P0 LDSM.16.M88.4 R4, [R6] at /*0100*/"
    assert instructions[6].excerpt() == "NOP at /*1a30*/"


def test_modifiers_may_hold_lower_case_letters() -> None:
    """sm_90's packed 16-bit min/max (a uint8 or uint16 Reduce) prints VIMNMX.U16x2."""
    line = "        /*21e0*/              @!P3 VIMNMX.U16x2 R10, R12, R10, PT ;\n"
    assert [i.mnemonic for i in parse_listing(line, "k")] == ["VIMNMX.U16x2"]


def test_split_cuts_at_section_headers() -> None:
    sections = split_sections(LISTING)
    assert list(sections) == [".text.k", "SYMBOLS"]
    assert "reservedSmem" not in sections[".text.k"]


def test_unparsable_instruction_line_is_an_error() -> None:
    with pytest.raises(InspectError, match=r"kernel k: cannot parse SASS line '/\*0010\*/ iadd r1 ;'"):
        parse_listing("        /*0010*/ iadd r1 ;\n", "k")


@pytest.mark.parametrize(
    ("pattern", "mnemonic", "expected"),
    [
        ("BAR", "BAR.SYNC.DEFER_BLOCKING", True),
        ("BAR", "BAR", True),
        ("BAR", "BARX", False),
        ("LDS", "LDS.U8", True),
        ("LDS", "LDSM.16.M88.4", False),
        ("LDG.E", "LDG.E.128", True),
        ("LDG.E", "LDG.EL", False),
        ("BAR.SYNC", "BAR.ARV", False),
    ],
)
def test_pattern_matches_whole_dot_separated_parts(pattern: str, mnemonic: str, expected: bool) -> None:
    assert matches(pattern, mnemonic) is expected


@pytest.mark.parametrize("pattern", ["bar", "BAR.", ".SYNC", "BAR*", "B AR", "", 7])
def test_bad_patterns_are_refused(pattern: object) -> None:
    with pytest.raises(ValueError, match="is not an opcode pattern"):
        check_pattern(pattern)


def test_instruction_is_a_value() -> None:
    assert Instruction(0x130, "BAR.SYNC", "BAR.SYNC 0x0") == Instruction(0x130, "BAR.SYNC", "BAR.SYNC 0x0")


def test_nvdisasm_runs_once_per_distinct_cubin(build, request: pytest.FixtureRequest) -> None:
    mixed, plain = build("mixed_module"), build("plain")  # compiled first: only the listings may count below
    runs = request.getfixturevalue("nvdisasm_runs")
    for kernel in ("mixed_plain", "mixed_dynamic", "mixed_plain"):
        inspect_artifacts(mixed.artifacts(kernel))
    assert len(runs) == 1
    inspect_artifacts(plain.artifacts("plain"))
    assert len(runs) == 2


@pytest.fixture
def listed_to_disk(build, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
                   tmp_path: Path) -> tuple[Callable[[str], KernelReport], list[list[str]], KernelReport]:
    """``(inspect, runs, first)``: the listing cache in a fresh folder, ``mixed_plain`` inspected once through it (the
    image listed whole), and ``inspect(kernel)`` of the mixed module as a new process would, holding no listing."""
    mixed = build("mixed_module")
    runs = request.getfixturevalue("nvdisasm_runs")
    monkeypatch.setenv(listings.ENV, str(tmp_path))
    first = inspect_artifacts(mixed.artifacts("mixed_plain"))
    assert len(runs) == 1 and len(list(tmp_path.glob("*.sass.gz"))) == 1

    def inspect_anew(kernel: str) -> KernelReport:
        monkeypatch.setattr(sass_module, "_listings", {})
        return inspect_artifacts(mixed.artifacts(kernel))

    return inspect_anew, runs, first


def test_a_listing_is_kept_on_disk_for_the_next_process(listed_to_disk) -> None:
    inspect_anew, runs, first = listed_to_disk
    assert inspect_anew("mixed_plain") == first and inspect_anew("mixed_dynamic").find("BAR")
    assert len(runs) == 1


def test_a_damaged_listing_on_disk_is_listed_afresh(listed_to_disk, tmp_path: Path) -> None:
    inspect_anew, runs, first = listed_to_disk
    (entry,) = tmp_path.glob("*.sass.gz")
    entry.write_bytes(entry.read_bytes()[:100])
    assert inspect_anew("mixed_plain") == first and len(runs) == 2
    assert inspect_anew("mixed_plain") == first and len(runs) == 2  # the entry was rewritten


def test_missing_tool_names_every_place_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    with pytest.raises(InspectError) as raised:
        locate_tool("nvdisasm", "coop-no-such-package")
    assert str(raised.value) == (
        "nvdisasm not found; searched pip package coop-no-such-package (not installed), PATH, "
        f"CUDA_HOME/bin ({tmp_path / 'cuda' / 'bin' / 'nvdisasm'}); try: pip install coop-no-such-package"
    )
    monkeypatch.delenv("CUDA_HOME")
    with pytest.raises(InspectError, match=r"PATH, CUDA_HOME \(unset\)"):
        locate_tool("nvdisasm", "coop-no-such-package")


def test_tool_found_under_cuda_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = tmp_path / "bin" / "nvdisasm"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", os.devnull)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert locate_tool("nvdisasm", "coop-no-such-package") == tool


def test_tool_found_in_its_pip_package_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    decoy = tmp_path / "nvdisasm"
    decoy.write_text("#!/bin/sh\n")
    decoy.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    found = locate_tool("nvdisasm", "nvidia-cuda-nvdisasm")
    assert found != decoy and found.name == "nvdisasm" and found.parent.name == "bin"


def test_a_contract_may_name_every_mnemonic_the_listing_parses() -> None:
    """One grammar for both: a pattern of VIMNMX.U16x2 was refused while the listing parsed it, so no resource
    rule could forbid or require it; the head stays upper case."""
    from harness.inspect.sass import check_pattern, matches

    check_pattern("VIMNMX.U16x2")
    assert matches("VIMNMX.U16x2", "VIMNMX.U16x2")
    for bad in ("vimnmx.U16x2", "VIMNMX.", "VIMNMX..U16", "VIMNMX U16"):
        with pytest.raises(ValueError):
            check_pattern(bad)


def _list_slowly(record: Path) -> str:
    """An image's listing that takes a while and leaves a line in ``record`` each time it is made."""
    with record.open("a") as file:
        file.write(f"{os.getpid()}\n")
    time.sleep(1.0)
    return LISTING


def _cached_listing(root: Path, record: Path, out: Path) -> None:
    os.environ[listings.ENV] = str(root)
    out.write_text(listings.cached("ab" * 32, Path(sys.executable), lambda: _list_slowly(record)))


def test_processes_missing_one_listing_at_once_list_it_once(tmp_path: Path) -> None:
    """The first to miss it lists the image; the others wait for its entry (the compile tests' workers and the host
    lane's shards all want rustfatbin's image at their start), and no lock file is left beside the entry."""
    record, root = tmp_path / "record", tmp_path / "cache"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_cached_listing, args=(root, record, tmp_path / f"out{k}")) for k in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    assert len(record.read_text().splitlines()) == 1
    assert all((tmp_path / f"out{k}").read_text() == LISTING for k in range(3))
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == [
        next(root.glob("*.sass.gz")).name]
