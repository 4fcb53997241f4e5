"""The report document: counts per category, the summary line, qualification, fingerprint, expectations."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.journal import CaseRecord
from harness.report.document import NOT_RECORDED, Inputs, Source, build
from harness.report.errors import ReportError
from harness.statuses import Status
from tests.report.journals import WAIVER, case_id

WHEN = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def report(journals: list[Path], **optional: Path) -> dict[str, Any]:
    sources = {key: Source.of(path) for key, path in optional.items()}
    return build(Inputs([Source.of(p) for p in journals], **sources), WHEN)


def test_counts_per_category(qualification: list[Path]) -> None:
    cats = report(qualification)["counts"]["categories"]
    assert {name: (c["total"], c["accepted"], c["statuses"]) for name, c in cats.items()} == {
        "shared-contract checks": (6, 6, {"Pass": 6}),
        "numba host checks": (2, 2, {"Pass": 2}),
        "numba GPU checks": (2, 2, {"Pass": 2}),
        "cutlass GPU checks": (2, 1, {"Pass": 1, "Fail": 1}),  # Fail in gpu wins over Pass in racecheck
        "rustfatbin GPU checks": (2, 2, {"Pass": 1, "NotSupported": 1}),
        "checks under racecheck": (4, 4, {"Pass": 4}),
        "fresh-wheel checks": (2, 2, {"Pass": 2}),
    }
    assert list(cats) == ["shared-contract checks", "numba host checks", "numba GPU checks", "cutlass GPU checks",
                          "rustfatbin GPU checks", "checks under racecheck", "fresh-wheel checks"]


def test_counts_per_lane_and_pass_rates(qualification: list[Path]) -> None:
    counts = report(qualification)["counts"]
    assert {lane: c["total"] for lane, c in counts["lanes"].items()} == {
        "host": 6, "simulator": 2, "gpu": 6, "gpu-racecheck": 4, "wheels": 2}
    rates = counts["pass_rates"]
    assert rates["contracts"] == ["block.load", "wheel.install"]
    assert rates["backends"] == ["numba", "cutlass", "rustfatbin"]
    assert rates["cells"]["block.load"]["cutlass"] == {"passed": 3, "total": 4, "rate": 0.75}
    assert rates["cells"]["block.load"]["numba"] == {"passed": 4, "total": 4, "rate": 1.0}
    assert "rustfatbin" not in rates["cells"]["wheel.install"]


def test_summary_line_says_how_much_of_it_ran_under_a_tool_that_ran_only_part(qualification: list[Path]) -> None:
    summary = report(qualification)["summary"]
    assert summary["passed"] == ("Passed: 6 shared-contract checks, 2 numba host checks, 2 fresh-wheel checks, "
                                 "2 numba GPU checks, 1 cutlass GPU check, 1 rustfatbin GPU check "
                                 "(racecheck: 3 of them)")
    assert summary["not_accepted"] == "Not accepted: 1 verdict (1 Fail)"


def test_summary_line_names_a_tool_whose_lane_ran_every_gpu_check(journal: Callable[..., Path]) -> None:
    ids = [case_id(b) for b in ("numba", "cutlass", "rustfatbin")]
    paths = [journal("host", [(case_id("numba", "reject"), Status.PASS)]),
             journal("gpu", [(i, Status.PASS) for i in ids]),
             journal("gpu-racecheck", [(i, Status.PASS) for i in ids]),
             journal("gpu-memcheck", [(i, Status.PASS) for i in ids])]
    assert report(paths)["summary"]["passed"] == (
        "Passed: 1 shared-contract check, 1 numba GPU check, 1 cutlass GPU check, 1 rustfatbin GPU check, "
        "under racecheck and memcheck")


def test_backend_names_come_from_the_data(journal: Callable[..., Path]) -> None:
    paths = [journal("gpu", [(case_id("triton"), Status.PASS)], backends=("triton",))]
    assert report(paths)["summary"]["passed"] == "Passed: 1 triton GPU check"


def test_a_run_that_fails_a_case_or_stops_early_does_not_qualify(qualification: list[Path],
                                                                 journal: Callable[..., Path]) -> None:
    cut = journal("gpu-memcheck", [], ended=False, groups=[("k", [case_id("numba")])])
    summary = report([*qualification, cut])["summary"]
    assert not summary["qualified"]
    assert summary["problems"] == ["2 verdicts not accepted (see the non-pass list)",
                                   "lane gpu-memcheck did not end: its journal has no end record"]


def test_a_clean_run_qualifies_and_an_empty_one_does_not(journal: Callable[..., Path]) -> None:
    assert report([journal("gpu", [(case_id("numba"), Status.PASS)])])["summary"]["qualified"]
    empty = report([journal("host", [], name="empty")])["summary"]
    assert empty["problems"] == ["no verdict recorded: a qualification that ran nothing fails"]
    assert empty["passed"] == "Passed: nothing (no verdict recorded)"


def test_non_pass_verdicts_keep_their_detail_and_waiver(qualification: list[Path]) -> None:
    rows = report(qualification)["non_pass"]
    assert [(r["lane"], r["status"], r["accepted"], r["waiver"]) for r in rows] == [
        ("gpu", "Fail", False, None), ("gpu", "NotSupported", True, WAIVER)]
    assert rows[0]["detail"].startswith("<script>")


def test_fingerprint_says_not_recorded_for_what_the_run_did_not_record(qualification: list[Path],
                                                                      journal: Callable[..., Path]) -> None:
    other = journal("gpu-memcheck", [], env={"python": "3.11.9", "commit": "abc123", "cuda_home": "/opt/cuda"})
    groups = report([*qualification, other])["environment"]
    assert [g["lanes"] for g in groups] == [["host", "simulator", "gpu", "gpu-racecheck", "wheels"],
                                            ["gpu-memcheck"]]
    first = {f["key"]: f["value"] for f in groups[0]["fields"]}
    assert first["packages"] == "numpy 2.4.1"
    assert first["compute_sanitizer"] == NOT_RECORDED
    second = {f["key"]: f["value"] for f in groups[1]["fields"]}
    assert (second["commit"], second["gpu"], second["cuda_home"]) == ("abc123", NOT_RECORDED, "/opt/cuda")


def test_expectations_in_force_with_expiry_and_the_verdicts_citing_them(qualification: list[Path],
                                                                       tmp_path: Path) -> None:
    path = tmp_path / "expectations.toml"
    path.write_text(f"""schema = 1
