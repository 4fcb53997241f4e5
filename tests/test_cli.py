"""The command line: counts, parallel shards that split a lane exactly, and handled errors."""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from harness.contracts import CONTRACTS_ENV, load_contracts
from harness.journal import GroupRecord, SessionRecord, final_cases, read_journal
from harness.lanes import ALL_LANES, lane_cases
from harness.report.cli import main as report_main
from harness.scaling import group_costs
from harness.session import RunConfig, planned_groups
from harness.statuses import Status
from tests.support.model_backend import FAULT_ENV, KEY_LEAVES_OUT_ENV


def test_list_prints_both_profiles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "block.load   full   4081 kernel points   361164 run cases in  1504392 blocks" in out
    assert "block.store  pr      124 kernel points     4911 run cases in    20403 blocks" in out
    assert "block.exchange pr       99 kernel points      233 run cases in      950 blocks   6 reject cases" in out
    assert "block.exchange full  17952 kernel points    46464 run cases in   189600 blocks" in out
    assert "block.shuffle pr       89 kernel points      228 run cases in      922 blocks  10 reject cases" in out
    assert "block.shuffle full   4576 kernel points     6138 run cases in    25224 blocks" in out
    assert "block.reduce pr      100 kernel points     1030 run cases in     2311 blocks   7 reject cases" in out
    assert "block.reduce full   7398 kernel points    86184 run cases in   213902 blocks" in out
    assert "warp.scan    pr       93 kernel points      104 run cases in      236 blocks  10 reject cases" in out
    assert "block.scan   pr       78 kernel points      100 run cases in      233 blocks   7 reject cases" in out
    assert "block.scan   full  25830 kernel points    43050 run cases in   109200 blocks" in out


