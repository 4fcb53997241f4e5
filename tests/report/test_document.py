"""The report document: counts per category, the summary line, qualification, fingerprint, expectations."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.report.document import NOT_RECORDED, Inputs, Source, build, sha256_file
from harness.report.errors import ReportError
from harness.statuses import Status
from tests.report.journals import MANIFEST, WAIVER, case_id

WHEN = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def report(journals: list[Path], **optional: Path) -> dict[str, Any]:
    sources = {key: Source.of(path) for key, path in optional.items()}
    return build(Inputs([Source.of(p) for p in journals], **sources), WHEN)


def test_counts_per_category(qualification: list[Path], waivers: Path) -> None:
    cats = report(qualification, expectations=waivers)["counts"]["categories"]
    assert {name: (c["total"], c["accepted"], c["statuses"]) for name, c in cats.items()} == {
        "shared-contract checks": (6, 6, {"Pass": 6}),
        "numba simulator checks": (2, 2, {"Pass": 2}),  # never "host": no host lane ran them
        "numba GPU checks": (2, 2, {"Pass": 2}),
        "cutlass GPU checks": (2, 1, {"Pass": 1, "Fail": 1}),  # Fail in gpu wins over Pass in racecheck
        "rustfatbin GPU checks": (2, 2, {"Pass": 1, "NotSupported": 1}),
        "checks under racecheck": (4, 4, {"Pass": 4}),
        "fresh-wheel checks": (2, 2, {"Pass": 2}),
    }
    assert list(cats) == ["shared-contract checks", "numba simulator checks", "numba GPU checks", "cutlass GPU checks",
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


def test_summary_line_says_how_much_of_it_ran_under_a_tool_that_ran_only_part(qualification: list[Path],
                                                                             waivers: Path) -> None:
    summary = report(qualification, expectations=waivers)["summary"]
    assert summary["passed"] == ("Passed: 6 shared-contract checks, 2 numba simulator checks, 2 fresh-wheel checks, "
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


def test_merged_journals_of_a_lane_keep_every_sessions_backends(journal: Callable[..., Path]) -> None:
    """One gpu lane run as one journal per backend: the Lanes table names all three, not the last one."""
    paths = [journal("gpu", [(case_id(b), Status.PASS)], name=f"gpu-{b}", backends=(b,))
             for b in ("numba", "cutlass", "rustfatbin")]
    [lane] = report(paths)["lanes"]
    assert lane["backends"] == ["numba", "cutlass", "rustfatbin"]
    assert lane["journals"] == [Source.of(p).name for p in paths]


def test_a_lane_merged_from_journals_of_several_profiles_names_them_all(journal: Callable[..., Path]) -> None:
    """A gpu lane over pr for every backend and over full for one: the Lanes table says both, not the last one."""
    paths = [journal("gpu", [(case_id("numba"), Status.PASS)], name="gpu-pr"),
             journal("gpu", [(case_id("rustfatbin", dtype="int8"), Status.PASS)], name="gpu-full", profile="full",
                     backends=("rustfatbin",))]
    [lane] = report(paths)["lanes"]
    assert lane["profile"] == "pr, full"


def test_backend_names_come_from_the_data(journal: Callable[..., Path]) -> None:
    paths = [journal("gpu", [(case_id("triton"), Status.PASS)], backends=("triton",))]
    assert report(paths)["summary"]["passed"] == "Passed: 1 triton GPU check"


def test_a_run_that_fails_a_case_or_stops_early_does_not_qualify(qualification: list[Path], waivers: Path,
                                                                 journal: Callable[..., Path]) -> None:
    cut = journal("gpu-memcheck", [], ended=False, groups=[("k", [case_id("numba")])])
    summary = report([*qualification, cut], expectations=waivers)["summary"]
    assert not summary["qualified"]
    assert summary["problems"] == ["2 verdicts not accepted (see the non-pass list)",
                                   "lane gpu-memcheck did not end: its journal has no end record",
                                   "no coverage manifest given: nothing says what a qualification must cover"]


def test_an_empty_run_does_not_qualify(journal: Callable[..., Path]) -> None:
    empty = report([journal("host", [], name="empty")])["summary"]
    assert empty["problems"] == ["no verdict recorded: a qualification that ran nothing fails",
                                 "no coverage manifest given: nothing says what a qualification must cover"]
    assert empty["passed"] == "Passed: nothing (no verdict recorded)"


def test_non_pass_verdicts_keep_their_detail_and_waiver(qualification: list[Path], waivers: Path) -> None:
    rows = report(qualification, expectations=waivers)["non_pass"]
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
    assert (second["commit"], second["gpu"], second["cuda_home"]) == ("source tree abc123", NOT_RECORDED,
                                                                       "/opt/cuda")



def test_the_source_commit_of_a_wheel_run_is_the_wheel_manifests(journal: Callable[..., Path]) -> None:
    """``git`` in the run's directory may be another repository's: what ran was built from the manifest's commit."""
    env = {"python": "3.12.3", "commit": "ffff0000other", "dirty": True, "wheel_manifest": MANIFEST}
    [group] = report([journal("gpu", [(case_id("numba"), Status.PASS)], env=env)])["environment"]
    fields = {f["key"]: f["value"] for f in group["fields"]}
    assert fields["commit"] == "d0e1f2a3b4c5d6e7 (from the wheel manifest)"
    assert fields["dirty"] == "no"
    assert "ffff0000other" not in json.dumps(group)
    assert [w["name"] for w in group["wheels"]] == ["coopcheck-numba", "coopcheck-rustfatbin"]