[[expect]]
cases = "block.load/rustfatbin/*alg=transpose*"
status = "NotSupported"
tags = {{ backend = "rustfatbin" }}
bug = "{WAIVER}"
expires = 2026-02-01
reason = "no shared-memory statics in plain rustc"
""")
    doc = report(qualification, expectations=path)
    [entry] = doc["expectations"]["entries"]
    assert entry["expired"] and entry["expires"] == "2026-02-01" and entry["verdicts_citing_bug"] == 1
    assert entry["where"] == f"{path}: expect[0]"
    assert f"expectation {path}: expect[0] expired on 2026-02-01 ({WAIVER})" in doc["summary"]["problems"]


def test_the_wheel_manifest_is_shown_flat(qualification: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"commit": "abc", "wheels": [{"file": "coop_numba-0.1.whl", "sha256": "00ff"}]}))
    doc = report(qualification, manifest=path)
    assert doc["manifest"]["entries"] == [["commit", "abc"], ["wheels[0].file", "coop_numba-0.1.whl"],
                                          ["wheels[0].sha256", "00ff"]]
    assert doc["inputs"]["manifest"]["name"] == str(path)


def test_a_manifest_that_is_not_json_is_named(qualification: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text("{nope")
    with pytest.raises(ReportError, match=r"manifest.json: the wheel manifest is not JSON"):
        report(qualification, manifest=path)


def test_the_document_is_json_and_a_pure_function_of_its_inputs(qualification: list[Path]) -> None:
    first = report(qualification)
    assert json.loads(json.dumps(first)) == first == report(qualification)


def test_an_unwaived_verdict_outranks_a_waived_one_of_the_same_status(journal: Callable[..., Path]) -> None:
    cid = case_id("rustfatbin")
    paths = [journal("gpu", [CaseRecord(cid, Status.NOT_SUPPORTED, "gpu", "declared", waiver=WAIVER)]),
             journal("gpu-memcheck", [CaseRecord(cid, Status.NOT_SUPPORTED, "gpu-memcheck", "declared")])]
    assert report(paths)["counts"]["categories"]["rustfatbin GPU checks"]["accepted"] == 0
