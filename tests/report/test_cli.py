"""The report commands' exit statuses: 0 success, 1 the checked verdict is negative, 2 usage or input error."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.report.cli import journal_paths, main, register
from harness.statuses import Status
from tests.report.journals import case_id


@pytest.fixture(autouse=True)
def contracts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A contracts folder of the test's own, so defaults never read the project's files."""
    folder = tmp_path / "contracts"
    folder.mkdir()
    (folder / "expectations.toml").write_text("schema = 1\n")
    monkeypatch.setenv("COOP_CONTRACTS", str(folder))
    monkeypatch.delenv("COOP_WHEEL_MANIFEST", raising=False)
    return folder


@pytest.fixture
def passing(journal: Callable[..., Path]) -> Path:
    return journal("gpu", [(case_id("numba"), Status.PASS)], name="passing")


def test_report_exit_status_follows_qualification(qualification: list[Path], waivers: Path, passing: Path,
                                                  contracts: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (contracts / "coverage.toml").write_text(  # asks only what ``passing`` holds
        'schema = 1\n[[cell]]\ncontract = "block.load"\nbackends = ["numba"]\nevidence = ["runtime"]\n')
    assert main(["report", str(passing), "--out", str(tmp_path / "ok")]) == 0
    assert capsys.readouterr().out.startswith("Passed: 1 numba GPU check\nNot accepted: none\n")
    assert sorted(p.name for p in (tmp_path / "ok").iterdir()) == ["junit.xml", "report.html", "report.json",
                                                                   "report.md"]
    assert main(["report", *map(str, qualification), "--expectations", str(waivers),
                 "--out", str(tmp_path / "bad")]) == 1
    assert "not qualified: 1 verdict not accepted" in capsys.readouterr().err


def test_report_takes_the_expectations_in_force(passing: Path, contracts: Path, tmp_path: Path) -> None:
    main(["report", str(passing), "--out", str(tmp_path / "a")])
    doc = json.loads((tmp_path / "a" / "report.json").read_text())
    assert doc["expectations"]["name"] == str(contracts / "expectations.toml")
    main(["report", str(passing), "--no-expectations", "--out", str(tmp_path / "b")])
    assert json.loads((tmp_path / "b" / "report.json").read_text())["expectations"]["name"] is None


def test_a_folder_stands_for_its_journals_in_name_order(journal: Callable[..., Path], tmp_path: Path) -> None:
    later = journal("gpu", [], name="gpu-20260302")
    earlier = journal("gpu", [], name="gpu-20260301")
    assert journal_paths([later.parent]) == [earlier, later]


def test_input_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nope.jsonl")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope.jsonl'}: no such journal or folder\n"
    (tmp_path / "empty").mkdir()
    assert main(["baseline", str(tmp_path / "empty"), "--out", str(tmp_path / "b.json")]) == 2
    assert main(["verify", str(tmp_path / "empty")]) == 1  # an empty folder is a bundle missing everything
    assert main(["verify", str(tmp_path / "nothing")]) == 2


def test_usage_errors_exit_2() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["diff", "some.jsonl"])  # --baseline is required
    assert exc.value.code == 2