def test_a_source_run_says_source_tree(journal: Callable[..., Path]) -> None:
    env = {"python": "3.12.3", "commit": "abc123", "dirty": True}
    [group] = report([journal("host", [(case_id("numba", "compile"), Status.PASS)], env=env)])["environment"]
    fields = {f["key"]: f["value"] for f in group["fields"]}
    assert (fields["commit"], fields["dirty"], fields["wheel_manifest"]) == ("source tree abc123", "yes",
                                                                             NOT_RECORDED)
    assert group["wheels"] == []


def test_expectations_in_force_with_expiry_and_the_verdicts_they_match(qualification: list[Path],
                                                                       tmp_path: Path) -> None:
    path = tmp_path / "expectations.toml"
    path.write_text(f"""schema = 1
[[expect]]
cases = "block.load/rustfatbin/*valid=partial*"
status = "NotSupported"
tags = {{ backend = "rustfatbin" }}
bug = "{WAIVER}"
expires = 2026-02-01
reason = "no shared-memory statics in plain rustc"
""")
    doc = report(qualification, expectations=path)
    [entry] = doc["expectations"]["entries"]
    assert entry["expired"] and entry["expires"] == "2026-02-01" and entry["verdicts_matched"] == 1
    assert entry["where"] == f"{path}: expect[0]" and not entry["unmatched"]
    assert (doc["expectations"]["name"], doc["expectations"]["sha256"]) == (str(path), sha256_file(path))
    assert (f"expectation {path}: expect[0]: expired on 2026-02-01 ({WAIVER}): block.load/rustfatbin/*valid=partial*"
            in doc["summary"]["problems"])
    assert doc["counts"]["categories"]["rustfatbin GPU checks"]["accepted"] == 1  # it waived nothing


def test_a_live_entry_that_matches_nothing_is_listed(qualification: list[Path], tmp_path: Path) -> None:
    path = expect(tmp_path, "block.load/*,alg=nowhere", "Fail", "2099-01-01")
    doc = report(qualification, expectations=path)
    assert doc["expectations"]["entries"][0]["unmatched"]
    assert (f"expectation {path}: expect[0]: matched no case of this run: block.load/*,alg=nowhere"
            in doc["summary"]["problems"])


def test_an_entry_naming_only_a_contract_the_lanes_do_not_hold_is_not_listed(qualification: list[Path],
                                                                             tmp_path: Path) -> None:
    path = expect(tmp_path, "block.store/*", "Fail", "2099-01-01")
    doc = report(qualification, expectations=path)
    assert not doc["expectations"]["entries"][0]["unmatched"]
    assert not [p for p in doc["summary"]["problems"] if "matched no case" in p]