@pytest.mark.usefixtures("model_backend")
def test_jobs_split_the_lane_into_disjoint_shards(small_contracts: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "lane.jsonl"
    common = ["--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts), "--profile", "full"]
    assert main(["run", *common, "--journal", str(journal), "--jobs", "3"]) == 0
    shards = [set(final_cases(read_journal(tmp_path / f"lane.shard{k}of3.jsonl"))) for k in (1, 2, 3)]
    assert all(shards) and not (shards[0] & shards[1]) and not (shards[1] & shards[2])
    single = tmp_path / "single.jsonl"
    assert main(["run", *common, "--journal", str(single), "--no-isolate"]) == 0
    assert set().union(*shards) == set(final_cases(read_journal(single)))
    assert f"{len(set().union(*shards))} of {len(set().union(*shards))} cases accepted" in capsys.readouterr().out


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize("balanced", [False, True])
def test_shards_split_the_lane_between_kernels_not_inside_one(small_contracts: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch, balanced: bool) -> None:
    """A backend whose kernel leaves the block shape out (numba's: the block is a launch parameter) compiles each
    kernel once per worker that runs one of its block shapes. Sliced by kernel point, numba's full Block Reduce,
    Block Scan, Warp Reduce and Warp Scan on 16 H200 workers compiled 19,107 times for 8,384 kernels; every
    kernel's groups go to one shard, so each kernel compiles once in the lane."""
    monkeypatch.setenv(KEY_LEAVES_OUT_ENV, "block")
    common = ["--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts), "--profile", "full"]
    assert main(["run", *common, "--journal", str(tmp_path / "a.jsonl"), "--jobs", "3"]) == 0
    first = [tmp_path / f"a.shard{k}of3.jsonl" for k in (1, 2, 3)]
    runs = [first]
    if balanced:
        assert main(["run", *common, "--journal", str(tmp_path / "b.jsonl"), "--jobs", "3",
                     "--balance-from", *map(str, first)]) == 0
        runs = [[tmp_path / f"b.shard{k}of3.jsonl" for k in (1, 2, 3)]]
    for journals in runs:
        kernels = [{(re.sub(r"block=[^,]*,?", "", r.kernel), tuple(re.findall(r"static_[^,]*", r.cases[0])))
                    for r in read_journal(j) if isinstance(r, GroupRecord)} for j in journals]  # a reject's statics
        # key apart: its kernel id omits them
        assert all(kernels) and sum(map(len, kernels)) == len(set().union(*kernels))


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--lane", "gpu-racecheck"], "use `python -m harness.sanitizer lane --tool racecheck`"),
    (["run", "--lane", "host", "--backend", "cuda-fortran"], "unknown backend(s) cuda-fortran"),
    (["run", "--resume", "no/such/journal.jsonl"], "no such journal to resume"),
])
def test_handled_errors_exit_2_with_one_line(argv: list[str], message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bad_shard_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["worker", "--journal", "x.jsonl", "--shard", "3/2"])
    assert "'3/2' is not K/N" in capsys.readouterr().err


BROKEN = "coop_block_store__int16__ipt1__direct"


@pytest.mark.usefixtures("model_backend")
def test_a_run_waives_with_live_expectations_only(small_contracts: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal keeps the backend's own verdicts; the run's summary applies live entries, never an expired one."""
    monkeypatch.setenv(FAULT_ENV, f"corrupt:{BROKEN}")
    common = ["run", "--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts),
              "--profile", "full", "--no-isolate"]
    assert main([*common, "--journal", str(tmp_path / "bare.jsonl")]) == 1
    finals = final_cases(read_journal(tmp_path / "bare.jsonl"))
    failed = sorted(cid for cid, r in finals.items() if r.status is Status.FAIL)
    assert len(failed) == 2
    for expires, code in (("2099-01-01", 0), ("2026-01-01", 1)):
        (small_contracts / "expectations.toml").write_text("schema = 1\n" + "".join(
            f'[[expect]]\ncases = "{cid}"\nstatus = "Fail"\nbug = "https://bugs.example/9"\n'
            f'expires = {expires}\nreason = "planted"\n' for cid in failed))
        journal = tmp_path / f"{expires}.jsonl"
        capsys.readouterr()
        assert main([*common, "--journal", str(journal)]) == code
        out, err = capsys.readouterr()
        recorded = final_cases(read_journal(journal))
        assert [recorded[cid].status for cid in failed] == [Status.FAIL, Status.FAIL]  # never a waived status
        assert '"waiver"' not in journal.read_text()
        accepted = len(finals) if code == 0 else len(finals) - 2
        assert f"{accepted} of {len(finals)} cases accepted" in out
    assert err.count("expired on 2026-01-01") == 2


@pytest.mark.usefixtures("model_backend")
def test_a_run_of_chosen_ids_passes_beside_an_entry_it_leaves_out(small_contracts: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A re-run of a few ids (``harness diff --rerun``, a bisect step) with the shipped expectations: an entry naming
    cases it did not choose is not stale there, so the re-run's exit status says whether its own cases passed."""
    common = ["run", "--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts),
              "--profile", "smoke", "--no-isolate"]
    assert main([*common, "--journal", str(tmp_path / "all.jsonl")]) == 0
    store = sorted(cid for cid in final_cases(read_journal(tmp_path / "all.jsonl"))
                   if cid.startswith("block.store") and ",alg=direct," in cid)
    (small_contracts / "expectations.toml").write_text(
        'schema = 1\n[[expect]]\ncases = "block.store/model/*,alg=striped,*"\nstatus = "Fail"\nbug = "https://bugs.example/9"\n'
        'expires = 2099-01-01\nreason = "names only cases the re-run leaves out"\n')
    (tmp_path / "ids.txt").write_text("\n".join(store[:3]) + "\n")
    capsys.readouterr()
    assert main([*common, "--ids-file", str(tmp_path / "ids.txt"), "--journal", str(tmp_path / "some.jsonl")]) == 0
    out, err = capsys.readouterr()
    assert "3 of 3 cases accepted" in out and "matched no case" not in err


def _commands() -> dict[str, argparse.ArgumentParser]:
    """The subcommand parsers of ``python -m harness``, by name."""
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", ["list", "run", "worker"])
def test_every_option_has_help_showing_its_default(command: str) -> None:
    parser = _commands()[command]
    shown = " ".join(parser.format_help().split())
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{command} {'/'.join(action.option_strings)}: no help"
        if action.default not in (None, False, []):
            default = "{}/{}".format(*action.default) if isinstance(action.default, tuple) else action.default
            assert f"(default: {default})" in shown, f"{command} {'/'.join(action.option_strings)}: default hidden"


@pytest.mark.parametrize("command", [main, report_main], ids=["harness", "harness.report"])
def test_help_is_plain_text(command: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]) -> None:
    """Docstrings written for Sphinx show in --help without their reST markup."""
    with pytest.raises(SystemExit):
        command(["--help"])
    text = capsys.readouterr().out
    assert "exit" in text and "``" not in text and ":func:" not in text


@pytest.mark.parametrize(("argv", "start"), [
    (["run", "--profile", "bogus"], "error: argument --profile: invalid choice: 'bogus'"),
    (["run", "--lane", "host", "--backend", "cuda-fortran"], "error: unknown backend(s) cuda-fortran"),
], ids=["usage", "handled"])
def test_usage_and_handled_errors_share_one_format(argv: list[str], start: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """One line, ``error: <where>: <what>``, whether argparse or the command found the problem."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(str(exc.code))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(start) and err.count("\n") == 1


def test_a_default_contracts_folder_without_contracts_says_how_to_name_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An installed harness run outside a checkout finds no contracts/: the error says what to do."""
    monkeypatch.setenv(CONTRACTS_ENV, str(tmp_path))
    assert main(["list"]) == 2
    assert f"name the folder with --contracts or ${CONTRACTS_ENV}" in capsys.readouterr().err


@pytest.mark.usefixtures("model_backend")
def test_without_a_gpu_a_run_says_it_runs_the_host_lane(small_contracts: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The main job picks its lane itself: it says which, why, and how many cases, before they run."""
    monkeypatch.setattr("harness.cli.gpu_present", lambda: False)
    main(["run", "--backend", "model", "--contracts", str(small_contracts), "--journal", str(tmp_path / "j.jsonl"),
          "--no-isolate"])
    n = sum(len(lane_cases(contract, "model", "pr", "host")) for contract in load_contracts(small_contracts))
    assert capsys.readouterr().out.startswith(
        f"no CUDA device found: running the host lane (compile + resource checks, {n} cases); the gpu lane needs "
        "a CUDA device\n")


@pytest.mark.usefixtures("model_backend")
def test_a_run_names_its_lane_and_at_the_end_the_lanes_it_did_not_run(small_contracts: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("harness.cli.gpu_present", lambda: False)
    journal = tmp_path / "j.jsonl"
    assert main(["run", "--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts),
                 "--journal", str(journal), "--no-isolate"]) == 0
    out = capsys.readouterr().out
    n = len(final_cases(read_journal(journal)))
    assert out.startswith(f"running the simulator lane (kernels run in numba's CUDA simulator, on the CPU, {n} "
                          "cases); the gpu lane needs a CUDA device\n")
    not_run = out.split("lanes not run:\n")[1].splitlines()
    assert [line.split()[0] for line in not_run] == [lane for lane in ALL_LANES if lane != "simulator"]
    assert all("needs a CUDA device" in line for line in not_run if line.split()[0].startswith("gpu"))


def test_a_reader_that_goes_away_stops_the_output_quietly() -> None:
    """``python -m harness list --ids | head`` ends without a traceback, like any command line tool."""
    proc = subprocess.Popen([sys.executable, "-m", "harness", "list", "--ids"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().startswith(b"block.")
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGPIPE and err == b""


@pytest.mark.usefixtures("model_backend")
def test_gpus_give_each_shard_its_gpu_and_balance_splits_by_measured_cost(
        small_contracts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")  # the GPUs --gpus all finds
    common = ["--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts), "--profile", "full"]
    assert main(["run", *common, "--journal", str(tmp_path / "a.jsonl"), "--jobs", "3", "--gpus", "all"]) == 0
    first = [tmp_path / f"a.shard{k}of3.jsonl" for k in (1, 2, 3)]
    assert [s.gpu for j in first for s in read_journal(j) if isinstance(s, SessionRecord)] == ["3", "5", "3"]
    # one shard per GPU when --jobs is not given; groups assigned by the first run's measured cost
    assert main(["run", *common, "--journal", str(tmp_path / "b.jsonl"), "--gpus", "2,",
                 "--balance-from", *map(str, first)]) == 0
    assert main(["run", *common, "--journal", str(tmp_path / "c.jsonl"), "--gpus", "2",
                 "--balance-from", *map(str, first)]) == 0
    second = [tmp_path / f"c.shard{k}of2.jsonl" for k in (1, 2)]
    assert [s.gpu for j in second for s in read_journal(j) if isinstance(s, SessionRecord)] == ["3", "5"]
    assert [s.gpu for s in read_journal(tmp_path / "b.jsonl") if isinstance(s, SessionRecord)] == ["2"]
    costs = group_costs(first)
    contracts = load_contracts(small_contracts)
    for k, journal in enumerate(second, start=1):  # the worker ran what the supervisor planned for its shard
        shard = RunConfig(lane="simulator", profile="full", backends=["model"], shard=(k, 2), costs=costs)
        assert set(final_cases(read_journal(journal))) == {c.id for _b, cases in planned_groups(shard, contracts)
                                                           for c in cases}
    merged = [set(final_cases(read_journal(j))) for j in second]
    assert not merged[0] & merged[1] and merged[0] | merged[1] == set().union(*(final_cases(read_journal(j))
                                                                              for j in first))


def test_gpus_need_isolated_workers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--lane", "host", "--gpus", "all", "--no-isolate"]) == 2
    assert "--gpus gives each worker process its GPU: leave out --no-isolate" in capsys.readouterr().err
