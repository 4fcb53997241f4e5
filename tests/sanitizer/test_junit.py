"""``harness.sanitizer.junit``: the sanitizer's verdicts carried into the JUnit file pytest wrote."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.expectations import Ledger
from harness.plugin import kernel_scope
from harness.sanitizer import SanitizerLaneError
from harness.sanitizer.judge import judge
from harness.sanitizer.junit import junit_name, junit_outcomes, mark_junit
from harness.sanitizer.tools import CONTROLS, ERROR_EXITCODE

PASSED = "block.load/numba/dtype=int32,block=32,ipt=1,alg=direct,valid=full,oob=none,offset=zero"
FAILED = "block.load/numba/dtype=int32,block=32,ipt=1,alg=direct,valid=zero,oob=none,offset=zero"
CONTROL = "control/racecheck/shared-race"


def write_junit(path: Path) -> None:
    """What pytest's junitxml writes for these node ids (no ``::``: the name is the id with ``/`` as ``.``)."""
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
        '<testsuite name="pytest" errors="0" failures="1" skipped="0" tests="4" time="1.0">'
        f'<testcase classname="" name="{junit_name(PASSED)}" time="0.001"><properties>'
        '<property name="status" value="Pass" /></properties></testcase>'
        f'<testcase classname="" name="{junit_name(FAILED)}" time="0.001">'
        '<failure message="Fail: out[0]=1">Fail: out[0]=1</failure></testcase>'
        f'<testcase classname="" name="{junit_name(CONTROL)}" time="0.9" />'
        '<testcase classname="" name="block.load.numba.other" time="0.001" />'
        "</testsuite></testsuites>")


def test_charged_cases_and_a_missed_control_become_failures(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(path)
    changed = mark_junit(path, {PASSED: ("failure", "SanitizerError: racecheck: 1 record(s)\nmore"),
                                FAILED: ("skipped", "ExpectedFail: racecheck: 2 record(s)"),
                                CONTROL: ("failure", "racecheck did not report the planted bug")})
    assert changed == 3
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("failures"), suite.get("skipped"), suite.get("tests")) == ("2", "1", "4")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    failure = cases[junit_name(PASSED)].find("failure")
    assert failure is not None and failure.get("message") == "SanitizerError: racecheck: 1 record(s)"
    assert failure.text == "SanitizerError: racecheck: 1 record(s)\nmore"
    assert cases[junit_name(PASSED)].find("properties") is not None
    assert [child.tag for child in cases[junit_name(FAILED)]] == ["skipped"]
    assert cases[junit_name(FAILED)].find("skipped").get("type") == "pytest.xfail"  # type: ignore[union-attr]
    assert list(cases["block.load.numba.other"]) == []


def test_in_group_mode_a_charged_case_marks_its_group_testcase(tmp_path: Path, lane: Any,
                                                               hazard: Callable[..., str]) -> None:
    kernel, other = "coop_block_load__int32__ipt1__direct", PASSED.replace("ipt=1", "ipt=2")
    lane.launch("gw0", 100, kernel, [PASSED, FAILED])
    lane.launch("gw0", 100, "coop_block_load__int32__ipt2__direct", [other], seq=2)
    lane.control("gw0", 100)
    lane.run("w0.10", 100, "gw0", ERROR_EXITCODE, hazard(CONTROLS["racecheck"].symbol, 0), hazard(kernel, 0))
    groups = [kernel_scope(PASSED), kernel_scope(other), CONTROL]
    path = tmp_path / "junit.xml"
    path.write_text('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
                    'failures="0" skipped="0" tests="3">'
                    + "".join(f'<testcase classname="" name="{junit_name(g)}" />' for g in groups)
                    + "</testsuite></testsuites>")
    result = judge(lane.layout, ["w0"], Ledger([], {"lane": "gpu-racecheck"}))
    assert mark_junit(path, junit_outcomes(result, "group")) == 1
    cases = {case.get("name"): case for case in ET.parse(path).getroot().iter("testcase")}
    failure = cases[junit_name(kernel_scope(PASSED))].find("failure")
    assert failure is not None and failure.get("message") == "1 of 2 case(s) not accepted: 1 SanitizerError"
    assert f"\n  {PASSED}: SanitizerError: racecheck: 1 record(s)" in (failure.text or "")
    assert [list(cases[junit_name(g)]) for g in groups[1:]] == [[], []]


def test_an_unreadable_junit_file_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("<testsuites>")
    with pytest.raises(SanitizerLaneError, match=r"junit\.xml: cannot read the lane's JUnit file"):
        mark_junit(path, {})
