"""``harness.sanitizer.judge`` on lane folders written by hand: verdicts, controls, crashes, unmapped records."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.expectations import Ledger, load_expectations
from harness.journal import ControlRecord, final_cases, read_journal
from harness.plugin import kernel_scope
from harness.sanitizer.judge import judge
from harness.sanitizer.junit import junit_outcomes
from harness.sanitizer.summary import summary_line
from harness.sanitizer.tools import CONTROLS, ERROR_EXITCODE
from harness.statuses import Status

KERNEL = "coop_block_load__int16__ipt1__direct"
CASES = [f"block.load/numba/dtype=int16,block=64,ipt=1,alg=direct,valid={v},oob=none,offset=zero"
         for v in ("full", "zero", "one")]
CONTROL = CONTROLS["racecheck"]
#: A case of another kernel group than CASES.
OTHER_GROUP = CASES[0].replace("ipt=1", "ipt=3")


def ledger(expectations: Path | None = None) -> Ledger:
    return Ledger(load_expectations(expectations) if expectations else [], {"lane": "gpu-racecheck"})


@pytest.fixture
def healthy(lane: Any, hazard: Callable[..., str]) -> Any:
    """One worker that ran one three-block launch and the control; its sanitizer reported the control."""
    lane.launch("gw0", 100, KERNEL, CASES)
    lane.control("gw0", 100)
    lane.run("w0.10", 100, "gw0", ERROR_EXITCODE, hazard(f"cudapy::{CONTROL.symbol}[abi:v1]()", 0))
    return lane


def test_a_clean_lane_passes_and_counts(healthy: Any) -> None:
    result = judge(healthy.layout, ["w0"], ledger())
    assert result.problems == [] and result.control_reported
    assert (result.records, result.control_records, result.charged) == (1, 1, {})
    assert summary_line(result.finals, "racecheck") == \
        "Passed: 3 numba GPU checks, under racecheck"


def test_a_record_on_a_case_makes_its_final_verdict_sanitizer_error(healthy: Any, hazard: Callable[..., str]) -> None:
    healthy.run("w0.10", 100, "gw0", ERROR_EXITCODE, hazard(CONTROL.symbol, 0), hazard(f"{KERNEL}(Array<short>)", 1),
                hazard(KERNEL, 1, (3, 0, 0)))
    result = judge(healthy.layout, ["w0"], ledger())
    finals = final_cases(read_journal(healthy.layout.journals()[0]))
    charged = finals[CASES[1]]
    assert charged.status is Status.SANITIZER_ERROR and charged.seed == 7 and charged.lane == "gpu-racecheck"
    assert charged.detail.startswith(f"racecheck: 2 record(s); first: Error Hazard at {KERNEL}(Array<short>) "
                                     "(kernels.py:9) block (1,0,0) thread (0,0,0) / (0,0,0) [record 2 of ")
    assert finals[CASES[0]].status is finals[CASES[2]].status is Status.PASS
    assert list(result.charged) == [CASES[1]] and len(result.charged[CASES[1]]) == 2
    assert result.problems == [f"SanitizerError: {CASES[1]}: {charged.detail}"]
    assert summary_line(result.finals, "racecheck") == \
        "Passed: 2 numba GPU checks, under racecheck"


def test_in_group_mode_a_charged_case_fails_its_group_and_the_summary_counts_cases(
        healthy: Any, hazard: Callable[..., str]) -> None:
    healthy.launch("gw0", 100, "coop_block_load__int16__ipt3__direct", [OTHER_GROUP], seq=2)
    healthy.run("w0.10", 100, "gw0", ERROR_EXITCODE, hazard(CONTROL.symbol, 0), hazard(KERNEL, 1))
    result = judge(healthy.layout, ["w0"], ledger())
    charged = result.finals[CASES[1]]
    assert junit_outcomes(result, "case") == {CASES[1]: ("failure", f"SanitizerError: {charged.detail}")}
    assert junit_outcomes(result, "group") == {kernel_scope(CASES[1]): (
        "failure", f"1 of 3 case(s) not accepted: 1 SanitizerError\n  {CASES[1]}: SanitizerError: {charged.detail}")}
    assert summary_line(result.finals, "racecheck") == \
        "Passed: 3 numba GPU checks, under racecheck"


def test_a_waived_finding_is_an_expected_failure(healthy: Any, hazard: Callable[..., str], tmp_path: Path) -> None:
    healthy.run("w0.10", 100, "gw0", ERROR_EXITCODE, hazard(CONTROL.symbol, 0), hazard(KERNEL, 2))
    waivers = tmp_path / "expectations.toml"
    waivers.write_text(f'schema = 1\n[[expect]]\ncases = "{CASES[2]}"\nstatus = "SanitizerError"\n'
                       f'tags = {{ lane = "gpu-racecheck" }}\nbug = "https://bugs.example/12"\n'
                       f"expires = {dt.date.today() + dt.timedelta(days=30)}\nreason = \"known race\"\n")
    result = judge(healthy.layout, ["w0"], ledger(waivers))
    assert result.problems == []
    waived = result.finals[CASES[2]]
    assert waived.status is Status.EXPECTED_FAIL and waived.waiver == "https://bugs.example/12"
    recorded = final_cases(read_journal(healthy.layout.journals()[0]))[CASES[2]]
    assert recorded.status is Status.SANITIZER_ERROR  # the journal keeps the backend's own verdict


def test_an_unmapped_record_fails_the_lane_shown_in_full(healthy: Any, hazard: Callable[..., str]) -> None:
    stray = hazard("thrust::cuda_cub::core::_kernel_agent", 0)
    healthy.run("w0.10", 100, "gw0", ERROR_EXITCODE, hazard(CONTROL.symbol, 0), stray)
    result = judge(healthy.layout, ["w0"], ledger())
    (problem,) = result.problems
    assert (result.records, result.control_records, result.unmapped) == (2, 1, 1)
    assert problem.startswith("unmapped sanitizer record (no launch of its worker runs a kernel its device frames "
                              "name (functions: thrust::cuda_cub::core::_kernel_agent; 2 launch(es) in the ledger)), "
                              f"record 2 of {healthy.layout.xml('w0.10')}:\n<record><kind>Hazard</kind>")
    assert problem.endswith("</record>")


def test_records_map_only_to_launches_of_their_own_worker(healthy: Any, hazard: Callable[..., str]) -> None:
    other = "coop_block_load__int16__ipt3__striped"
    healthy.launch("gw1", 200, other, [CASES[0].replace("ipt=1,alg=direct", "ipt=3,alg=striped")])
    healthy.run("w1.20", 200, "gw1", 0)
    healthy.run("w0.10", 100, "gw0", ERROR_EXITCODE, hazard(CONTROL.symbol, 0), hazard(other, 0))
    (problem,) = judge(healthy.layout, ["w0", "w1"], ledger()).problems
    assert problem.startswith("unmapped sanitizer record (no launch of its worker") and "record 2 of" in problem


def controls(layout: Any) -> list[ControlRecord]:
    return [r for path in layout.journals() for r in read_journal(path) if isinstance(r, ControlRecord)]


def test_the_lane_records_its_control_as_seen(healthy: Any) -> None:
    judge(healthy.layout, ["w0"], ledger())
    assert controls(healthy.layout) == [ControlRecord(CONTROL.id, "gpu-racecheck", True, 1,
                                                      f"racecheck reported it ({CONTROL.plants})")]


def test_a_missed_control_fails_the_lane(healthy: Any) -> None:
    healthy.run("w0.10", 100, "gw0", 0)
    result = judge(healthy.layout, ["w0"], ledger())
    assert not result.control_reported
    missed = (f"positive control {CONTROL.id} was launched but racecheck did not report it "
              f"({CONTROL.plants}): this lane cannot see what it is meant to check")
    assert result.problems == [missed]
    assert controls(healthy.layout) == [ControlRecord(CONTROL.id, "gpu-racecheck", False, 0, missed)]


def test_a_control_that_never_launched_fails_the_lane(lane: Any) -> None:
    lane.launch("gw0", 100, KERNEL, CASES)
    lane.run("w0.10", 100, "gw0", 0)
    missed = f"positive control {CONTROL.id} never launched (see its item in JUnit)"
    assert judge(lane.layout, ["w0"], ledger()).problems == [missed]
    assert [(c.seen, c.detail) for c in controls(lane.layout)] == [(False, missed)]


def test_a_crashed_sanitizer_fails_the_lane_with_its_log(healthy: Any) -> None:
    healthy.layout.log("w0.10").write_text("========= COMPUTE-SANITIZER\n========= Error: Internal Sanitizer Error\n")
    healthy.run("w0.10", 100, "gw0", 255)
    problems = judge(healthy.layout, ["w0"], ledger()).problems
    assert problems[0] == (f"compute-sanitizer of run w0.10 exited 255 (neither 0 nor {ERROR_EXITCODE}): the "
                           f"sanitizer or its worker crashed; log: {healthy.layout.log('w0.10')}\n"
                           "    | ========= COMPUTE-SANITIZER\n    | ========= Error: Internal Sanitizer Error")


def test_a_worker_that_exits_badly_after_a_clean_check_still_fails_the_lane_saying_so(healthy: Any) -> None:
    """Seen on the H200 (initcheck, Exchange and Shuffle full): one worker of 14 exited 1 after its session, its
    journal closed by its end record, while the sanitizer printed 0 errors to the end. Not a finding, and not a
    sanitizer crash: the lane still fails (it cannot vouch for a process that did not end cleanly), naming what
    happened."""
    healthy.layout.log("w0.10").write_text("========= COMPUTE-SANITIZER\n========= Target application returned an "
                                           "error\n========= ERROR SUMMARY: 0 errors\n")
    healthy.run("w0.10", 100, "gw0", 1)
    problems = judge(healthy.layout, ["w0"], ledger()).problems
    assert problems[0].startswith(
        "the worker of run w0.10 exited 1 after compute-sanitizer checked it to its end (ERROR SUMMARY: 0 errors): "
        "no finding, but a worker that does not end cleanly fails the lane; log: ")


def test_unparseable_xml_fails_the_lane_naming_the_file(healthy: Any) -> None:
    healthy.layout.xml("w0.10").write_text("<ComputeSanitizerOutput><record><kind>Haz")
    problems = judge(healthy.layout, ["w0"], ledger()).problems
    assert problems[0].startswith(f"{healthy.layout.xml('w0.10')}: not well-formed XML: ")


def test_missing_xml_after_launches_fails_the_lane(healthy: Any) -> None:
    healthy.layout.xml("w0.10").unlink()
    problems = judge(healthy.layout, ["w0"], ledger()).problems
    assert problems[0] == (f"compute-sanitizer of run w0.10 wrote no XML ({healthy.layout.xml('w0.10')} is "
                           f"missing) although it exited {ERROR_EXITCODE} after 2 recorded launch(es)")


def test_findings_announced_by_the_exit_status_must_be_in_the_xml(lane: Any) -> None:
    lane.launch("gw0", 100, KERNEL, CASES)
    lane.control("gw0", 100)
    lane.run("w0.10", 100, "gw0", ERROR_EXITCODE)
    problems = judge(lane.layout, ["w0"], ledger()).problems
    assert problems[0].startswith(f"compute-sanitizer of run w0.10 exited {ERROR_EXITCODE} (it found something) "
                                  f"but {lane.layout.xml('w0.10')} holds no record; log: ")


def test_a_slot_without_exit_status_fails_the_lane(healthy: Any) -> None:
    problems = judge(healthy.layout, ["w0", "w1"], ledger()).problems
    assert problems == [f"worker slot w1: its wrapper left no exit status in {healthy.layout.root / 'status'} "
                        "(the worker never started, or it was killed)"]


def test_a_lane_that_ran_no_case_fails(lane: Any, hazard: Callable[..., str]) -> None:
    lane.control("gw0", 100)
    lane.run("w0.10", 100, "gw0", ERROR_EXITCODE, hazard(CONTROL.symbol, 0))
    assert judge(lane.layout, ["w0"], ledger()).problems == ["no case ran: a lane that ran nothing fails"]


def test_a_clean_worker_that_launched_nothing_may_leave_no_xml(healthy: Any) -> None:
    healthy.run("w1.20", 200, "gw1", 0)
    healthy.layout.xml("w1.20").unlink()
    assert judge(healthy.layout, ["w0", "w1"], ledger()).problems == []


def test_a_worker_the_sanitizer_never_attached_to_fails_the_lane_saying_why(healthy: Any) -> None:
    """The sanitizer gave up waiting for a worker to initialize CUDA (here: collection outlasted the launch
    timeout); that worker checked nothing under the tool, whatever its exit status says."""
    healthy.run("w1.11", 101, "gw1", 0)
    healthy.layout.log("w1.11").write_text(
        "========= COMPUTE-SANITIZER\n========= Error: No attachable process found. compute-sanitizer timed-out.\n"
        "========= Default timeout can be adjusted with --launch-timeout. Awaiting target completion.\n")
    problems = judge(healthy.layout, ["w0", "w1"], ledger()).problems
    assert problems == [f"compute-sanitizer of run w1.11 never attached to its worker (the worker did not "
                        f"initialize CUDA within --launch-timeout): nothing it ran was checked under racecheck; "
                        f"log: {healthy.layout.log('w1.11')}"]
