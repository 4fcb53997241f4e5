"""Reading lanes from journals: merging, Missing for announced cases without a verdict, kinds, bad input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.journal import CaseRecord, JournalWriter, LaunchRecord, SessionRecord, to_json
from harness.report.errors import ReportError
from harness.report.verdicts import describe, journals_in, lane_kind, load_lanes
from harness.statuses import Status
from tests.report.journals import case_id


@pytest.mark.parametrize(("kind", "expected"), [("run", "run"), ("compile", "compile"), ("reject", "reject")])
def test_describe_tells_the_kind_of_check_from_the_id(kind: str, expected: str) -> None:
    info = describe(case_id("cutlass", kind))
    assert (info.contract, info.backend, info.kind) == ("block.load", "cutlass", expected)


EXCHANGE_KERNEL = ("block.exchange/numba/dtype=int32,block=128,ipt=4,alg=striped_to_blocked,slicing=on,"
                   "output=separate")


@pytest.mark.parametrize(("case", "kind"), [
    (EXCHANGE_KERNEL, "compile"),
    (f"{EXCHANGE_KERNEL},ranks=none", "run"),
    ("block.shuffle/numba/dtype=int8,block=7,ipt=2,alg=up,output=inplace,distance=none", "run"),
    ("block.shuffle/numba/dtype=int8,block=7,ipt=2,alg=up,output=inplace", "compile"),
])
def test_a_familys_own_kernel_axes_belong_to_its_kernel_point(case: str, kind: str) -> None:
    """Exchange's slicing and output (Shuffle's output) are kernel axes, as its contract's roles say: an id of
    kernel axes only is a compile check, and a run check's kernel point keeps them. Read as case axes, the host
    lane's Exchange compile checks counted as run checks and its compile and resources cells were never earned."""
    info = describe(case)
    assert info.kind == kind
    assert info.kernel == case.removesuffix(",ranks=none").removesuffix(",distance=none")


@pytest.mark.parametrize(("lane", "kind"), [("host", "host"), ("simulator", "host"), ("gpu", "gpu"),
                                            ("gpu-memcheck", "gpu"), ("wheels", "wheels"), ("gpux", "host")])
def test_lane_kind(lane: str, kind: str) -> None:
    assert lane_kind(lane) == kind


def test_a_later_journal_of_a_lane_replaces_earlier_verdicts(journal: Callable[..., Path]) -> None:
    first = journal("gpu", [(case_id("numba"), Status.CRASH), (case_id("cutlass"), Status.PASS)], ended=False,
                    name="gpu-1")
    second = journal("gpu", [(case_id("numba"), Status.PASS)], name="gpu-2")
    [lane] = load_lanes([first, second])
    assert {i: r.status for i, r in lane.cases.items()} == {case_id("numba"): Status.PASS,
                                                            case_id("cutlass"): Status.PASS}
    assert lane.journals == (str(first), str(second))
    assert not lane.ended  # one of its runs was cut short


def test_an_announced_case_without_a_verdict_is_missing(journal: Callable[..., Path]) -> None:
    announced = [case_id("numba", valid="full"), case_id("numba", valid="zero")]
    path = journal("gpu", [(announced[0], Status.PASS)], ended=False, groups=[("kernel-a", announced)])
    [lane] = load_lanes([path], ["gpu.jsonl"])
    missing = lane.cases[announced[1]]
    assert missing.status is Status.MISSING
    assert missing.detail == "no verdict: gpu.jsonl stops inside kernel group kernel-a"


def test_sanitizer_lanes_name_their_tool(journal: Callable[..., Path]) -> None:
    lanes = load_lanes([journal("gpu-racecheck", []), journal("gpu", []), journal("host", [])])
    assert [(lane.name, lane.tool) for lane in lanes] == [("gpu-racecheck", "racecheck"), ("gpu", None),
                                                          ("host", None)]


def test_a_file_without_a_session_is_not_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    with pytest.raises(ReportError, match=r"empty.jsonl: no session record"):
        load_lanes([path])


def test_a_damaged_line_names_the_file(journal: Callable[..., Path]) -> None:
    path = journal("gpu", [(case_id("numba"), Status.PASS)])
    path.write_text(path.read_text().replace('"status":"Pass"', '"status":"Passed"'))
    with pytest.raises(ReportError, match=r"gpu.jsonl: not a harness journal"):
        load_lanes([path])


def test_a_malformed_case_id_names_the_file(journal: Callable[..., Path]) -> None:
    path = journal("gpu", [("block.load/numba/dtype=int 32", Status.PASS)])
    with pytest.raises(ReportError, match=r"gpu.jsonl: .*dtype=int 32"):
        load_lanes([path])


def test_no_journal_is_an_error() -> None:
    with pytest.raises(ReportError, match="no journal given"):
        load_lanes([])


def test_a_lane_ended_when_its_last_session_reached_an_end_record(journal: Callable[..., Path]) -> None:
    path = journal("gpu-racecheck", [(case_id("numba"), Status.PASS)])
    with JournalWriter(path) as writer:  # a sanitizer finding appended after the run ended
        writer.write(CaseRecord(case_id("numba"), Status.SANITIZER_ERROR, "gpu-racecheck", "race"))
    assert load_lanes([path])[0].ended
    with JournalWriter(path) as writer:  # a resumed run that was cut short again
        writer.write(SessionRecord("gpu-racecheck", "pr", 7, ("numba",)))
    assert not load_lanes([path])[0].ended


def test_only_files_that_open_with_a_session_are_journals(journal: Callable[..., Path], tmp_path: Path) -> None:
    path = journal("gpu", [])
    (path.parent / "controls.jsonl").write_text(to_json(LaunchRecord("k", ("a/b/c=1",), 1, pid=1)) + "\n")
    (path.parent / "notes.jsonl").write_text("hello\n")
    (path.parent / "sub").mkdir()
    nested = journal("host", [], name="sub/host")
    assert journals_in(path.parent) == [path]
    assert journals_in(path.parent, recursive=True) == [path, nested]
