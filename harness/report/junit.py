"""JUnit XML from lanes: one testsuite per lane, one testcase per case id (classname contract/backend).

A verdict the lane accepts is a pass (Pass) or a skip (ExpectedFail, waived NotSupported); every
other verdict is a failure, or an error where the kernel never produced a result (CompileError,
Crash, Timeout). The status is the result's type; the detail is its message and text, with what XML
cannot carry escaped (a suite's ``replaced`` property says how many characters were).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from harness import caseid
from harness.expectations import Verdict
from harness.report.characters import carried, note
from harness.report.verdicts import Lane
from harness.statuses import Status

ERRORS = frozenset({Status.COMPILE_ERROR, Status.CRASH, Status.TIMEOUT})


def junit_case(record: Verdict) -> TestCase:
    contract, backend, params = caseid.parse(record.id)
    case = TestCase(",".join(f"{k}={v}" for k, v in params), f"{contract}/{backend}", record.seconds)
    detail, _ = carried(record.detail)
    message = detail.splitlines()[0] if detail else str(record.status)
    if record.status is Status.PASS:
        return case
    result: Failure | Error | Skipped
    if record.accepted:
        waiver = f" ({carried(record.waiver)[0]})" if record.waiver else ""
        result = Skipped(f"{record.status}: {message}{waiver}", str(record.status))
    elif record.status in ERRORS:
        result = Error(message, str(record.status))
    else:
        result = Failure(message, str(record.status))
    if detail:
        result.text = detail
    case.result = [result]
    return case


def _replaced(lane: Lane) -> int:
    """Characters of the lane's verdicts that its suite shows escaped."""
    return sum(carried(r.detail)[1] + carried(r.waiver or "")[1] for r in lane.cases.values())


def junit_suite(lane: Lane) -> TestSuite:
    out = TestSuite(lane.name)
    for key, value in (("profile", lane.profile), ("seed", lane.session.seed),
                       ("backends", ",".join(lane.backends)), ("ended", lane.ended)):
        out.add_property(key, carried(str(value))[0])
    replaced = _replaced(lane)
    if replaced:
        out.add_property("replaced", note(replaced))
    for record in sorted(lane.cases.values(), key=lambda r: r.id):
        # append, not add_testcase: that one scans the suite for a duplicate first, which made a
        # full-profile lane (183k cases per backend) quadratic; case ids are unique by construction.
        out.append(junit_case(record))  # type: ignore[no-untyped-call]  # junitparser is untyped here
    out.update_statistics()  # type: ignore[no-untyped-call]  # junitparser is untyped here
    return out


def write_junit(lanes: Sequence[Lane], path: Path) -> None:
    xml = JUnitXml()
    for lane in lanes:
        xml.add_testsuite(junit_suite(lane))
    xml.update_statistics()  # type: ignore[no-untyped-call]
    xml.write(str(path))  # pretty-printing re-parses the whole tree through minidom
