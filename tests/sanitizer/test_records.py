"""``harness.sanitizer.records``: recorded XML of every tool read into one record shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.sanitizer.records import Frame, SanitizerXmlError, parse_file

RECORDED = Path(__file__).parent / "recorded"


def test_memcheck_record() -> None:
    (record,) = parse_file(RECORDED / "memcheck.xml")
    assert (record.kind, record.level, record.text) == ("Precise", "Error", "Invalid __global__ write of size 4 bytes")
    assert record.block == (1, 0, 0) and record.threads == ((5, 0, 0),)
    # recorded when the backend's package was still named coop_numba; the kernel symbol is the same
    assert record.functions[0].startswith("cudapy::coop_numba::kernels::coop_block_store__int32__ipt4__direct[")
    assert record.functions[1] == "coop_numba::blockio::store_direct"
    assert record.device_frames[0].path == "blockio.py" and record.device_frames[0].line == 141
    assert record.host_frames == (Frame("cuLaunchKernel"), Frame("_launch", "engine.py", 136))
    assert record.raw.startswith("<record>") and "Invalid __global__ write" in record.raw
    assert record.where == f"record 1 of {RECORDED / 'memcheck.xml'}"


def test_racecheck_hazards_carry_block_and_both_threads() -> None:
    error, warning = parse_file(RECORDED / "racecheck_hazard.xml")
    assert (error.kind, error.level, warning.level) == ("Hazard", "Error", "Warning")
    assert error.block == (2, 0, 0) and error.threads == ((3, 1, 0), (3, 5, 0))
    assert error.functions == ("kernel_cutlass_coop_block_load__float32__ipt2__transpose__b16x8_0",)
    assert [f.line for f in error.device_frames] == [88, 93]
    assert warning.host_frames == ()


def test_racecheck_analysis_has_no_block() -> None:
    (record,) = parse_file(RECORDED / "racecheck_analysis.xml")
    assert (record.kind, record.text, record.block, record.threads) == ("Analysis", "Race condition", None, ())
    assert record.functions == ("coop_block_store__uint8__ipt3__warp_transpose",)
    assert str(record.device_frames[1]) == "coop_block_store__uint8__ipt3__warp_transpose (kernels.rs:61)"


@pytest.mark.parametrize(("name", "kind", "symbol"), [
    ("initcheck.xml", "Initcheck", "coop_control_uninit_read"),
    ("synccheck.xml", "Synccheck", "coop_control_bad_syncwarp_mask"),
])
def test_initcheck_and_synccheck_records(name: str, kind: str, symbol: str) -> None:
    (record,) = parse_file(RECORDED / name)
    assert record.kind == kind and record.block == (0, 0, 0) and record.threads == ((0, 0, 0),)
    assert symbol in record.functions[0]
    assert record.describe().startswith(f"Error {kind} ")


def test_describe_names_what_where_and_who() -> None:
    (record,) = parse_file(RECORDED / "memcheck.xml")
    text = record.describe()
    assert text.startswith("Error Precise Invalid __global__ write of size 4 bytes at cudapy::")
    assert text.endswith("(blockio.py:141) block (1,0,0) thread (5,0,0)")


def test_a_file_without_records_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "clean.xml"
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<ComputeSanitizerOutput/>\n')
    assert parse_file(path) == []


@pytest.mark.parametrize(("text", "message"), [
    ("<ComputeSanitizerOutput><record>", "not well-formed XML"),
    ("<Other/>", "root element is <Other>, not <ComputeSanitizerOutput>"),
    ("<ComputeSanitizerOutput><record><blockIdx><x>two</x></blockIdx></record></ComputeSanitizerOutput>",
     "record 1: <blockIdx><x>: 'two' is not an integer"),
])
def test_unreadable_xml_names_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "racecheck.w0.1.xml"
    path.write_text(text)
    with pytest.raises(SanitizerXmlError) as info:
        parse_file(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SanitizerXmlError, match=r"gone\.xml: cannot read"):
        parse_file(tmp_path / "gone.xml")
