"""Qualified means every cell of the coverage manifest earned: host, GPU and each sanitizer lane with its control."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.journal import CaseRecord, ControlRecord
from harness.lanes import SANITIZER_TOOLS
from harness.report.document import Inputs, Source, build
from harness.report.render import render_html, render_json, render_markdown
from harness.sanitizer.tools import CONTROLS
from harness.statuses import Status
from tests.report.dom import Elements
from tests.report.journals import case_id

WHEN = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
KINDS = ["reject", "compile", "resources", "runtime", *SANITIZER_TOOLS]
BACKENDS = ("numba", "cutlass")


@pytest.fixture
def coverage(tmp_path: Path) -> Path:
    path = tmp_path / "coverage.toml"
    path.write_text(f'schema = 1\n[[cell]]\ncontract = "block.load"\nbackends = {json.dumps(BACKENDS)}\n'
                    f"evidence = {json.dumps(KINDS)}\n")
    return path


def host(journal: Callable[..., Path]) -> Path:
    return journal("host", [(case_id(b, kind), Status.PASS) for b in BACKENDS for kind in ("compile", "reject")])


def run_lane(journal: Callable[..., Path], lane: str, *extra: Any) -> Path:
    return journal(lane, [*((case_id(b, valid=v), Status.PASS) for b in BACKENDS for v in ("full", "partial")),
                          *extra])


def control(tool: str, seen: bool = True) -> ControlRecord:
    return ControlRecord(CONTROLS[tool].id, f"gpu-{tool}", seen, int(seen), "" if seen else "not reported")


@pytest.fixture
def everything(journal: Callable[..., Path]) -> list[Path]:
    """A full qualification: the host lane, the gpu lane and each sanitizer lane with its control seen."""
    return [host(journal), run_lane(journal, "gpu"),
            *(run_lane(journal, f"gpu-{tool}", control(tool)) for tool in SANITIZER_TOOLS)]


def report(journals: list[Path], coverage: Path, expectations: Path | None = None) -> dict[str, Any]:
    return build(Inputs([Source.of(p) for p in journals], coverage=Source.of(coverage),
                        expectations=Source.of(expectations) if expectations else None), WHEN)


def test_every_cell_earned_qualifies(everything: list[Path], coverage: Path) -> None:
    doc = report(everything, coverage)
    assert doc["summary"]["problems"] == [] and doc["summary"]["qualified"]
    assert doc["coverage"]["earned"] == len(doc["coverage"]["cells"]) == len(BACKENDS) * len(KINDS)
    assert [lane["control"] for lane in doc["lanes"]] == [None, None, *(["seen"] * len(SANITIZER_TOOLS))]


def test_a_host_only_report_says_no_and_lists_what_is_missing_first(journal: Callable[..., Path],
                                                                    coverage: Path) -> None:
    doc = report([host(journal)], coverage)
    summary = doc["summary"]
    assert not summary["qualified"]
    assert summary["problems"] == [
        "lane gpu did not run: no runtime evidence (2 coverage cells not earned)",
        *(f"lane gpu-{tool} did not run: no {tool} evidence (2 coverage cells not earned)" for tool in SANITIZER_TOOLS)]
    missing = {(c["backend"], c["evidence"]) for c in doc["coverage"]["cells"] if not c["earned"]}
    assert missing == {(b, kind) for b in BACKENDS for kind in KINDS[3:]}
    assert [e["lane"] for e in doc["coverage"]["lanes_not_run"]] == ["gpu", *(f"gpu-{t}" for t in SANITIZER_TOOLS)]
    md = render_markdown(doc).splitlines()
    assert md[2] == "Generated 2026-03-01T00:00:00+00:00. Qualified: **no**."
    assert md[4:6] == ["Why it does not qualify:", "- lane gpu did not run: no runtime evidence (2 coverage cells "
                                                   "not earned)"]
    tags = Elements(render_html(doc)).tags
    verdict = next(i for i, (_, attrs) in enumerate(tags) if attrs.get("id") == "qualified")
    assert tags[verdict + 1] == ("ul", {"id": "problems"})  # the reasons come right after the verdict
    assert render_json(doc).splitlines()[5:7] == ['  "qualified": false,', '  "problems": [']


def test_a_sanitizer_lane_whose_control_was_not_seen_earns_nothing(journal: Callable[..., Path],
                                                                   coverage: Path) -> None:
    lanes = [host(journal), run_lane(journal, "gpu"),
             run_lane(journal, "gpu-racecheck", control("racecheck", seen=False)),
             run_lane(journal, "gpu-memcheck"),  # no control record at all
             *(run_lane(journal, f"gpu-{tool}", control(tool)) for tool in ("initcheck", "synccheck"))]
    doc = report(lanes, coverage)
    assert not doc["summary"]["qualified"]
    why = {(c["backend"], c["evidence"]): c["why"] for c in doc["coverage"]["cells"] if not c["earned"]}
    assert set(why) == {(b, tool) for b in BACKENDS for tool in ("racecheck", "memcheck")}
    assert why["numba", "racecheck"] == "lane gpu-racecheck's positive control was not seen: not reported"
    assert why["numba", "memcheck"] == "lane gpu-memcheck holds no record that its positive control was seen"
    assert doc["summary"]["problems"] == [
        "lane gpu-racecheck's positive control was not seen: not reported: no racecheck evidence (2 coverage cells "
        "not earned)",
        "lane gpu-memcheck holds no record that its positive control was seen: no memcheck evidence (2 coverage "
        "cells not earned)"]
    assert [lane["control"] for lane in doc["lanes"][2:]] == ["not seen", "not recorded", "seen", "seen"]


def test_each_kind_asks_its_own_checks(journal: Callable[..., Path], coverage: Path) -> None:
    """numba's compile check broke a resource rule (it compiled), cutlass's failed otherwise; only cutlass ran
    on the GPU."""
    numba, cutlass = case_id("numba", "compile"), case_id("cutlass", "compile")
    lanes = [journal("host", [CaseRecord(numba, Status.FAIL, "host", "shared bytes 64", ("resources",)),
                              (cutlass, Status.FAIL, "no CALL in SASS broken"),
                              *((case_id(b, "reject"), Status.PASS) for b in BACKENDS)]),
             journal("gpu", [(case_id("cutlass"), Status.PASS)])]
    doc = report(lanes, coverage)
    why = {(c["backend"], c["evidence"]): c["why"] for c in doc["coverage"]["cells"] if not c["earned"]}
    assert ("numba", "compile") not in why and ("numba", "reject") not in why
    assert why["numba", "resources"] == (f"1 of the 1 compile checks of block.load/numba in lane host not accepted, "
                                         f"e.g. Fail: {numba}")
    assert why["cutlass", "compile"] == why["cutlass", "resources"] == (
        f"1 of the 1 compile checks of block.load/cutlass in lane host not accepted, e.g. Fail: {cutlass}")
    assert why["numba", "runtime"] == "no run checks of block.load/numba in lane gpu"
    assert ("cutlass", "runtime") not in why


def test_declared_unsupported_checks_alone_earn_nothing(everything: list[Path], journal: Callable[..., Path],
                                                        coverage: Path, tmp_path: Path) -> None:
    ids = [case_id("cutlass", valid=v) for v in ("full", "partial")]
    gpu = journal("gpu", [*((case_id("numba", valid=v), Status.PASS) for v in ("full", "partial")),
                          *((i, Status.NOT_SUPPORTED, "no such algorithm") for i in ids)], name="gpu-declared")
    waivers = tmp_path / "waivers.toml"
    waivers.write_text('schema = 1\n[[expect]]\ncases = "block.load/cutlass/*"\nstatus = "NotSupported"\n'
                       'tags = { lane = "gpu" }\nbug = "https://bugs.example/4"\nexpires = 2099-01-01\n'
                       'reason = "not written yet"\n')
    doc = report([*everything, gpu], coverage, waivers)
    assert doc["counts"]["lanes"]["gpu"]["accepted"] == 4  # every verdict accepted, yet
    assert [(c["backend"], c["evidence"], c["why"]) for c in doc["coverage"]["cells"] if not c["earned"]] == [
        ("cutlass", "runtime", "none of the 2 run checks of block.load/cutlass in lane gpu passed (waived or "
                               "declared unsupported ones are no evidence)")]
