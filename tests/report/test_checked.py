"""What the report says was checked: rules by passing cases, axis values, resource figures, sanitizer lanes, and
the coverage grid that answers "was warp_transpose on a 3-D block with uint8 checked under racecheck?"."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.report.document import Inputs, Source, build
from harness.report.render import md_text, render_html, render_markdown
from harness.statuses import Status
from tests.report.dom import Elements
from tests.report.journals import CONTRACT, QUESTION, compile_id, measured

WHEN = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
def checked(paths: list[Path], contracts: tuple[Path, ...] = (CONTRACT,)) -> dict[str, Any]:
    return build(Inputs([Source.of(p) for p in paths], contracts=[Source.of(c) for c in contracts]), WHEN)


def entry(doc: dict[str, Any]) -> dict[str, Any]:
    [found] = [e for e in doc["checked"]["entries"] if (e["contract"], e["backend"]) == ("block.load", "numba")]
    return found


def test_each_rule_counts_the_passing_cases_its_when_speaks_of(checked_lanes: list[Path]) -> None:
    rules = {r["name"]: r for r in entry(checked(checked_lanes))["rules"]}
    assert rules["vectorize-fallback"]["when"] == "alg=vectorize; offset=misaligned"
    assert rules["vectorize-fallback"]["passed"] == {"gpu": 1}  # the aligned vectorize case failed
    assert rules["rank-order"]["passed"] == {"gpu": 1, "gpu-racecheck": 1}  # 8x4x2 only: a multi-D block
    assert rules["arrangement"]["when"] == "every case" and rules["arrangement"]["passed"] == {"gpu": 3,
                                                                                                "gpu-racecheck": 1}
    assert rules["static-parameters"]["passed"] == {"host": 1}  # the rejection


def test_axis_values_covered_and_not(checked_lanes: list[Path]) -> None:
    axes = {a["axis"]: a for a in entry(checked(checked_lanes))["axes"]}
    assert axes["alg"]["covered"] == ["direct", "vectorize", "warp_transpose"]
    assert axes["alg"]["not_covered"] == ["striped", "transpose"]
    assert axes["dtype"]["covered"] == ["uint8", "int32"]  # in the contract's order
    assert "reject" not in axes  # a rejection's parameters are no axis of the contract


def test_resource_figures_are_the_journals_per_algorithm(checked_lanes: list[Path]) -> None:
    figures = {r["alg"]: r for r in entry(checked(checked_lanes))["resources"]}
    assert figures["warp_transpose"]["kernels"] == 1
    assert (figures["warp_transpose"]["shared_bytes"], figures["direct"]["shared_bytes"]) == ("256", "0")
    assert figures["direct"]["forbidden"] == "none found (BAR, CALL, LDL, STL)"


def test_forbidden_sass_found_is_named(journal: Callable[..., Path]) -> None:
    host = journal("host", [measured("host", 0, {"CALL": 2, "LDL": 0})], backends=("numba",))
    [row] = entry(checked([host]))["resources"]
    assert row["forbidden"] == "found: CALL in 1 of 1 kernels"


def test_sanitizer_lanes_say_what_ran_and_whether_their_control_was_seen(checked_lanes: list[Path]) -> None:
    tools = {s["tool"]: s for s in entry(checked(checked_lanes))["sanitizers"]}
    assert (tools["racecheck"]["passed"], tools["racecheck"]["control"]) == (1, "seen")
    assert tools["memcheck"]["control"] == "did not run"


def test_without_contracts_rules_are_not_counted_and_the_report_says_so(checked_lanes: list[Path]) -> None:
    doc = checked(checked_lanes, contracts=())
    assert entry(doc)["rules"] == [] and doc["checked"]["contracts"] == "No contract files given"


def test_the_contracts_rules_are_counted_from_are_checked_against_the_runs(journal: Callable[..., Path],
                                                                           checked_lanes: list[Path]) -> None:
    assert "host, gpu, gpu-racecheck recorded no contracts digest" in checked(checked_lanes)["checked"]["contracts"]
    other = journal("host", [(compile_id(), Status.PASS)], name="other", contracts_sha256="0" * 64)
    assert "differ from the contracts lane host ran" in checked([other])["checked"]["contracts"]


def test_the_reviewer_question_is_answered_by_json_markdown_and_html(checked_lanes: list[Path]) -> None:
    doc = checked(checked_lanes)
    grid = doc["checked"]["grids"]
    [cell] = [c for c in entry(doc)["grid"]["cells"] if {k: c[k] for k in QUESTION} == QUESTION]
    assert cell["lanes"]["gpu-racecheck"] == {"passed": 1, "total": 1}
    assert grid["legend"]["gpu-racecheck"] == "R"
    rows = [line for line in render_markdown(doc).splitlines()
            if line.startswith(f"| {md_text('warp_transpose')} | 8x4x2 |")]
    assert len(rows) == 1 and "H G R" in rows[0]
    dom = Elements(render_html(doc))
    [square] = [a for tag, a in dom.tags if tag == "div" and a.get("data-alg") == "warp_transpose"
                and a.get("data-block") == "8x4x2" and a.get("data-dtype") == "uint8"]
    assert square["data-lanes"] == "host gpu gpu-racecheck" and square["data-verdict"] == "pass"
