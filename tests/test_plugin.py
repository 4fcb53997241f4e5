"""The pytest plugin end to end (in a subprocess pytest) on the model backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.contracts import load_contracts
from harness.journal import CaseRecord, GroupRecord, LaunchRecord, SessionRecord, final_cases, read_journal
from harness.lanes import lane_cases
from harness.plugin import MAX_LISTED, CaseRunner, case_scope, kernel_scope
from harness.statuses import Status
from tests.support.model_backend import FAULT_ENV, UNSUPPORTED_ENV

pytest_plugins = ["pytester"]
BROKEN = "coop_block_store__int16__ipt1__direct"
#: Both item kinds: one item per case (the default) and one per kernel group.
ITEMS = pytest.mark.parametrize("items", ["case", "group"])


def _ids(result: pytest.RunResult) -> list[str]:
    """The node ids ``--collect-only -q`` printed."""
    return [line for line in result.outlines if line.startswith("block.")]


def _run(pytester: pytest.Pytester, contracts: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "harness.plugin", "-p", "no:cacheprovider", "--coop-lane", "simulator", "--coop-backend", "model",
        "--coop-contracts", str(contracts), "--coop-profile", "full", *args)


@pytest.mark.usefixtures("model_backend")
def test_node_ids_are_case_ids(pytester: pytest.Pytester, small_contracts: Path) -> None:
    ids = _ids(_run(pytester, small_contracts, "--collect-only", "-q"))
    assert len(ids) > 300
    assert "block.load/model/dtype=int16,block=64,ipt=1,alg=direct,valid=full,oob=none,offset=zero" in ids


@pytest.mark.usefixtures("model_backend")
def test_all_pass_with_journals_per_xdist_worker(pytester: pytest.Pytester, small_contracts: Path) -> None:
    journal = pytester.path / "j-{worker}.jsonl"
    result = _run(pytester, small_contracts, "-n", "2", "-v", "--coop-journal", str(journal))
    outcomes = result.parseoutcomes()
    assert result.ret == 0 and outcomes["passed"] > 300 and "failed" not in outcomes
    records = [r for worker in ("gw0", "gw1") for r in read_journal(pytester.path / f"j-{worker}.jsonl")]
    finals = final_cases(records)
    assert len(finals) == outcomes["passed"]
    assert len([r for r in records if isinstance(r, LaunchRecord)]) == len({kernel_scope(c) for c in finals
                                                                              if "reject=" not in c})
    result.stdout.fnmatch_lines(["*] PASSED *block.load/model/dtype=int16,block=64,ipt=1,alg=direct,valid=full,"
                                 "oob=none,offset=zero*"])


@pytest.mark.usefixtures("model_backend")
@ITEMS
def test_wrong_output_fails_with_the_rule(pytester: pytest.Pytester, small_contracts: Path,
                                          monkeypatch: pytest.MonkeyPatch, items: str) -> None:
    monkeypatch.setenv(FAULT_ENV, f"corrupt:{BROKEN}")
    result = _run(pytester, small_contracts, "--coop-items", items)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*Fail: pattern *, block *: out[[]0[]]=*, but should be * (*)*seed *"])
    assert result.parseoutcomes()["failed"] == 2  # block 0 of the launch of each block shape (one per group)


@pytest.mark.usefixtures("model_backend")
@ITEMS
def test_undeclared_not_supported_fails_a_fail_closed_lane(pytester: pytest.Pytester, small_contracts: Path,
                                                          monkeypatch: pytest.MonkeyPatch, items: str) -> None:
    monkeypatch.setenv(UNSUPPORTED_ENV, "warp_transpose")
    plain = _run(pytester, small_contracts, "--coop-items", items)
    assert plain.ret == 0 and plain.parseoutcomes()["skipped"] > 0  # a plain lane only skips
    closed = _run(pytester, small_contracts, "--coop-fail-closed", "--coop-items", items)
    assert closed.ret == 1
    closed.stdout.fnmatch_lines(["*NotSupported: the model does not implement warp_transpose*"])


def _declare_warp_transpose_unsupported(contracts: Path, expires: str) -> None:
    (contracts / "expectations.toml").write_text(
        'schema = 1\n[[expect]]\ncases = "*/model/*alg=warp_transpose,valid=*"\nstatus = "NotSupported"\n'
        f'bug = "https://example.org/bugs/2"\nexpires = {expires}\nreason = "not written yet"\n')


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize(("items", "xfail"), [
    ("case", "XFAIL *alg=warp_transpose,valid=* - NotSupported: the model does not implement warp_transpose "
             "(https://example.org/bugs/2)"),
    ("group", "XFAIL *alg=warp_transpose - * of * case(s) accepted: * NotSupported")])
def test_declared_not_supported_is_accepted(pytester: pytest.Pytester, small_contracts: Path,
                                            monkeypatch: pytest.MonkeyPatch, items: str, xfail: str) -> None:
    """An item xfails when all its non-passes are accepted: a declared case, or a group of them."""
    monkeypatch.setenv(UNSUPPORTED_ENV, "warp_transpose")
    _declare_warp_transpose_unsupported(small_contracts, "2099-01-01")
    journal = pytester.path / "j.jsonl"
    result = _run(pytester, small_contracts, "--coop-fail-closed", "--coop-journal", str(journal),
                  "--coop-items", items, "-rx")
    declared = [r for r in final_cases(read_journal(journal)).values() if r.status is Status.NOT_SUPPORTED]
    items_held = {kernel_scope(r.id) if items == "group" else r.id for r in declared}
    assert result.ret == 0 and declared and result.parseoutcomes()["xfailed"] == len(items_held)
    assert '"waiver"' not in journal.read_text()  # the journal keeps the backend's own verdict
    result.stdout.fnmatch_lines([xfail])


@pytest.mark.usefixtures("model_backend")
def test_an_accepted_item_reports_its_message_without_a_traceback(pytester: pytest.Pytester, small_contracts: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest formats an xfail's traceback (the AST of every frame's module) though it never shows it: 0.16 s an
    item, which a lane of 17,000 declared NotSupported cases paid for nothing."""
    monkeypatch.setenv(UNSUPPORTED_ENV, "warp_transpose")
    _declare_warp_transpose_unsupported(small_contracts, "2099-01-01")
    reprs = pytester.path / "longreprs.jsonl"
    monkeypatch.setenv("COOP_TEST_LONGREPRS", str(reprs))
    pytester.makepyfile(longrepr_probe=(  # a plugin of the child run (python -m puts its folder on sys.path)
        "import json, os\n"
        "def pytest_runtest_logreport(report):\n"
        "    if hasattr(report, 'wasxfail'):\n"
        "        with open(os.environ['COOP_TEST_LONGREPRS'], 'a') as out:\n"
        "            out.write(json.dumps(str(report.longrepr)) + '\\n')\n"))
    result = _run(pytester, small_contracts, "-p", "longrepr_probe", "--coop-fail-closed", "--coop-items", "group")
    longreprs = [json.loads(line) for line in reprs.read_text().splitlines()]
    assert result.ret == 0 and longreprs
    assert all("NotSupported" in text and "runtest" not in text and "plugin.py" not in text for text in longreprs)


