"""Expectations: mapping of verdicts, and expired, unmatched or malformed entries as errors."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from harness.errors import ExpectationError
from harness.expectations import Ledger, load_expectations
from harness.journal import CaseRecord
from harness.statuses import Status

CASE = "block.load/cutlass/dtype=int32,block=32,ipt=1,alg=transpose,valid=zero,oob=none,offset=zero"
ENTRY = """
[[expect]]
cases = "block.load/cutlass/*alg=transpose*"
status = "{status}"
tags = {{ backend = "cutlass", lane = "gpu" }}
bug = "https://example.org/bugs/1"
expires = {expires}
reason = "transpose scratch reuse race"
"""


def _ledger(tmp_path: Path, status: str = "Fail", expires: str = "2099-01-01", lane: str = "gpu",
            today: dt.date | None = None) -> Ledger:
    path = tmp_path / "expectations.toml"
    path.write_text("schema = 1\n" + ENTRY.format(status=status, expires=expires))
    return Ledger(load_expectations(path), {"lane": lane, "arch": "sm_90", "toolkit": ""}, today or dt.date.today())


@pytest.mark.parametrize(("actual", "expected", "mapped"), [
    (Status.FAIL, "Fail", Status.EXPECTED_FAIL),
    (Status.PASS, "Fail", Status.UNEXPECTED_PASS),
    (Status.CRASH, "Fail", Status.CRASH),
    (Status.NOT_SUPPORTED, "NotSupported", Status.NOT_SUPPORTED),
])
def test_mapping(tmp_path: Path, actual: Status, expected: str, mapped: Status) -> None:
    ledger = _ledger(tmp_path, expected)
    record = ledger.resolve(CaseRecord(CASE, actual, "gpu", "detail"))
    assert record.status is mapped
    assert record.accepted == (mapped in (Status.EXPECTED_FAIL, Status.NOT_SUPPORTED))
    assert ledger.problems() == []


def test_tags_limit_the_entry(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, lane="host")
    assert ledger.resolve(CaseRecord(CASE, Status.FAIL, "host")).status is Status.FAIL
    assert ledger.problems() == []  # the entry does not apply to this lane, so it is not "unmatched"


def test_a_tag_value_is_a_pattern(tmp_path: Path) -> None:
    """``lane = "gpu*"`` declares a case once for the gpu lane and every sanitizer lane over it."""
    path = tmp_path / "expectations.toml"
    path.write_text("schema = 1\n" + ENTRY.format(status="Fail", expires="2099-01-01").replace('"gpu"', '"gpu*"'))
    entries = load_expectations(path)
    for lane in ("gpu", "gpu-racecheck", "gpu-memcheck"):
        ledger = Ledger(entries, {"lane": lane, "arch": "sm_90", "toolkit": ""})
        assert ledger.resolve(CaseRecord(CASE, Status.FAIL, lane)).status is Status.EXPECTED_FAIL, lane
    host = Ledger(entries, {"lane": "host", "arch": "sm_90", "toolkit": ""})
    assert host.resolve(CaseRecord(CASE, Status.FAIL, "host")).status is Status.FAIL


def test_unmatched_entry_is_an_error(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    ledger.resolve(CaseRecord(CASE.replace("transpose", "direct"), Status.PASS, "gpu"))
    assert [p for p in ledger.problems() if "matched no case" in p]


def test_an_entry_naming_a_contract_the_run_does_not_hold_does_not_apply(tmp_path: Path) -> None:
    """A run over some of the contracts (one family's lanes) reads the shipped expectations as they are: an entry
    whose pattern names only other contracts is not stale there, while one naming a contract of the run still is."""
    ledger = _ledger(tmp_path)
    exchange = "block.exchange/cutlass/dtype=int32,block=32,ipt=1,alg=striped_to_blocked,slicing=off,output=inplace"
    assert ledger.resolve(CaseRecord(exchange, Status.PASS, "gpu")).status is Status.PASS
    assert ledger.problems() == []
    ledger.resolve(CaseRecord(CASE.replace("transpose", "direct"), Status.PASS, "gpu"))  # a Load case, unmatched
    assert [p for p in ledger.problems() if "matched no case" in p]


def test_expired_entry_is_an_error(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, expires="2026-01-01", today=dt.date(2026, 11, 29))
    ledger.resolve(CaseRecord(CASE, Status.FAIL, "gpu"))
    assert ledger.problems() == [
        f"{tmp_path / 'expectations.toml'}: expect[0]: expired on 2026-01-01 (https://example.org/bugs/1): "
        "block.load/cutlass/*alg=transpose*"]


@pytest.mark.parametrize(("old", "new", "message"), [
    ('status = "Fail"', 'status = "Pass"', r"expect\[0\]\.status: Pass cannot be expected"),
    ('status = "Fail"', 'status = "Broken"', r"expect\[0\]\.status: 'Broken' is not one of"),
    ("expires = 2099-01-01", 'expires = "soon"', r"expect\[0\]\.expires: expected a TOML date"),
    ('bug = "https://example.org/bugs/1"', 'bug = "none"', r"expect\[0\]\.bug: expected a link"),
    ("reason = ", "why = ", r"expect\[0\]: missing \['reason'\] / unknown \['why'\]"),
    ("lane = ", "os = ", r"expect\[0\]\.tags: unknown tags \['os'\]"),
    ('cases = "block.load/cutlass/*alg=transpose*"', "cases = 5", r"expect\[0\]\.cases: expected a case-id pattern"),
    ('cases = "block.load/cutlass/*alg=transpose*"', 'cases = ""', r"expect\[0\]\.cases: expected a case-id pattern"),
    ("expires = 2099-01-01", "expires = 2099-01-01T10:00:00", r"expect\[0\]\.expires: expected a TOML date \(YYYY"),
    ('reason = "transpose scratch reuse race"', "reason = []", r"expect\[0\]\.reason: expected a text"),
    ('status = "Fail"', "status = 3", r"expect\[0\]\.status: 3 is not one of"),
    ('lane = "gpu"', "lane = 1", r"expect\[0\]\.tags\.lane: expected a text"),
])
def test_malformed_entries(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = tmp_path / "e.toml"
    path.write_text("schema = 1\n" + ENTRY.format(status="Fail", expires="2099-01-01").replace(old, new))
    with pytest.raises(ExpectationError, match=message):
        load_expectations(path)


def test_shipped_expectations_parse() -> None:
    from harness.contracts import contracts_dir

    for exp in load_expectations(contracts_dir() / "expectations.toml"):
        assert exp.expires > dt.date.today(), exp.where


def test_an_expired_entry_waives_nothing(tmp_path: Path) -> None:
    """Past its expiry an entry is listed as a problem and maps no verdict: a failure stays a failure."""
    ledger = _ledger(tmp_path, expires="2026-01-01")
    failed = ledger.resolve(CaseRecord(CASE, Status.FAIL, "gpu", "out[0]=1"))
    assert (failed.status, failed.accepted) == (Status.FAIL, False)
    assert ledger.resolve(CaseRecord(CASE, Status.PASS, "gpu")).status is Status.PASS
    assert [p for p in ledger.problems() if "expired on 2026-01-01" in p]


def test_an_entry_naming_an_axis_a_contract_lacks_does_not_apply_to_it(tmp_path: Path) -> None:
    """``block.*/cccl/dtype=float16,*,valid=*`` names every contract with valid_items: a run over Block Scan
    alone (no valid axis) reads the shipped file without calling the entry stale; a Load case still can."""
    path = tmp_path / "expectations.toml"
    path.write_text("schema = 1\n" + ENTRY.format(status="NotSupported", expires="2099-01-01").replace(
        "block.load/cutlass/*alg=transpose*", "block.*/cutlass/dtype=float16,*,valid=*"))
    ledger = Ledger(load_expectations(path), {"lane": "gpu", "arch": "sm_90", "toolkit": ""})
    scan = "block.scan/cutlass/dtype=float16,block=32,ipt=1,alg=raking,op=sum,mode=inclusive,seed=none,init=none"
    assert ledger.resolve(CaseRecord(scan, Status.PASS, "gpu")).status is Status.PASS
    assert ledger.problems() == []
    ledger.resolve(CaseRecord(CASE, Status.PASS, "gpu"))  # a Load case of int32: the entry applies, unmatched
    assert [p for p in ledger.problems() if "matched no case" in p]


def test_a_run_of_chosen_ids_calls_no_entry_stale(tmp_path: Path) -> None:
    """An --ids-file run (a re-run, a bisect step) runs a subset by design: what it leaves out may be what an entry
    names, so only the run of a whole profile judges an entry stale; an expired one is an error in both."""
    ledger = _ledger(tmp_path)
    ledger.resolve(CaseRecord(CASE.replace("transpose", "direct"), Status.PASS, "gpu"))
    assert ledger.problems(whole_run=False) == []
    assert [p for p in ledger.problems() if "matched no case" in p]
    expired = _ledger(tmp_path, expires="2026-01-01", today=dt.date(2026, 11, 29))
    assert [p for p in expired.problems(whole_run=False) if "expired on 2026-01-01" in p]
