"""The lane's one-line summary counts each backend's passed GPU checks once: a sanitizer lane over one backend
printed "Passed: 197362 shared-contract checks, 197362 rustfatbin GPU checks", naming each of its cases twice and
with the report's name for host-side checks, none of which it ran."""

from __future__ import annotations

from harness.journal import CaseRecord
from harness.sanitizer.summary import summary_line
from harness.statuses import Status


def _finals(*verdicts: tuple[str, Status]) -> dict[str, CaseRecord]:
    return {i: CaseRecord(i, status, "gpu-racecheck") for i, status in verdicts}


def test_one_backend_counts_its_checks_once() -> None:
    finals = _finals(("block.load/rustfatbin/ipt=1", Status.PASS), ("block.load/rustfatbin/ipt=2", Status.PASS))
    assert summary_line(finals, "racecheck") == "Passed: 2 rustfatbin GPU checks, under racecheck"


def test_several_backends_say_how_many_case_points_passed_on_every_one() -> None:
    finals = _finals(("block.load/numba/ipt=1", Status.PASS), ("block.load/numba/ipt=2", Status.PASS),
                     ("block.load/cutlass/ipt=1", Status.PASS),
                     ("block.load/cutlass/ipt=2", Status.SANITIZER_ERROR))
    assert summary_line(finals, "memcheck") == ("Passed: 1 cutlass GPU check, 2 numba GPU checks, under memcheck "
                                                "(1 of 2 case points passed on every backend that ran them)")


def test_a_lane_that_recorded_nothing_says_so() -> None:
    assert summary_line({}, "initcheck") == "Passed: no GPU check, under initcheck"