@pytest.mark.usefixtures("model_backend")
def test_no_lane_adds_no_items(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "harness.plugin", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


@pytest.mark.usefixtures("model_backend")
def test_the_journal_records_the_session_values_and_each_group(pytester: pytest.Pytester,
                                                               small_contracts: Path) -> None:
    """What an identical re-run needs: seed, blocks per launch, and every group's cases as one launch ran them."""
    journal = pytester.path / "j.jsonl"
    assert _run(pytester, small_contracts, "--coop-journal", str(journal), "--coop-seed", "5",
                "--coop-max-blocks", "8").ret == 0
    records = list(read_journal(journal))
    [session] = [r for r in records if isinstance(r, SessionRecord)]
    assert (session.seed, session.max_blocks, session.arch, session.profile) == (5, 8, "sm_90", "full")
    groups = [r for r in records if isinstance(r, GroupRecord)]
    assert sorted(c for g in groups for c in g.cases) == sorted(final_cases(records))
    assert all(len({kernel_scope(c) for c in g.cases}) == 1 for g in groups)
    # where the time went, as a harness run's end record says it (a sanitizer lane's summed only its counts)
    phases = records[-1].phases["model"]  # type: ignore[attr-defined]
    assert {"startup", "build", "launch", "judge"} <= set(phases) and all(v >= 0 for v in phases.values())


@pytest.mark.usefixtures("model_backend")
def test_an_expired_expectation_does_not_waive(pytester: pytest.Pytester, small_contracts: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UNSUPPORTED_ENV, "warp_transpose")
    _declare_warp_transpose_unsupported(small_contracts, "2026-01-01")
    result = _run(pytester, small_contracts, "--coop-fail-closed")
    assert result.ret == 1 and "xfailed" not in result.parseoutcomes()
    result.stdout.fnmatch_lines(["*expectation * expired on 2026-01-01: it waives nothing*"])


@pytest.mark.usefixtures("model_backend")
def test_a_missing_expectations_file_is_a_usage_error(pytester: pytest.Pytester, small_contracts: Path) -> None:
    """Never silently ignored: `report` refuses the same path, and so does `run`."""
    missing = pytester.path / "no-such-expectations.toml"
    result = _run(pytester, small_contracts, "--coop-expectations", str(missing))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--coop-expectations {missing}: no such file*"])


@pytest.mark.usefixtures("model_backend")
def test_one_journal_for_several_xdist_workers_is_a_usage_error(pytester: pytest.Pytester,
                                                               small_contracts: Path) -> None:
    journal = pytester.path / "j.jsonl"
    result = _run(pytester, small_contracts, "-n", "2", "--coop-journal", str(journal))
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not journal.exists()
    result.stderr.fnmatch_lines([f"*--coop-journal {journal}: a journal takes one writer and pytest-xdist runs "
                                 "several: put {worker} in the path*"])


@pytest.mark.usefixtures("model_backend")
def test_group_items_are_the_kernel_groups(pytester: pytest.Pytester, small_contracts: Path) -> None:
    cases = _ids(_run(pytester, small_contracts, "--collect-only", "-q"))
    groups = _ids(_run(pytester, small_contracts, "--collect-only", "-q", "--coop-items", "group"))
    assert len(groups) < len(cases) and sorted(groups) == sorted({kernel_scope(c) for c in cases})
    assert "block.load/model/dtype=int16,block=64,ipt=1,alg=direct" in groups
    assert any("reject=" in g for g in groups)  # a rejection is its own group


def _finals(paths: list[Path]) -> dict[str, tuple[Status, str, tuple[str, ...], int | None]]:
    """What a verdict says (not how long it took) per case, over the journals of one run."""
    finals = final_cases(r for path in paths for r in read_journal(path))
    return {cid: (r.status, r.detail, r.rules, r.seed) for cid, r in finals.items()}


@pytest.mark.usefixtures("model_backend")
def test_group_items_journal_the_verdicts_of_case_items(pytester: pytest.Pytester, small_contracts: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, f"corrupt:{BROKEN},raise:coop_block_load__float64__ipt3__striped")
    monkeypatch.setenv(UNSUPPORTED_ENV, "warp_transpose")
    _run(pytester, small_contracts, "--coop-journal", str(pytester.path / "case.jsonl"))
    _run(pytester, small_contracts, "--coop-items", "group", "-n", "2",
         "--coop-journal", str(pytester.path / "group-{worker}.jsonl"))
    by_case = _finals([pytester.path / "case.jsonl"])
    assert _finals(sorted(pytester.path.glob("group-gw*.jsonl"))) == by_case
    assert {status for status, *_ in by_case.values()} == {Status.PASS, Status.FAIL, Status.CRASH,
                                                           Status.NOT_SUPPORTED}


@pytest.mark.usefixtures("model_backend")
def test_a_group_fails_counting_its_cases_not_accepted_and_naming_the_first(
        pytester: pytest.Pytester, small_contracts: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, f"corrupt:{BROKEN},raise:coop_block_load__float64__ipt3__striped")
    result = _run(pytester, small_contracts, "--coop-items", "group")
    assert result.ret == 1 and result.parseoutcomes()["failed"] == 4  # two block shapes of each planted kernel
    store = "block.store/model/dtype=int16,block=64,ipt=1,alg=direct"
    result.stdout.fnmatch_lines([store, "1 of * case(s) not accepted: 1 Fail",
                                 f"  {store},valid=*: Fail: pattern *, block *: out[[]0[]]=*, but should be *"])
    load = "block.load/model/dtype=float64,block=64,ipt=3,alg=striped"
    # a set: with CI set, pytest's short summary repeats the failure's lines untruncated
    crashed = {line for line in result.outlines if line.startswith(f"  {load},valid=")}
    assert len(crashed) == MAX_LISTED and all(": Crash: " in line for line in crashed)
    result.stdout.fnmatch_lines([load, "* of * case(s) not accepted: * Crash", "  ... and * more: the journal "
                                 "holds every verdict"])


class _SpecRecorder:
    """An engine that answers Pass for every case and records which spec each group ran with."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, list[str]]] = []

    def run_group(self, spec: object, cases: list) -> list[CaseRecord]:
        self.calls.append((spec, [c.id for c in cases]))
        return [CaseRecord(c.id, Status.PASS, "gpu") for c in cases]


def test_a_group_item_runs_each_kernel_point_of_its_group_with_its_own_spec() -> None:
    """A group item is the cases of (dtype, block, ipt, alg); a family whose kernel axes go further (Warp Reduce's
    width, op and mode) holds several kernel points there. Run with the first case's spec, the whole group was one
    kernel point's launch judged under every case id: on the H200, cccl's head and tail Warp Reduce cases, which
    its adapter declines, passed under racecheck over full (18,435 of them)."""
    contract = next(c for c in load_contracts() if c.id == "warp.reduce")
    runner = CaseRunner.__new__(CaseRunner)
    runner.writer, runner.verdicts, runner.groups = None, {}, {}
    engine = _SpecRecorder()
    runner.engines = {"numba": engine}  # type: ignore[dict-item]
    for case in lane_cases(contract, "numba", "full", "gpu"):
        runner.groups.setdefault(case_scope(case), []).append(case)
    group = next(g for g in runner.groups.values() if len({c.spec for c in g}) > 3)
    runner.verdicts_of(group[:1])
    assert len(engine.calls) == len({c.spec for c in group})
    by_id = {c.id: c for c in group}
    assert all(by_id[i].spec == spec for spec, ids in engine.calls for i in ids)
    assert sorted(i for _, ids in engine.calls for i in ids) == sorted(by_id)