def test_the_wheel_manifest_is_one_row_per_wheel(qualification: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(MANIFEST))
    manifest = report(qualification, manifest=path)["manifest"]
    assert (manifest["source_commit"], manifest["dirty"], manifest["toolchain"]) == (
        "d0e1f2a3b4c5d6e7", "no", "python 3.12.3; build 1.2.2")
    assert manifest["wheels"] == [
        {"name": "coopcheck-numba", "version": "0.1.0", "sha256": "b8b8b92cdc34", "native": "none",
         "capabilities": "", "toolchain": "setuptools (80.9.0)"},
        {"name": "coopcheck-rustfatbin", "version": "0.1.0", "sha256": "b0658c68345e",
         "native": "coopcheck_rustfatbin/data/coop_kernels.fatbin", "capabilities": "sm_80, sm_90",
         "toolchain": "setuptools (80.9.0); rustc: rustc 1.96.0; ptxas: V13.0.88"}]
    assert manifest["name"] == str(path)


def test_a_manifest_that_is_not_json_is_named(qualification: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text("{nope")
    with pytest.raises(ReportError, match=r"manifest.json: the wheel manifest is not JSON"):
        report(qualification, manifest=path)


def test_the_document_is_json_and_a_pure_function_of_its_inputs(qualification: list[Path]) -> None:
    first = report(qualification)
    assert json.loads(json.dumps(first)) == first == report(qualification)


def test_an_unwaived_verdict_outranks_a_waived_one_of_the_same_status(journal: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    cid = case_id("rustfatbin")
    path = tmp_path / "gpu-only.toml"
    path.write_text(f'schema = 1\n[[expect]]\ncases = "{cid}"\nstatus = "NotSupported"\ntags = {{ lane = "gpu" }}\n'
                    f'bug = "{WAIVER}"\nexpires = 2099-01-01\nreason = "declared for the gpu lane only"\n')
    paths = [journal("gpu", [(cid, Status.NOT_SUPPORTED, "declared")]),
             journal("gpu-memcheck", [(cid, Status.NOT_SUPPORTED, "declared")])]
    doc = report(paths, expectations=path)
    assert doc["counts"]["lanes"]["gpu"]["accepted"] == 1
    assert doc["counts"]["categories"]["rustfatbin GPU checks"]["accepted"] == 0


def expect(tmp_path: Path, case: str, status: str, expires: str, name: str = "expectations.toml") -> Path:
    path = tmp_path / name
    path.write_text(f'schema = 1\n[[expect]]\ncases = "{case}"\nstatus = "{status}"\nbug = "{WAIVER}"\n'
                    f'expires = {expires}\nreason = "known"\n')
    return path


def test_waivers_come_from_the_expectations_file_and_an_expired_one_waives_nothing(
        journal: Callable[..., Path], tmp_path: Path) -> None:
    cid = case_id("cutlass", valid="partial")
    path = journal("gpu", [(cid, Status.FAIL, "out[3]=5")])
    live = report([path], expectations=expect(tmp_path, cid, "Fail", "2099-01-01", "live.toml"))
    assert live["counts"]["lanes"]["gpu"]["statuses"] == {"ExpectedFail": 1}
    assert [(r["status"], r["accepted"], r["waiver"]) for r in live["non_pass"]] == [("ExpectedFail", True, WAIVER)]
    expired = report([path], expectations=expect(tmp_path, cid, "Fail", "2026-02-01", "expired.toml"))
    assert expired["counts"]["lanes"]["gpu"]["statuses"] == {"Fail": 1}
    assert not expired["summary"]["qualified"]
    assert any("expired on 2026-02-01" in p for p in expired["summary"]["problems"])


def test_a_waiver_written_in_a_journal_is_not_trusted(journal: Callable[..., Path]) -> None:
    """A journal line of an older harness that claims ExpectedFail with a waiver is read as the failure it was."""
    path = journal("gpu", [])
    with path.open("a") as fh:
        fh.write(json.dumps({"v": 1, "type": "case", "id": case_id("numba"), "status": "ExpectedFail", "lane": "gpu",
                             "detail": "out[0]=1", "waiver": WAIVER}) + "\n")
    doc = report([path])
    assert doc["counts"]["lanes"]["gpu"]["accepted"] == 0
    assert not doc["summary"]["qualified"]
