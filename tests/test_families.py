"""A family is a plug-in: a contract file naming its oracle module, and a backend's kernel builder. The
test-only Copy family (tests/support) runs end to end through the engine, journal, pytest plugin and
report with no line of theirs naming it, and a backend that does not declare it gets NotSupported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cases import expand
from harness.cli import main
from harness.contracts import load_contracts
from harness.errors import ContractError
from harness.journal import final_cases, read_journal
from harness.statuses import Status
from tests.support import block_copy
from tests.support.model_backend import FAULT_ENV, LEAVE_OUT_ENV

pytest_plugins = ["pytester"]
COPY = Path(block_copy.__file__).with_name("families") / "block_copy.toml"
A_CASE = "block.copy/model/dtype=float64,block=5x3x2,ipt=3,alg=direct,offset=misaligned"


@pytest.fixture
def copy_contracts(tmp_path: Path) -> Path:
    """A contracts folder holding only the Copy family's contract file."""
    folder = tmp_path / "contracts"
    folder.mkdir()
    shutil.copy(COPY, folder)
    (folder / "expectations.toml").write_text("schema = 1\n")
    return folder


def _run(contracts: Path, journal: Path) -> dict[str, Status]:
    code = main(["run", "--lane", "simulator", "--backend", "model", "--profile", "full", "--contracts",
                 str(contracts), "--journal", str(journal), "--no-isolate"])
    assert code in (0, 1)
    return {cid: r.status for cid, r in final_cases(read_journal(journal)).items()}


def test_the_contract_file_names_the_family_oracle(copy_contracts: Path) -> None:
    (contract,) = load_contracts(copy_contracts)
    assert contract.oracle is block_copy
    ids = [c.id for c in expand(contract, "model", "full")]
    assert A_CASE in ids and "block.copy/model/dtype=int16,block=32,ipt=0,alg=direct,reject=ipt-zero" in ids


@pytest.mark.usefixtures("model_backend")
def test_a_family_runs_through_engine_journal_and_report(copy_contracts: Path, tmp_path: Path) -> None:
    statuses = _run(copy_contracts, tmp_path / "j.jsonl")
    assert len(statuses) == 17 and set(statuses.values()) == {Status.PASS}  # 16 run cases and the reject
    assert main(["report", str(tmp_path / "j.jsonl"), "--contracts", str(copy_contracts), "--no-expectations",
                 "--out", str(tmp_path / "report")]) in (0, 1)
    rates = json.loads((tmp_path / "report" / "report.json").read_text())["counts"]["pass_rates"]["cells"]
    assert rates == {"block.copy": {"model": {"passed": 17, "total": 17, "rate": 1.0}}}
    assert "| block.copy | 100.0% (17/17) |" in (tmp_path / "report" / "report.md").read_text()
    assert (tmp_path / "report" / "junit.xml").read_text().count('classname="block.copy/model"') == 17


@pytest.mark.usefixtures("model_backend")
def test_a_family_fault_is_judged_by_its_oracle_and_its_rule(copy_contracts: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, "corrupt:coop_block_copy__float64__ipt3")
    journal = tmp_path / "j.jsonl"
    _run(copy_contracts, journal)
    failed = [r for r in final_cases(read_journal(journal)).values() if r.status is Status.FAIL]
    assert len(failed) == 2 and {r.rules for r in failed} == {("copied",)}  # block 0 of each block shape


@pytest.mark.usefixtures("model_backend")
def test_a_backend_that_does_not_declare_the_family_is_not_supported(copy_contracts: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEAVE_OUT_ENV, "block.copy")
    _run(copy_contracts, tmp_path / "j.jsonl")
    runs = {cid: r for cid, r in final_cases(read_journal(tmp_path / "j.jsonl")).items() if "reject=" not in cid}
    assert runs and {r.status for r in runs.values()} == {Status.NOT_SUPPORTED}
    assert runs[A_CASE].detail == ("backend model declares no kernel builder for block.copy "
                                   "(it declares: block.load, block.store)")


@pytest.mark.usefixtures("model_backend")
def test_the_reject_cases_of_an_undeclared_family_are_not_supported_too(copy_contracts: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a kernel builder there is no entry point to refuse the statics: the backend is not asked."""
    monkeypatch.setenv(LEAVE_OUT_ENV, "block.copy")
    _run(copy_contracts, tmp_path / "j.jsonl")
    reject = final_cases(read_journal(tmp_path / "j.jsonl"))[
        "block.copy/model/dtype=int16,block=32,ipt=0,alg=direct,reject=ipt-zero"]
    assert (reject.status, reject.rules) == (Status.NOT_SUPPORTED, ())
    assert reject.detail.startswith("backend model declares no kernel builder for block.copy")


@pytest.mark.usefixtures("model_backend")
def test_the_pytest_plugin_runs_a_family_it_does_not_know(pytester: pytest.Pytester, copy_contracts: Path) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "harness.plugin", "-p", "no:cacheprovider", "--coop-lane", "simulator", "--coop-backend", "model",
        "--coop-contracts", str(copy_contracts), "--coop-profile", "full", "-v")
    assert result.ret == 0 and result.parseoutcomes()["passed"] == 17
    result.stdout.fnmatch_lines([f"*{A_CASE} PASSED*"])


def test_a_contract_naming_no_oracle_module_is_refused(copy_contracts: Path) -> None:
    path = copy_contracts / COPY.name
    path.write_text(path.read_text().replace('oracle = "tests.support.block_copy"', 'oracle = "tests.support.nope"'))
    with pytest.raises(ContractError, match=r"block_copy.toml: oracle: cannot import 'tests.support.nope'"):
        load_contracts(copy_contracts)
