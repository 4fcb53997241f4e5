"""The backends side by side per contract: each backend's final verdicts by status, and the lanes it ran in."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.report.document import Inputs, Source, build
from harness.report.render import render_html, render_markdown
from harness.statuses import Status
from tests.report.dom import Elements
from tests.report.journals import WAIVER, case_id

WHEN = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
BACKENDS = ("numba", "cutlass", "rustfatbin", "cccl")
PLANTED = case_id("cccl", valid="partial")


@pytest.fixture
def four(journal: Callable[..., Path]) -> list[Path]:
    """Host: a compile check of each backend; gpu: two run checks each, cccl's partial one a planted Fail;
    racecheck: numba's and cutlass's full one."""
    gpu: list[Any] = [(case_id(b, valid=v), Status.PASS) for b in BACKENDS for v in ("full", "partial")]
    gpu[-1] = (PLANTED, Status.FAIL, "out[3]=5")
    return [journal("host", [(case_id(b, "compile"), Status.PASS) for b in BACKENDS], backends=BACKENDS),
            journal("gpu", gpu, backends=BACKENDS),
            journal("gpu-racecheck", [(case_id(b), Status.PASS) for b in ("numba", "cutlass")], backends=BACKENDS)]


def report(paths: list[Path], expectations: Path | None = None) -> dict[str, Any]:
    return build(Inputs([Source.of(p) for p in paths], expectations=Source.of(expectations) if expectations
                        else None), WHEN)


def columns(doc: dict[str, Any], contract: str = "block.load") -> dict[str, dict[str, Any]]:
    [found] = [c["columns"] for c in doc["counts"]["side_by_side"]["contracts"] if c["contract"] == contract]
    return found


def test_a_column_per_backend_and_a_row_per_status_the_project_defines(four: list[Path]) -> None:
    table = report(four)["counts"]["side_by_side"]
    assert table["backends"] == list(BACKENDS)
    assert table["statuses"][:2] == ["Pass", "Fail"] and sorted(table["statuses"]) == sorted(map(str, Status))
    assert [c["contract"] for c in table["contracts"]] == ["block.load"]
    assert all(list(col["statuses"]) == table["statuses"] for col in columns(report(four)).values())


def test_a_planted_fail_shows_in_its_backends_column_only(four: list[Path]) -> None:
    found = columns(report(four))
    assert {b: col["statuses"]["Fail"] for b, col in found.items()} == {"numba": 0, "cutlass": 0, "rustfatbin": 0,
                                                                       "cccl": 1}
    assert {b: col["statuses"]["Pass"] for b, col in found.items()} == {"numba": 3, "cutlass": 3, "rustfatbin": 3,
                                                                       "cccl": 2}
    assert {b: (col["total"], col["accepted"]) for b, col in found.items()} == {
        "numba": (3, 3), "cutlass": (3, 3), "rustfatbin": (3, 3), "cccl": (3, 2)}
    assert not any(n for col in found.values() for s, n in col["statuses"].items() if s not in ("Pass", "Fail"))


def test_each_column_names_the_lanes_its_backend_ran_in(four: list[Path]) -> None:
    assert {b: col["lanes"] for b, col in columns(report(four)).items()} == {
        "numba": ["host", "gpu", "gpu-racecheck"], "cutlass": ["host", "gpu", "gpu-racecheck"],
        "rustfatbin": ["host", "gpu"], "cccl": ["host", "gpu"]}


def test_a_case_counts_once_with_its_worst_verdict_over_the_lanes(journal: Callable[..., Path]) -> None:
    """As the pass rates count: a check passes only where it passed in every lane that ran it."""
    cid = case_id("numba")
    doc = report([journal("gpu", [(cid, Status.PASS)]), journal("gpu-memcheck", [(cid, Status.SANITIZER_ERROR)])])
    numba = columns(doc)["numba"]
    assert (numba["total"], numba["statuses"]["Pass"], numba["statuses"]["SanitizerError"]) == (1, 0, 1)
    assert numba["lanes"] == ["gpu", "gpu-memcheck"]
    assert doc["counts"]["pass_rates"]["cells"]["block.load"]["numba"]["passed"] == numba["statuses"]["Pass"]


def test_the_expectations_are_applied_as_in_the_rest_of_the_report(four: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "waivers.toml"
    path.write_text(f'schema = 1\n[[expect]]\ncases = "{PLANTED}"\nstatus = "Fail"\nbug = "{WAIVER}"\n'
                    'expires = 2099-01-01\nreason = "known"\n')
    cccl = columns(report(four, path))["cccl"]
    assert (cccl["statuses"]["Fail"], cccl["statuses"]["ExpectedFail"], cccl["accepted"]) == (0, 1, 3)


def test_a_backend_without_checks_of_a_contract_has_an_empty_column(journal: Callable[..., Path]) -> None:
    doc = report([journal("gpu", [(case_id("numba"), Status.PASS), (case_id("cccl", contract="block.store"),
                                                                     Status.PASS)], backends=("numba", "cccl"))])
    assert columns(doc, "block.load")["cccl"] == {"total": 0, "accepted": 0, "lanes": [],
                                                  "statuses": dict.fromkeys(map(str, Status), 0)}
    assert columns(doc, "block.store")["cccl"]["statuses"]["Pass"] == 1
    assert "| lanes | gpu | none |" in render_markdown(doc)


def test_markdown_shows_the_planted_fail_in_its_column_only(four: list[Path]) -> None:
    section = render_markdown(report(four)).split("## Backends side by side")[1].split("\n## ")[0]
    assert "|  | numba | cutlass | rustfatbin | cccl |" in section
    assert "| Fail | 0 | 0 | 0 | 1 |" in section and "| Pass | 3 | 3 | 3 | 2 |" in section
    assert "| lanes | host, gpu, gpu-racecheck | host, gpu, gpu-racecheck | host, gpu | host, gpu |" in section


def test_html_shows_the_planted_fail_in_its_column_only(four: list[Path]) -> None:
    dom = Elements(render_html(report(four)))
    assert {b: dom.cells["block.load", "Fail", b] for b in BACKENDS} == {"numba": "0", "cutlass": "0",
                                                                         "rustfatbin": "0", "cccl": "1"}
    assert dom.cells["block.load", "lanes", "rustfatbin"] == "host, gpu"
    flagged = [a["data-backend"] for tag, a in dom.tags if tag == "td" and a.get("data-row") == "Fail"
               and "no" in (a.get("class") or "").split()]
    assert flagged == ["cccl"]
