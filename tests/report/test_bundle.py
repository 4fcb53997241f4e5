"""The bundle: a good one verifies (folder and .tar.gz); a tampered, incomplete or padded one fails, naming why."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.report.bundle import SUMS, verify_bundle, write_bundle
from harness.report.errors import ReportError


@pytest.fixture
def bundle(qualification: list[Path], tmp_path: Path) -> Path:
    path = tmp_path / "bundle"
    write_bundle(path, qualification)
    return path


def rehash(root: Path) -> None:
    """Re-index after tampering, as a careful forger would."""
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != SUMS)
    (root / SUMS).write_text("".join(f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}\n" for f in files))


def test_a_good_bundle_verifies_and_holds_everything(bundle: Path) -> None:
    assert verify_bundle(bundle) == []
    assert sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()) == [
        SUMS, "journals/1-host.jsonl", "journals/2-simulator.jsonl", "journals/3-gpu.jsonl",
        "journals/4-gpu-racecheck.jsonl", "journals/5-wheels.jsonl", "junit.xml", "report.html", "report.json",
        "report.md"]
    doc = json.loads((bundle / "report.json").read_text())
    assert doc["inputs"]["journals"][0]["name"] == "journals/1-host.jsonl"  # paths inside the bundle


def test_the_index_is_coreutils_sha256sum_format(bundle: Path) -> None:
    subprocess.run(["sha256sum", "--check", "--quiet", SUMS], cwd=bundle, check=True)


def test_expectations_and_manifest_travel_with_it(qualification: list[Path], tmp_path: Path) -> None:
    expectations, manifest = tmp_path / "exp.toml", tmp_path / "m.json"
    expectations.write_text("schema = 1\n")
    manifest.write_text('{"commit": "abc"}')
    path = tmp_path / "b"
    doc = write_bundle(path, qualification, expectations, manifest)
    assert (doc["expectations"]["name"], doc["manifest"]["name"]) == ("expectations.toml", "wheel-manifest.json")
    assert verify_bundle(path) == []


def test_a_tar_gz_bundle_verifies_and_is_replaced_whole(qualification: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "qualification.tar.gz"
    write_bundle(path, qualification)
    with tarfile.open(path) as tar:
        assert "qualification/report.json" in tar.getnames()
    assert verify_bundle(path) == []
    write_bundle(path, qualification[:1])
    with tarfile.open(path) as tar:
        assert "qualification/journals/2-simulator.jsonl" not in tar.getnames()
    assert verify_bundle(path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journals", "qualification.tar.gz"]  # no leftovers


def test_a_tampered_journal_line_fails_on_its_hash_and_its_counts(bundle: Path) -> None:
    journal = bundle / "journals/3-gpu.jsonl"
    journal.write_text(journal.read_text().replace('"status":"Fail"', '"status":"Pass"'))
    problems = verify_bundle(bundle)
    assert problems[0] == f"journals/3-gpu.jsonl: sha256 differs from {SUMS}: the file was changed after bundling"
    assert ("report.json: counts.categories['cutlass GPU checks'].accepted is 1, but the journals give 2"
            in problems)


def test_a_tampered_journal_fails_on_its_counts_even_when_rehashed(bundle: Path) -> None:
    journal = bundle / "journals/3-gpu.jsonl"
    journal.write_text(journal.read_text().replace('"status":"Fail"', '"status":"Pass"'))
    rehash(bundle)
    problems = verify_bundle(bundle)
    assert "report.json: counts.lanes.gpu.statuses.Fail is 1, but the journals give absent" in problems
    assert not any(SUMS in p for p in problems)


def test_a_tampered_report_json_fails_naming_the_count(bundle: Path) -> None:
    doc = json.loads((bundle / "report.json").read_text())
    doc["counts"]["categories"]["numba GPU checks"]["statuses"]["Pass"] = 3
    (bundle / "report.json").write_text(json.dumps(doc, indent=1) + "\n")
    rehash(bundle)
    assert verify_bundle(bundle) == [
        "report.json: counts.categories['numba GPU checks'].statuses.Pass is 3, but the journals give 2"]


def test_a_tampered_report_json_fails_its_hash(bundle: Path) -> None:
    report = bundle / "report.json"
    report.write_text(report.read_text().replace('"qualified": false', '"qualified": true'))
    assert verify_bundle(bundle) == [
        f"report.json: sha256 differs from {SUMS}: the file was changed after bundling",
        "report.json: summary.qualified is True, but the journals give False"]


def test_an_html_that_is_not_the_rendering_of_the_report_fails(bundle: Path) -> None:
    html = bundle / "report.html"
    html.write_text(html.read_text().replace("Qualified: no", "Qualified: yes"))
    rehash(bundle)
    assert verify_bundle(bundle) == ["report.html: missing or not the rendering of report.json"]


def test_a_junit_file_that_hides_a_failure_fails(bundle: Path) -> None:
    junit = bundle / "junit.xml"
    junit.write_text(re.sub(r"<failure .*?</failure>", "", junit.read_text(), flags=re.S))
    rehash(bundle)
    assert verify_bundle(bundle) == [
        "junit.xml: not the JUnit rendering of the journals: testsuites/testsuite[gpu]/testcase[dtype=int32,block=32,"
        "ipt=4,alg=striped,valid=partial,oob=none,offset=zero]: 0 elements inside, but the journals give 1"]


def test_junit_layout_does_not_matter(bundle: Path) -> None:
    junit = bundle / "junit.xml"
    junit.write_text(re.sub(r">\s+<", "><", junit.read_text()))  # as another XML library would lay it out
    rehash(bundle)
    assert verify_bundle(bundle) == []


@pytest.mark.parametrize("name", ["journals/5-wheels.jsonl", "report.md", "junit.xml"])
def test_a_deleted_file_fails(bundle: Path, name: str) -> None:
    (bundle / name).unlink()
    problems = verify_bundle(bundle)
    assert problems[0] == f"{name}: listed in {SUMS} but missing from the bundle"


def test_a_deleted_index_or_report_fails(bundle: Path) -> None:
    (bundle / SUMS).unlink()
    assert verify_bundle(bundle) == [f"{SUMS}: missing: the bundle's files cannot be checked"]
    (bundle / "report.json").unlink()
    assert verify_bundle(bundle)[-1] == "report.json: missing, so no count can be checked"


def test_an_added_file_fails(bundle: Path) -> None:
    (bundle / "journals/6-extra.jsonl").write_text("")
    assert verify_bundle(bundle) == [f"journals/6-extra.jsonl: in the bundle but not listed in {SUMS}"]


def test_an_index_line_leaving_the_bundle_fails(bundle: Path) -> None:
    with (bundle / SUMS).open("a") as fh:
        fh.write(f"{'0' * 64}  ../outside\n")
    assert verify_bundle(bundle)[0].startswith(f"{SUMS}:10: not a '<sha256>  <relative path>' line")


def test_a_tar_with_a_link_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        link = tarfile.TarInfo("b/escape")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    assert verify_bundle(path) == [f"{path}: b/escape: a symbolic link: a bundle holds plain files only"]


def test_not_a_bundle_and_an_occupied_destination_are_input_errors(bundle: Path, qualification: list[Path],
                                                                   tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="not a bundle"):
        verify_bundle(tmp_path / "nothing-here")
    with pytest.raises(ReportError, match="already exists"):
        write_bundle(bundle, qualification)


def test_an_empty_folder_takes_a_bundle(qualification: list[Path], tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write_bundle(tmp_path / "empty", qualification)
    assert verify_bundle(tmp_path / "empty") == []


def test_a_bundle_applies_the_expectations_it_carries(qualification: list[Path], tmp_path: Path) -> None:
    cid = "block.load/cutlass/dtype=int32,block=32,ipt=4,alg=striped,valid=partial,oob=none,offset=zero"
    expectations = tmp_path / "exp.toml"
    expectations.write_text(f'schema = 1\n[[expect]]\ncases = "{cid}"\nstatus = "Fail"\ntags = {{ lane = "gpu" }}\n'
                            'bug = "https://bugs.example/3"\nexpires = 2099-01-01\nreason = "known"\n')
    path = tmp_path / "b"
    doc = write_bundle(path, qualification, expectations)
    assert doc["counts"]["categories"]["cutlass GPU checks"]["accepted"] == 2
    assert verify_bundle(path) == []
    (path / "expectations.toml").write_text("schema = 1\n")  # the waiver taken out, the index redone
    rehash(path)
    assert ("report.json: counts.categories['cutlass GPU checks'].accepted is 2, but the journals give 1"
            in verify_bundle(path))


def test_a_report_dated_before_its_runs_fails(qualification: list[Path], journal: Callable[..., Path],
                                              tmp_path: Path) -> None:
    """The report's date decides which expectations expired: a backdated one would revive them."""
    late = journal("gpu-memcheck", [], name="late")
    late.write_text(late.read_text().replace('"time":1.0', '"time":1900000000.0', 1))  # a run in 2030
    path = tmp_path / "b"
    write_bundle(path, [*qualification, late], generated=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    assert verify_bundle(path) == ["report.json: generated 2026-03-01T00:00:00+00:00, before lane gpu-memcheck "
                                   "started (2030-03-17T17:46:40+00:00): a backdated report would revive expired "
                                   "expectations"]


def test_contract_files_travel_with_it_and_verify(qualification: list[Path], tmp_path: Path) -> None:
    """The rules a report counts come from contract files: verify rebuilds them from the bundle's own copies."""
    contract = Path(__file__).resolve().parents[2] / "contracts" / "block_load.toml"
    path = tmp_path / "b"
    doc = write_bundle(path, qualification, contracts=[contract])
    assert doc["inputs"]["contracts"] == [{"name": "contracts/block_load.toml",
                                           "sha256": hashlib.sha256(contract.read_bytes()).hexdigest()}]
    assert any(e["rules"] for e in doc["checked"]["entries"])
    assert verify_bundle(path) == []