def test_bundle_then_verify(qualification: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = tmp_path / "q.tar.gz"
    assert main(["bundle", *map(str, qualification), "--out", str(bundle)]) == 0
    assert main(["verify", str(bundle)]) == 0
    assert "verifies" in capsys.readouterr().out
    folder = tmp_path / "q"
    main(["bundle", *map(str, qualification), "--out", str(folder)])
    (folder / "report.md").unlink()
    assert main(["verify", str(folder)]) == 1
    assert f"{folder}: report.md: listed in SHA256SUMS but missing from the bundle" in capsys.readouterr().err


def test_baseline_then_diff(journal: Callable[..., Path], passing: Path, contracts: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    baseline = tmp_path / "baselines" / "gpu.json"
    assert main(["baseline", str(passing), "--out", str(baseline)]) == 0
    assert main(["diff", "--baseline", str(baseline), str(passing)]) == 0
    failing = journal("gpu", [(case_id("numba"), Status.FAIL)], name="gpu-now", groups=[("k", [case_id("numba")])])
    report = tmp_path / "diff.json"
    assert main(["diff", "--baseline", str(baseline), str(failing), "--json", str(report)]) == 1
    assert json.loads(report.read_text())["new_failures"][0]["id"] == case_id("numba")
    rerun = (f"{sys.executable} -c \"import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])\" "
             f"{passing} {{journal}}")
    capsys.readouterr()
    assert main(["diff", "--baseline", str(baseline), str(failing), "--rerun", rerun, "--rerun-times", "2"]) == 1
    assert capsys.readouterr().out.startswith("REGRESSION: 0 new failures, 0 missing, 1 flakes")
    (contracts / "expectations.toml").write_text(  # the flake declared
        f'schema = 1\n[[expect]]\ncases = "{case_id("numba")}"\nstatus = "Flake"\nbug = "https://bugs.example/5"\n'
        'expires = 2099-01-01\nreason = "flaky"\n')
    assert main(["diff", "--baseline", str(baseline), str(failing), "--rerun", rerun]) == 0
    assert capsys.readouterr().out.startswith("No regression: 0 new failures, 0 missing, 0 flakes, 0 still failing, "
                                              "0 fixed, 0 new cases, 1 known flakes")
    (tmp_path / "bad.json").write_text("[]")
    assert main(["diff", "--baseline", str(tmp_path / "bad.json"), str(failing)]) == 2


def test_nightly_exit_status(passing: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = tmp_path / "nightly.toml"
    lane = "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2]); sys.exit(sys.argv[3] == 'bad')"
    matrix.write_text(f"""schema = 1
command = ["{sys.executable}", "-c", "{lane}", "{passing}", "{{out}}", "{{lane}}"]
timeout_s = 60
[axes]
lane = [{{ name = "good" }}, {{ name = "bad" }}]
""")
    out = tmp_path / "night"
    assert main(["nightly", "--matrix", str(matrix), "--out", str(out), "--dry-run"]) == 0
    assert main(["nightly", "--matrix", str(matrix), "--out", str(out), "--only", "lane=good"]) == 0
    assert main(["nightly", "--matrix", str(matrix), "--out", str(out)]) == 1
    assert "failed: lane=bad: exit status 1" in capsys.readouterr().err
    matrix.write_text("schema = 1\n")
    assert main(["nightly", "--matrix", str(matrix), "--out", str(out)]) == 2


def test_register_adds_the_commands_to_another_parser() -> None:
    parser = argparse.ArgumentParser(prog="python -m harness")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["verify", "bundle.tar.gz"])
    assert (args.command, args.bundle, args.func.__name__) == ("verify", Path("bundle.tar.gz"), "cmd_verify")


def test_a_host_only_report_does_not_qualify(journal: Callable[..., Path], contracts: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """One backend's host lane, all passing, is far from a qualification: the report says no and what is missing."""
    (contracts / "coverage.toml").write_text(
        'schema = 1\n[[cell]]\ncontract = "block.load"\nbackends = ["numba"]\n'
        'evidence = ["reject", "compile", "resources", "runtime", "racecheck"]\n')
    host = journal("host", [(case_id("numba", kind), Status.PASS) for kind in ("compile", "reject")],
                   backends=("numba",))
    assert main(["report", str(host), "--out", str(tmp_path / "r")]) == 1
    md = (tmp_path / "r" / "report.md").read_text().splitlines()
    assert "Qualified: **no**" in md[2]
    assert any("gpu" in line and "did not run" in line for line in md[3:8])


def test_report_counts_rules_from_the_contracts_folder(passing: Path, contracts: Path, tmp_path: Path) -> None:
    shipped = Path(__file__).resolve().parents[2] / "contracts" / "block_load.toml"
    (contracts / "block_load.toml").write_text(shipped.read_text())
    main(["report", str(passing), "--out", str(tmp_path / "a")])
    doc = json.loads((tmp_path / "a" / "report.json").read_text())
    assert [c["name"] for c in doc["inputs"]["contracts"]] == [str(contracts / "block_load.toml")]
    assert doc["checked"]["entries"][0]["rules"]
    assert main(["report", str(passing), "--contracts", str(tmp_path / "nowhere"), "--out", str(tmp_path / "b")]) == 2


def test_the_checkouts_own_contracts_folder_is_named_relative_to_the_working_directory(
        passing: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a folder of the checkout (reports/out, say), the report reads the checkout's contracts folder by
    default, which the harness finds by an absolute path: the report names those files relative to where it ran,
    never by this machine's paths."""
    root = Path(__file__).resolve().parents[2]
    monkeypatch.delenv("COOP_CONTRACTS")
    monkeypatch.chdir(root / "harness")
    main(["report", str(passing), "--out", str(tmp_path / "r")])
    inputs = json.loads((tmp_path / "r" / "report.json").read_text())["inputs"]
    assert inputs["coverage"]["name"] == str(Path("..", "contracts", "coverage.toml"))
    assert inputs["expectations"]["name"] == str(Path("..", "contracts", "expectations.toml"))
    assert inputs["contracts"] and all(c["name"].startswith(str(Path("..", "contracts"))) for c in inputs["contracts"])
    assert str(root) not in (tmp_path / "r" / "report.md").read_text()
