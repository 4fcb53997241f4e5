"""``python -m harness.sanitizer lane``: options, the pytest command, and end to end on a fake sanitizer.

The end-to-end runs start the real lane (pytest, xdist, the wrapper per worker, harness.plugin,
the control item) on the model backend in numba's CUDA simulator, under ``fakes/compute_sanitizer.py``,
which writes the XML a real sanitizer would for the launches it ran.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.journal import CaseRecord, ControlRecord, LaunchRecord, read_journal
from harness.plugin import kernel_scope
from harness.sanitizer import SanitizerLaneError
from harness.sanitizer.junit import junit_name
from harness.sanitizer.lane import (
    LaneOptions,
    absolute_paths,
    check_pytest_args,
    find_sanitizer,
    item_kind,
    main,
    pytest_command,
    run_config,
)
from harness.sanitizer.layout import MARKER, LaneLayout
from harness.sanitizer.tools import CONTROLS
from harness.sanitizer.workers import Slot
from harness.sanitizer.wrapper import WrapperConfig
from harness.session import RunConfig
from harness.statuses import Status


@pytest.mark.parametrize("args", [["--coop-lane", "gpu"], ["--junitxml=x.xml"], ["-n", "4"], ["-n4"],
                                  ["--tx", "popen"], ["--dist=load"], ["-p", "no:xdist"]])
def test_options_the_driver_owns_are_refused(args: list[str]) -> None:
    with pytest.raises(SanitizerLaneError, match="is set by the lane driver; leave it out"):
        check_pytest_args(args)


def test_a_usage_error_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lane", "--tool", "racecheck", "--", "-n", "2"]) == 2
    assert capsys.readouterr().err == ("error: pytest option '-n' is set by the lane driver; leave it out "
                                       "(use --workers for the number of sanitized workers)\n")


@pytest.mark.parametrize("args", [["--tx", "ssh=gpu1"], ["--tx=3*popen"], ["-d", "--tx", "popen"]])
def test_a_gateway_spec_is_refused_saying_that_a_lane_runs_on_one_host(args: list[str]) -> None:
    with pytest.raises(SanitizerLaneError, match="a sanitizer lane runs on this host: run one on each host and give "
                       "`harness report` their journals together"):
        check_pytest_args(args)


def test_other_pytest_options_pass() -> None:
    check_pytest_args(["-k", "int32", "--coop-backend", "numba", "-p", "no:cacheprovider", "--no-header"])


def test_pytest_command_runs_harness_plugin_and_one_worker_per_slot(tmp_path: Path) -> None:
    layout = LaneLayout(tmp_path, "synccheck")
    command = pytest_command(layout, [Slot("w0", "0"), Slot("w1", "1")], ["-k", "int32"], python="/env/python")
    assert command[:4] == ["/env/python", "-P", "-m", "pytest"]
    assert command[command.index("--coop-lane") + 1] == "gpu-synccheck"
    assert command[command.index("--coop-journal") + 1] == str(tmp_path / "journal" / "{worker}.jsonl")
    assert command[command.index("--junitxml") + 1] == str(tmp_path / "junit-gpu-synccheck.xml")
    assert [a for a in command if a.startswith("--tx=")] == [
        f"--tx=popen//python=/env/python -m harness.sanitizer.wrapper {tmp_path}/wrappers/{slot}.json"
        for slot in ("w0", "w1")]
    assert command[-2:] == ["-k", "int32"]


def test_contract_paths_are_made_absolute_for_the_temporary_working_directory() -> None:
    args = ["--coop-contracts", "c", "--coop-expectations=e.toml", "-k", "c", "--coop-contracts", "/abs"]
    assert absolute_paths(args, Path("/repo")) == [
        "--coop-contracts", "/repo/c", "--coop-expectations=/repo/e.toml", "-k", "c", "--coop-contracts", "/abs"]


def test_the_item_kind_is_read_as_pytest_reads_it() -> None:
    assert item_kind(["-q"]) == "case"
    assert item_kind(["--coop-items", "group", "-k", "x", "--coop-items=case"]) == "case"  # the last one wins
    assert item_kind(["--coop-items=case", "--coop-items", "group"]) == "group"


def test_run_config_reads_the_plugin_options(tmp_path: Path) -> None:
    (tmp_path / "expectations.toml").write_text("schema = 1\n")
    config = run_config("memcheck", ["-q", "--coop-contracts", str(tmp_path), "--coop-arch", "sm_100"])
    assert (config.lane, config.arch, config.expectations) == ("gpu-memcheck", "sm_100", tmp_path / "expectations.toml")
    assert run_config("memcheck", ["--coop-contracts", str(tmp_path / "none")]).expectations is None


def test_the_lane_reads_the_contracts_it_is_given(small_contracts: Path) -> None:
    """The session the lane judges by reads --coop-contracts, not the default folder (an installed harness run
    elsewhere stopped with "<cwd>/contracts: no contract files"; in a checkout it hashed the checkout's contracts)."""
    config = run_config("memcheck", ["--coop-contracts", str(small_contracts)])
    assert config.contracts_dir == small_contracts
    def hashed(contracts: Path | None) -> str:
        return RunConfig(lane="gpu-memcheck", contracts_dir=contracts).session_record().contracts_sha256

    assert config.session_record().contracts_sha256 == hashed(small_contracts) != hashed(None)


def test_the_sanitizer_is_found_from_option_env_or_path(fake_sanitizer: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    for variable in ("COMPUTE_SANITIZER", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(SanitizerLaneError, match="compute-sanitizer not found"):
        find_sanitizer(None)
    assert find_sanitizer(str(fake_sanitizer)) == str(fake_sanitizer)
    monkeypatch.setenv("CUDA_HOME", str(fake_sanitizer.parent.parent))
    assert find_sanitizer(None) == str(fake_sanitizer)
    with pytest.raises(SanitizerLaneError, match="--compute-sanitizer /no/such: not an executable"):
        find_sanitizer("/no/such")


def test_a_folder_is_wiped_only_when_a_lane_made_it(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SanitizerLaneError, match="not empty and not a lane folder"):
        LaneLayout(tmp_path, "racecheck").prepare()
    layout = LaneLayout(tmp_path / "lane", "racecheck")
    layout.prepare()
    (layout.root / "xml" / "old.xml").write_text("stale")
    layout.prepare()
    assert (layout.root / MARKER).exists() and not (layout.root / "xml" / "old.xml").exists()


def run_lane(tmp_path: Path, fake_sanitizer: Path, contracts: Path, plan: str, workers: int,
             *pytest_args: str, linger: float = 0) -> tuple[subprocess.CompletedProcess[str], LaneLayout]:
    # No plugin autoloading: the lane must name every plugin it needs (and starts twice as fast).
    env = {**os.environ, "PATH": f"{fake_sanitizer.parent}{os.pathsep}{os.environ['PATH']}",
           "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(workers)), "NUMBA_ENABLE_CUDASIM": "1",
           "FAKE_SANITIZER_PLAN": plan, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "FAKE_SANITIZER_LINGER": str(linger)}
    layout = LaneLayout(tmp_path / "lane", "racecheck")
    done = subprocess.run([sys.executable, "-m", "harness.sanitizer", "lane", "--tool", "racecheck", "--out",
                           str(layout.root), "--workers", str(workers), "--", "--coop-backend", "model",
                           "--coop-contracts", str(contracts), "-p", "no:cacheprovider", "-q", *pytest_args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    return done, layout


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize("items", ["case", "group"])
def test_end_to_end_a_record_on_a_case_fails_the_lane(tmp_path: Path, fake_sanitizer: Path,
                                                      small_contracts: Path, items: str) -> None:
    """Verdicts and the summary count cases in either item kind; JUnit marks the item holding a charged case."""
    done, layout = run_lane(tmp_path, fake_sanitizer, small_contracts, "case", 2, "--coop-items", items)
    assert done.returncode == 1, done.stdout + done.stderr
    assert [WrapperConfig.read(layout.wrapper_config(s)).gpu for s in ("w0", "w1")] == ["0", "1"]
    charged, finals = set(), {}
    for journal in layout.journals():
        records = list(read_journal(journal))
        finals.update({r.id: r for r in records if isinstance(r, CaseRecord)})
        # The fake charges block 1 of the first launch of each worker that launched a kernel.
        launches = [r for r in records if isinstance(r, LaunchRecord)]
        charged.update(launch.cases[launch.blocks[1]] for launch in launches[:1])
    assert len(layout.journals()) == 2 and charged
    for case_id, record in finals.items():
        assert record.status is (Status.SANITIZER_ERROR if case_id in charged else Status.PASS), record
    passed = len(finals) - len(charged)
    assert f"Passed: {passed} model GPU checks, under racecheck\n" in done.stdout
    assert f"gpu-racecheck: FAILED with {len(charged)} problem(s):" in done.stderr
    node = kernel_scope if items == "group" else str
    junit = ET.parse(layout.junit).getroot()
    testcases = {case.get("name") for case in junit.iter("testcase")}
    assert testcases == {junit_name(node(case_id)) for case_id in finals} | {junit_name(CONTROLS["racecheck"].id)}
    failed = {case.get("name") for case in junit.iter("testcase") if case.find("failure") is not None}
    assert failed == {junit_name(node(case_id)) for case_id in charged}


@pytest.mark.usefixtures("model_backend")
def test_end_to_end_a_lane_whose_control_alone_is_reported_passes(tmp_path: Path, fake_sanitizer: Path,
                                                                  small_contracts: Path) -> None:
    done, layout = run_lane(tmp_path, fake_sanitizer, small_contracts, "control", workers=1)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-4].startswith("racecheck: 1 record(s): 1 on the positive control, 0 unmapped")
    assert lines[-2].startswith("  model       seconds by phase (summed over workers): ") and "launch" in lines[-2]
    assert lines[-1] == "gpu-racecheck: passed"
    [journal] = layout.journals()
    [control] = [r for r in read_journal(journal) if isinstance(r, ControlRecord)]
    assert (control.id, control.lane, control.seen, control.records) == (
        "control/racecheck/shared-race", "gpu-racecheck", True, 1)
    assert len(list((layout.root / "processes").glob("*.json"))) == 1
    assert len(list((layout.root / "controls").glob("*.jsonl"))) == 1


@pytest.mark.usefixtures("model_backend")
def test_a_sanitizer_slower_to_finish_than_xdists_teardown_still_counts(tmp_path: Path, fake_sanitizer: Path,
                                                                         small_contracts: Path) -> None:
    """xdist kills a worker it cannot stop within 10 s; under the sanitizer that is the wrapper, while the tool
    still analyses at exit. Seen on a loaded H200: every wrapper killed, no exit status, no record, the lane
    failed with its control unseen. The lane gives its workers --lane-timeout to come down instead."""
    done, layout = run_lane(tmp_path, fake_sanitizer, small_contracts, "control", 1, linger=11)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-4].startswith("racecheck: 1 record(s): 1 on the positive control")
    assert len(list((layout.root / "status").glob("*.json"))) == 1


def test_the_sanitizer_waits_for_a_workers_first_cuda_call_as_long_as_the_lane_may_run() -> None:
    """A worker collects every item before its first CUDA call; a sanitizer that stops waiting sooner checks
    nothing in it (seen on the GPU with 59,000 items: all eight workers unchecked, the lane stuck)."""
    assert LaneOptions("racecheck", Path("o"), lane_timeout=900.5).connect_timeout == 901
    assert LaneOptions("racecheck", Path("o"), launch_timeout=60, lane_timeout=900).connect_timeout == 60
