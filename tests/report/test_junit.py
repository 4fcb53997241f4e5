"""JUnit XML: a testsuite per lane, a testcase per case id, results mapped from statuses with the detail."""

from __future__ import annotations

from pathlib import Path

from junitparser import Error, Failure, JUnitXml, Skipped

from harness.expectations import Ledger, Verdict, load_expectations
from harness.report.junit import junit_case, write_junit
from harness.report.verdicts import load_lanes
from harness.statuses import Status
from tests.report.journals import SCRIPT, WAIVER, case_id


def test_one_suite_per_lane_one_case_per_id(qualification: list[Path], waivers: Path, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(load_lanes(qualification, ledger=Ledger(load_expectations(waivers))), path)
    xml = JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert list(suites) == ["host", "simulator", "gpu", "gpu-racecheck", "wheels"]
    gpu = suites["gpu"]
    assert (gpu.tests, gpu.failures, gpu.errors, gpu.skipped) == (6, 1, 0, 1)
    properties = {p.name: p.value for p in gpu.properties()}  # type: ignore[no-untyped-call]
    assert properties == {"profile": "pr", "seed": "7", "backends": "numba,cutlass,rustfatbin", "ended": "True"}
    failed = next(c for c in gpu if c.result and isinstance(c.result[0], Failure))
    assert failed.classname == "block.load/cutlass"
    assert failed.name == "dtype=int32,block=32,ipt=4,alg=striped,valid=partial,oob=none,offset=zero"
    assert (failed.result[0].type, failed.result[0].message, failed.result[0].text) == ("Fail", SCRIPT, SCRIPT)
    assert "<script>" not in path.read_text()  # XML-escaped
    assert xml.tests == 20


def test_statuses_map_to_junit_results() -> None:
    def result(status: Status, waiver: str | None = None) -> tuple[type, str] | None:
        case = junit_case(Verdict(case_id("numba"), status, "gpu", "why\nmore", waiver=waiver))
        return (type(case.result[0]), case.result[0].type) if case.result else None

    assert result(Status.PASS) is None
    assert result(Status.EXPECTED_FAIL, WAIVER) == (Skipped, "ExpectedFail")
    assert result(Status.NOT_SUPPORTED, WAIVER) == (Skipped, "NotSupported")
    assert result(Status.NOT_SUPPORTED) == (Failure, "NotSupported")  # undeclared: a fail-closed lane fails it
    assert result(Status.FLAKE, WAIVER) == (Skipped, "Flake")
    for status in (Status.FAIL, Status.SANITIZER_ERROR, Status.UNEXPECTED_PASS, Status.MISSING, Status.FLAKE):
        assert result(status) == (Failure, str(status))
    for status in (Status.COMPILE_ERROR, Status.CRASH, Status.TIMEOUT):
        assert result(status) == (Error, str(status))


def test_a_result_message_is_the_first_line_and_its_text_the_whole_detail() -> None:
    case = junit_case(Verdict(case_id("numba"), Status.CRASH, "gpu", "worker died\ntraceback", seconds=1.5))
    assert (case.result[0].message, case.result[0].text, case.time) == ("worker died", "worker died\ntraceback", 1.5)
