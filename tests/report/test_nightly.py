"""The nightly run: probes decide what runs, the rest is recorded as not run with why; the roll-up judges."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import caseid
from harness.cli import main as harness_main
from harness.report.baseline import unpack
from harness.report.errors import ReportError
from harness.report.history import Transition, append_night, nights, read_history
from harness.report.matrix import Combination, load_matrix
from harness.report.nightly import CommandRunner, LaneRunner, Night, Probes, Rollup, run_nightly, transition_rows
from harness.report.render import md_text
from harness.report.toolchain import PROBE, VenvInstaller
from harness.statuses import Status
from tests.report.journals import case_id, write_journal
from tests.support.model_backend import FAULT_ENV
from tests.test_cli import BROKEN

MATRIX = """schema = 1
command = [{command}]
timeout_s = {timeout}
[axes]
numpy = [
    {{ name = "1.26", env = {{ COOP_NUMPY_SPEC = "numpy<2" }}, requires = ["numpy<2"] }},
    {{ name = "2.x", env = {{ COOP_NUMPY_SPEC = "numpy>=2" }}, requires = ["numpy>=2"] }},
]
lane = [
    {{ name = "host", needs = ["python:3.99"] }},
    {{ name = "gpu", needs = ["gpu"] }},
    {{ name = "gpu-racecheck", needs = ["gpu", "on-path:compute-sanitizer"] }},
]
[[exclude]]
where = {{ lane = "gpu-racecheck", numpy = "1.26" }}
reason = "sanitizer lanes run once"
"""


def matrix(tmp_path: Path, command: str = '"true"', timeout: float = 60) -> Path:
    path = tmp_path / "nightly.toml"
    path.write_text(MATRIX.format(command=command, timeout=timeout))
    return path


def probes(gpu: bool = True, on_path: tuple[str, ...] = ("python3.99", "compute-sanitizer")) -> Probes:
    return Probes(gpu=lambda: gpu, which=lambda name: f"/bin/{name}" if name in on_path else None, running=(3, 12))


def passing(combo: Combination, out: Path, log: Path) -> int:
    write_journal(out / "lane.jsonl", combo.values["lane"], [(case_id("numba"), Status.PASS)])
    return 0


def test_what_this_machine_lacks_is_not_run_with_the_reason(tmp_path: Path) -> None:
    rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(gpu=False, on_path=()),
                         runner=passing)
    assert [(r.id, r.outcome, r.reason) for r in rollup.results] == [
        ("numpy=1.26,lane=host", "not run", "python3.99 is not on PATH"),
        ("numpy=1.26,lane=gpu", "not run", "no GPU (nvidia-smi -L lists none)"),
        ("numpy=2.x,lane=host", "not run", "python3.99 is not on PATH"),
        ("numpy=2.x,lane=gpu", "not run", "no GPU (nvidia-smi -L lists none)"),
        ("numpy=2.x,lane=gpu-racecheck", "not run",
         "no GPU (nvidia-smi -L lists none); compute-sanitizer is not on PATH"),
    ]
    assert rollup.excluded == [("numpy=1.26,lane=gpu-racecheck", "sanitizer lanes run once")]
    assert rollup.failed  # a night that ran nothing is no evidence


def test_the_running_interpreter_meets_its_own_version(tmp_path: Path) -> None:
    assert probes(on_path=()).lacks("python:3.12") is None
    assert probes(on_path=()).lacks("python:3.11") == "python3.11 is not on PATH"


def test_the_gpu_is_probed_once(tmp_path: Path) -> None:
    asked: list[str] = []

    def gpu() -> bool:
        asked.append("gpu")
        return True

    run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", Probes(gpu=gpu, which=lambda name: name),
                runner=passing)
    assert asked == ["gpu"]


def test_the_default_gpu_probe_asks_nvidia_smi_and_never_raises(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\nimport sys\nprint('GPU 0: NVIDIA H200 (UUID: GPU-1)')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    assert Probes().lacks("gpu") is None
    fake.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(9)\n")
    assert Probes().lacks("gpu") == "no GPU (nvidia-smi -L lists none)"
    fake.unlink()
    assert Probes().lacks("gpu") == "no GPU (nvidia-smi -L lists none)"


def test_runnable_lanes_run_and_the_rollup_judges_them(tmp_path: Path) -> None:
    def runner(combo: Combination, lane_out: Path, log: Path) -> int | None:
        log.write_text("ran\n")
        if combo.values["lane"] == "host":
            return passing(combo, lane_out, log)
        if combo.id == "numpy=1.26,lane=gpu":
            write_journal(lane_out / "w0" / "gpu.jsonl", "gpu", [(case_id("numba"), Status.FAIL)])
            return 0  # claims success, but its journal says otherwise
        if combo.id == "numpy=2.x,lane=gpu":
            return None
        return 3

    out = tmp_path / "out"
    rollup = run_nightly(load_matrix(matrix(tmp_path)), out, probes(), runner=runner)
    assert [(r.id, r.outcome, r.reason) for r in rollup.results] == [
        ("numpy=1.26,lane=host", "passed", ""),
        ("numpy=1.26,lane=gpu", "failed", "exit status 0, but 1 verdicts are not accepted"),
        ("numpy=2.x,lane=host", "passed", ""),
        ("numpy=2.x,lane=gpu", "failed", "timed out after 60 s"),
        ("numpy=2.x,lane=gpu-racecheck", "failed", "exit status 3"),
    ]
    first = rollup.results[0]
    assert (first.journals, first.log, first.verdicts) == (
        ["lanes/numpy-1.26_lane-host/lane.jsonl"], "logs/numpy-1.26_lane-host.log",
        {"total": 1, "accepted": 1, "statuses": {"Pass": 1}})
    assert rollup.failed
    saved = json.loads((out / "nightly.json").read_text())
    assert saved["totals"] == {"combinations": 6, "excluded": 1, "passed": 2, "failed": 3,
                               "toolchain unavailable": 0, "not run": 0, "runnable": 0}
    assert saved == json.loads(json.dumps(rollup.to_json()))
    text = (out / "nightly.md").read_text()
    assert "| numpy=2.x,lane=gpu |  | failed | timed out after 60 s |" in text
    assert "- numpy=1.26,lane=gpu-racecheck: sanitizer lanes run once" in text


def test_a_lane_judged_with_the_expectations_in_force(tmp_path: Path) -> None:
    """A lane's journal holds the backend's own Fail: a live expectation waives it, an expired one does not."""
    def failing(combo: Combination, lane_out: Path, log: Path) -> int:
        write_journal(lane_out / "gpu.jsonl", "gpu", [(case_id("numba"), Status.FAIL)])
        return 0

    outcomes = []
    for expires in ("2099-01-01", "2026-01-01"):
        waivers = tmp_path / f"{expires}.toml"
        waivers.write_text(f'schema = 1\n[[expect]]\ncases = "{case_id("numba")}"\nstatus = "Fail"\n'
                           f'bug = "https://bugs.example/8"\nexpires = {expires}\nreason = "known"\n')
        rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / expires, probes(), runner=failing,
                             only="numpy=2.x,lane=gpu", night=Night(expectations=waivers))
        outcomes += [(r.outcome, r.reason) for r in rollup.results if r.id == "numpy=2.x,lane=gpu"]
    assert outcomes == [("passed", ""), ("failed", "exit status 0, but 1 verdicts are not accepted")]


def test_a_lane_that_leaves_no_journal_fails(tmp_path: Path) -> None:
    rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(),
                         runner=lambda combo, lane_out, log: 0, only="*lane=host")
    assert [r.reason for r in rollup.results if r.outcome == "failed"] == [
        "exit status 0, but it left no journal in lanes/numpy-1.26_lane-host",
        "exit status 0, but it left no journal in lanes/numpy-2.x_lane-host"]


def test_a_journal_left_by_an_earlier_night_does_not_count(tmp_path: Path) -> None:
    out, only = tmp_path / "out", "numpy=2.x,lane=host"
    run_nightly(load_matrix(matrix(tmp_path)), out, probes(), runner=passing, only=only)
    rollup = run_nightly(load_matrix(matrix(tmp_path)), out, probes(), runner=lambda combo, lane_out, log: 0,
                         only=only)
    assert [r.reason for r in rollup.results if r.outcome == "failed"] == [
        "exit status 0, but it left no journal in lanes/numpy-2.x_lane-host"]


def test_a_lane_whose_journals_hold_no_verdict_fails(tmp_path: Path) -> None:
    def empty(combo: Combination, lane_out: Path, log: Path) -> int:
        write_journal(lane_out / "host.jsonl", "host", [])
        return 0

    rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=empty,
                         only="numpy=2.x,lane=host")
    assert [r.reason for r in rollup.results if r.outcome == "failed"] == [
        "exit status 0, but its journals hold no verdict"]


def test_only_and_dry_run(tmp_path: Path) -> None:
    def never(combo: Combination, lane_out: Path, log: Path) -> int:
        raise AssertionError("a dry run runs nothing")

    rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=never,
                         only="*lane=gpu*", dry_run=True)
    assert [(r.outcome, r.reason) for r in rollup.results] == [
        ("not run", "not selected by --only *lane=gpu*"), ("runnable", "dry run: this machine can run it"),
        ("not run", "not selected by --only *lane=gpu*"), ("runnable", "dry run: this machine can run it"),
        ("runnable", "dry run: this machine can run it")]
    assert not rollup.failed


FAKE_LANE = """
import os, sys
from pathlib import Path
from harness.journal import CaseRecord, EndRecord, JournalWriter, SessionRecord
from harness.statuses import Status
lane, out = sys.argv[1:]
print("numpy spec", os.environ["COOP_NUMPY_SPEC"], "out", os.environ["COOP_LANE_OUT"] == out)
with JournalWriter(Path(out) / "journal.jsonl") as w:
    w.write(SessionRecord(lane, "pr", 7, ("numba",)))
    w.write(CaseRecord("block.load/numba/dtype=int32,block=32,ipt=1,alg=direct", Status.PASS, lane))
    w.write(EndRecord({}))
"""


def test_the_command_runner_fills_the_template_and_sets_the_environment(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "lane.py"
    script.write_text(FAKE_LANE)
    command = f'"{sys.executable}", "{script}", "{{lane}}", "{{out}}"'
    out = tmp_path / "out"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))  # the fake lane imports the harness
    rollup = run_nightly(load_matrix(matrix(tmp_path, command)), out, probes(), only="numpy=1.26,lane=host")
    [ran] = [r for r in rollup.results if r.outcome != "not run"]
    assert (ran.outcome, ran.returncode, ran.verdicts["accepted"]) == ("passed", 0, 1)  # type: ignore[index]
    log = (out / ran.log).read_text()  # type: ignore[operator]
    assert log.splitlines() == [f"$ {sys.executable} {script} host {out}/lanes/numpy-1.26_lane-host",
                                "numpy spec numpy<2 out True"]


def test_the_command_runner_kills_a_lane_past_its_timeout(tmp_path: Path) -> None:
    combo = load_matrix(matrix(tmp_path, f'"{sys.executable}", "-c", "import time; time.sleep(30)"')).expand()[0][0]
    runner = CommandRunner(timeout_s=0.5, contracts=tmp_path, envs=tmp_path / "envs")
    assert runner(combo, tmp_path / "j.jsonl", tmp_path / "l.log") is None


def test_a_command_that_cannot_start_is_an_error(tmp_path: Path) -> None:
    combo = load_matrix(matrix(tmp_path, '"no-such-tox-here"')).expand()[0][0]
    with pytest.raises(ReportError, match="nightly: cannot start 'no-such-tox-here'"):
        CommandRunner(5, tmp_path, tmp_path / "envs")(combo, tmp_path / "j.jsonl", tmp_path / "l.log")


def test_a_toolchain_that_cannot_be_installed_is_the_lanes_status(tmp_path: Path) -> None:
    """The installer's why becomes the lane's status; its command never runs, and the other lanes go on."""
    def installer(combo: Combination, env: Path, log: Path) -> dict[str, str] | str:
        log.write_text("pip: no matching distribution\n")
        if combo.values["numpy"] == "1.26":
            return "toolchain unavailable: installing the pins failed (exit 1): no matching distribution"
        return {"numpy": "2.4.6"}

    ran: list[str] = []

    def runner(combo: Combination, lane_out: Path, log: Path) -> int:
        ran.append(combo.id)
        return passing(combo, lane_out, log)

    rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=runner,
                         only="*lane=host", installer=installer)
    assert [(r.id, r.outcome, r.reason, r.toolchain) for r in rollup.results if r.outcome != "not run"] == [
        ("numpy=1.26,lane=host", "toolchain unavailable",
         "toolchain unavailable: installing the pins failed (exit 1): no matching distribution", {}),
        ("numpy=2.x,lane=host", "passed", "", {"numpy": "2.4.6"})]
    assert ran == ["numpy=2.x,lane=host"] and rollup.failed
    assert rollup.totals()["toolchain unavailable"] == 1
    text = (tmp_path / "out" / "nightly.md").read_text()
    assert "| numpy=2.x,lane=host | numpy 2.4.6 | passed |" in text


def test_the_venv_installer_reports_the_step_that_failed(tmp_path: Path) -> None:
    """A real fresh environment: a missing interpreter, then a missing wheels folder, each named with its step."""
    combo = load_matrix(matrix(tmp_path)).expand()[0][0]  # needs python:3.99
    assert VenvInstaller(dist=tmp_path / "no-dist")(combo, tmp_path / "env", tmp_path / "install.log") == (
        "toolchain unavailable: creating the environment: cannot start 'python3.99': No such file or directory")
    installer = VenvInstaller(dist=tmp_path / "no-dist", interpreter=lambda combo: sys.executable)
    why = installer(combo, tmp_path / "env", tmp_path / "install.log")
    assert isinstance(why, str)
    assert why.startswith("toolchain unavailable: installing the fresh wheels failed (exit ")
    assert "no-dist" in why


def test_the_probe_names_a_module_that_does_not_import(tmp_path: Path) -> None:
    wanted = json.dumps({"imports": ["json", "no_such_module_here"], "dists": []})
    done = subprocess.run([sys.executable, "-P", "-c", PROBE, wanted], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and done.stderr.strip() == (
        "import no_such_module_here: ModuleNotFoundError: No module named 'no_such_module_here'")
    found = subprocess.run([sys.executable, "-P", "-c", PROBE, json.dumps({"imports": ["json"], "dists": ["pytest"]})],
                           capture_output=True, text=True, check=True)
    assert json.loads(found.stdout) == {"pytest": pytest.__version__}


def test_each_lane_is_compared_with_the_baseline(tmp_path: Path) -> None:
    """A case Pass in the baseline that fails now, or that is missing now, is a regression of its lane."""
    good, bad, gone = case_id("numba"), case_id("cutlass"), case_id("rustfatbin")
    baseline = {"gpu": {good: (Status.PASS, True), bad: (Status.PASS, True), gone: (Status.PASS, True)}}

    def runner(combo: Combination, lane_out: Path, log: Path) -> int:
        write_journal(lane_out / "gpu.jsonl", "gpu", [(good, Status.PASS), (bad, Status.FAIL)])
        return 0

    rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=runner,
                         only="numpy=2.x,lane=gpu", night=Night(baseline=baseline))
    [lane] = [r for r in rollup.results if r.outcome != "not run"]
    assert (lane.regressions, lane.flakes) == (2, 0)
    assert "| 1/2 | Pass 1, Fail 1 | " in (tmp_path / "out" / "nightly.md").read_text()


def test_a_stopped_lane_counts_the_cases_it_never_reached_apart_from_its_regressions(tmp_path: Path) -> None:
    """A lane stopped by a signal or its limit left the rest of its cases unrun: they are not reached, not
    regressions; a case it did run and fail still is one."""
    good, bad, gone = case_id("numba"), case_id("cutlass"), case_id("rustfatbin")
    baseline = {"gpu": {good: (Status.PASS, True), bad: (Status.PASS, True), gone: (Status.PASS, True)}}

    def runner(combo: Combination, lane_out: Path, log: Path) -> int:
        write_journal(lane_out / "gpu.jsonl", "gpu", [(good, Status.PASS), (bad, Status.FAIL)], ended=False)
        return -15

    rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=runner,
                         only="numpy=2.x,lane=gpu", night=Night(baseline=baseline))
    [lane] = [r for r in rollup.results if r.outcome != "not run"]
    assert (lane.outcome, lane.regressions, lane.unreached) == ("failed", 1, 1)
    assert "| 1 (+1 not reached) |" in (tmp_path / "out" / "nightly.md").read_text()


def test_the_cases_a_stopped_lane_never_reached_are_no_first_bad_night(tmp_path: Path) -> None:
    """Night 2's lane was stopped after one of its two cases: the other is absent because it was not reached, which
    the roll-up says, and neither marks night 2 as its first bad night nor enters the bisect lines."""
    history_file, stopped = tmp_path / "history.jsonl", {"now": False}
    reached, unreached = case_id("numba"), case_id("cutlass")

    def runner(combo: Combination, lane_out: Path, log: Path) -> int:
        cases = [(reached, Status.PASS)] + ([] if stopped["now"] else [(unreached, Status.PASS)])
        write_journal(lane_out / "lane.jsonl", "host", cases, ended=not stopped["now"])
        return -15 if stopped["now"] else 0

    for name in ("n1", "n2"):
        stopped["now"] = name == "n2"
        rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=runner,
                             only="numpy=2.x,lane=host", night=Night(history=history_file, name=name))
    assert [(t.id, t.was, t.now, t.regression, t.unreached) for t in rollup.transitions] == [
        (unreached, "Pass", None, False, True)]
    text = (tmp_path / "out" / "nightly.md").read_text()
    assert "| Pass | (absent) | n1 | n2 (not reached: the lane was stopped) | 1 |" in text
    assert "first bad night" not in text and not rollup.bisect


@pytest.mark.usefixtures("model_backend")
def test_two_nights_show_the_planted_transition_with_its_night_and_lane(
        tmp_path: Path, small_contracts: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Night 2 enables a model mutant in one lane: only its cases change, on night 2, in that lane; the bisect
    lines re-run exactly them on the toolchain of each night, with the environment the combination sets."""
    def runner(combo: Combination, lane_out: Path, log: Path) -> int:
        if combo.values["numpy"] == "2.x" and night == "night-2":
            monkeypatch.setenv(FAULT_ENV, f"corrupt:{BROKEN}")
        else:
            monkeypatch.delenv(FAULT_ENV, raising=False)
        return harness_main(["run", "--lane", "simulator", "--backend", "model", "--contracts", str(small_contracts),
                             "--profile", "smoke", "--no-isolate", "--journal", str(lane_out / "lane.jsonl")])

    def installer(combo: Combination, env: Path, log: Path) -> dict[str, str]:
        return {"numpy": "2.4.6" if night == "night-2" else "2.4.5"}

    history_file, out = tmp_path / "history.jsonl", tmp_path / "out"
    for night in ("night-1", "night-2"):
        rollup = run_nightly(load_matrix(matrix(tmp_path)), out, probes(), runner=runner, only="*lane=host",
                             installer=installer, night=Night(history=history_file, name=night))
    changed = {(t.combination, t.lane, t.since, t.night, t.was, t.now, t.regression) for t in rollup.transitions}
    assert changed == {("numpy=2.x,lane=host", "simulator", "night-1", "night-2", "Pass", "Fail", True)}
    ids = sorted(t.id for t in rollup.transitions)
    assert ids and all(BROKEN.split("__")[1] in i for i in ids)
    assert [r.outcome for r in rollup.results if r.outcome != "not run"] == ["passed", "failed"]
    text = (out / "nightly.md").read_text()
    # One row per kind of change, its count and first cases: a night that lost a million cases stays readable;
    # the JSON keeps every one.
    shown = "; ".join(md_text(i) for i in ids[:3]) + (f" (+{len(ids) - 3} more)" if len(ids) > 3 else "")
    kind = "| numpy=2.x,lane=host | simulator | Pass | Fail | night-1 | night-2 (first bad night) |"
    row = f"{kind} {len(ids)} | {shown} |"
    assert row in text
    kinds = json.loads((out / "nightly.json").read_text())["transitions"]
    assert sorted(i for kind in kinds for i in unpack(kind["ids"], "transitions")) == ids
    ids_file = out / "bisect" / "numpy-2.x_lane-host_simulator.ids.txt"
    assert ids_file.read_text().split() == ids
    script = (out / "bisect.sh").read_text().splitlines()
    assert script[1:] == [
        "# the toolchain of night-1 (last good): numpy==2.4.5",
        f"python -m venv bisect-good && python -m wheels.install --dist wheels/dist --python bisect-good/bin/python"
        f" && python -m pip --python bisect-good/bin/python install numpy==2.4.5 && env 'COOP_NUMPY_SPEC=numpy>=2'"
        f" bisect-good/bin/python -P -m harness run --lane simulator --profile smoke --seed 20261129 --max-blocks"
        f" 4096 --arch sm_90 --ids-file {ids_file} --journal bisect-good/simulator.jsonl",
        "# the toolchain of night-2 (first bad): numpy==2.4.6",
        script[4]]
    assert "bisect-bad/bin/python install numpy==2.4.6" in script[4]


def test_a_torn_history_line_is_dropped_and_the_next_night_appends_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    append_night(path, {"night": "1", "lanes": {}})
    with path.open("a") as fh:
        fh.write('{"schema": 1, "kind": "coop-nigh')  # a nightly killed mid-append
    assert [n["night"] for n in read_history(path)] == ["1"]
    append_night(path, {"night": "2", "lanes": {}})
    assert [n["night"] for n in read_history(path)] == ["1", "2"]
    path.write_text('{"torn": \n' + path.read_text())
    with pytest.raises(ReportError, match=r"history.jsonl:1: not a JSON line"):
        read_history(path)


def test_a_lanes_command_runs_inside_its_fresh_environment(tmp_path: Path) -> None:
    """{env} names the lane's environment, whose bin folder comes first on PATH, as an activated one's would."""
    command = '"{env}/bin/python", "-c", "import os, sys; print(os.environ[\'VIRTUAL_ENV\'], os.environ[\'PATH\'])"'
    combo = load_matrix(matrix(tmp_path, command)).expand()[0][0]
    envs = tmp_path / "envs"
    (envs / combo.slug / "bin").mkdir(parents=True)
    (envs / combo.slug / "bin" / "python").symlink_to(sys.executable)
    assert CommandRunner(60, tmp_path, envs)(combo, tmp_path, tmp_path / "l.log") == 0
    ran, printed = (tmp_path / "l.log").read_text().splitlines()
    assert ran.startswith(f"$ {envs / combo.slug}/bin/python -c ")
    assert printed.startswith(f"{envs / combo.slug} {envs / combo.slug}/bin{os.pathsep}")


def test_a_night_split_over_several_runs_is_one_night_with_one_rollup(tmp_path: Path) -> None:
    """Each run takes one lane (a GPU call lasts 10 minutes at most), each in a folder of its own: the history holds
    one night, and the last run's roll-up shows every lane run that night, not only its own."""
    history_file = tmp_path / "history.jsonl"
    for i, only in enumerate(("numpy=1.26,lane=host", "numpy=2.x,lane=host", "numpy=2.x,lane=gpu")):
        rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / f"out-{i}", probes(), runner=passing,
                             only=only, night=Night(history=history_file, name="n1"))
    assert [n["night"] for n in nights(read_history(history_file))] == ["n1"]
    assert [(r.id, r.outcome) for r in rollup.results] == [
        ("numpy=1.26,lane=host", "passed"), ("numpy=1.26,lane=gpu", "not run"), ("numpy=2.x,lane=host", "passed"),
        ("numpy=2.x,lane=gpu", "passed"), ("numpy=2.x,lane=gpu-racecheck", "not run")]
    first = rollup.results[0]
    assert (first.verdicts, first.journals) == ({"total": 1, "accepted": 1, "statuses": {"Pass": 1}},
                                                ["lanes/numpy-1.26_lane-host/lane.jsonl"])
    assert rollup.results[1].reason == "not selected by --only numpy=2.x,lane=gpu"
    assert not rollup.failed
    assert json.loads((tmp_path / "out-2" / "nightly.json").read_text())["totals"]["passed"] == 3
    # a run selecting no lane runs nothing, appends nothing, and rolls up the night so far
    again = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out-3", probes(), runner=passing, only="none",
                        night=Night(history=history_file, name="n1"))
    ran = [r for r in rollup.results if r.outcome != "not run"]
    assert [r for r in again.results if r.outcome != "not run"] == ran and len(read_history(history_file)) == 3


def test_a_lane_run_again_the_same_night_replaces_its_earlier_run(tmp_path: Path) -> None:
    history_file, only = tmp_path / "history.jsonl", "numpy=2.x,lane=host"
    run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=lambda c, o, log: 3, only=only,
                night=Night(history=history_file, name="n1"))
    rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=passing, only=only,
                         night=Night(history=history_file, name="n1"))
    assert [(r.id, r.outcome) for r in rollup.results if r.outcome != "not run"] == [(only, "passed")]
    assert rollup.transitions == []  # a re-run within the night is no status change


def test_a_run_stopped_midway_keeps_the_lanes_it_finished(tmp_path: Path) -> None:
    """A call that runs out of time stops the nightly between lanes or inside one: each finished lane is in the
    history and the roll-up already."""
    def runner(combo: Combination, lane_out: Path, log: Path) -> int:
        if combo.id == "numpy=2.x,lane=host":
            raise KeyboardInterrupt  # stopped from outside
        return passing(combo, lane_out, log)

    history_file, out = tmp_path / "history.jsonl", tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_nightly(load_matrix(matrix(tmp_path)), out, probes(), runner=runner, only="*lane=host",
                    night=Night(history=history_file, name="n1"))
    [night] = nights(read_history(history_file))
    assert list(night["lanes"]) == ["numpy=1.26,lane=host"]
    saved = json.loads((out / "nightly.json").read_text())
    assert [(lane["id"], lane["outcome"]) for lane in saved["lanes"]][:1] == [("numpy=1.26,lane=host", "passed")]


def test_a_lane_stops_at_its_own_limit_or_at_the_runs_when_lower(tmp_path: Path) -> None:
    """A value's timeout_s bounds its lane; --lane-timeout bounds every lane of the run (the call's budget)."""
    path = matrix(tmp_path, f'"{sys.executable}", "-c", "import time; time.sleep(30)"')
    path.write_text(path.read_text().replace('{ name = "host", needs', '{ name = "host", timeout_s = 0.5, needs'))
    mat = load_matrix(path)
    started = time.monotonic()
    own = run_nightly(mat, tmp_path / "a", probes(), only="numpy=2.x,lane=host")
    capped = run_nightly(mat, tmp_path / "b", probes(), only="numpy=2.x,lane=gpu", lane_timeout=0.5)
    assert time.monotonic() - started < 20
    assert [r.reason for r in (*own.results, *capped.results) if r.outcome == "failed"] == [
        "timed out after 0.5 s", "timed out after 0.5 s"]


def test_the_venv_installer_installs_no_deps_pins_apart(tmp_path: Path) -> None:
    """Pins of a value marked no_deps go in without their requirements, the others with theirs."""
    path = matrix(tmp_path)
    path.write_text(path.read_text().replace('requires = ["numpy<2"]', 'requires = ["numpy<2"], no_deps = true')
                    .replace('{ name = "host", needs', '{ name = "host", requires = ["pytest>=8"], needs'))
    combo = load_matrix(path).expand()[0][0]
    env = tmp_path / "env"
    steps = VenvInstaller(dist=tmp_path / "dist", wheel_args=("--no-deps",), system_site=True).steps(combo, env)
    assert [what for what, _ in steps] == ["creating the environment", "installing the fresh wheels",
                                           "installing the pins", "installing the pins without their requirements",
                                           "importing the toolchain"]
    assert "--system-site-packages" in steps[0][1] and steps[1][1][-1] == "--no-deps"
    assert steps[2][1][-2:] == ["--quiet", "pytest>=8"]
    assert steps[3][1][-3:] == ["--quiet", "--no-deps", "numpy<2"]


def _changing(night_of: dict[str, str]) -> LaneRunner:
    """A runner whose one case passes, fails, or leaves no journal (times out), by the night being run."""
    def runner(combo: Combination, lane_out: Path, log: Path) -> int | None:
        status = night_of["now"]
        if status == "timeout":
            return None
        write_journal(lane_out / "lane.jsonl", "host", [(case_id("numba"), Status(status))])
        return 0
    return runner


def test_a_night_without_verdicts_hides_no_status_change(tmp_path: Path) -> None:
    """Night 2 timed out (no journal): night 3's Fail is still a change since night 1, the last night with verdicts."""
    history_file, now = tmp_path / "history.jsonl", {"now": ""}
    for name, status in (("n1", "Pass"), ("n2", "timeout"), ("n3", "Fail")):
        now["now"] = status
        rollup = run_nightly(load_matrix(matrix(tmp_path)), tmp_path / "out", probes(), runner=_changing(now),
                             only="numpy=2.x,lane=host", night=Night(history=history_file, name=name))
    assert [(t.was, t.now, t.since, t.night, t.regression) for t in rollup.transitions] == [
        ("Pass", "Fail", "n1", "n3", True)]


def test_the_bisect_lines_install_each_nights_own_wheels(tmp_path: Path) -> None:
    """Night 2's wheels came from another source (the change under suspicion): the last good night's re-run installs
    night 1's wheels, the first bad night's night 2's, each as the nightly built its environments."""
    history_file, now = tmp_path / "history.jsonl", {"now": ""}
    path = matrix(tmp_path)  # numpy 2.x pinned without its requirements: so is the bisect's pin
    path.write_text(path.read_text().replace('requires = ["numpy>=2"]', 'requires = ["numpy>=2"], no_deps = true'))
    rebuild = VenvInstaller(dist=tmp_path / "unused", wheel_args=("--no-deps",), system_site=True).rebuild
    for name, status in (("n1", "Pass"), ("n2", "Fail")):
        now["now"] = status
        (tmp_path / f"dist-{name}").mkdir()
        (tmp_path / f"dist-{name}" / "manifest.json").write_text(json.dumps(
            {"schema": 1, "source_commit": f"{name}c0ffee" * 4, "dirty": name == "n2", "toolchain": {}, "wheels": []}))
        rollup = run_nightly(load_matrix(path), tmp_path / "out", probes(), runner=_changing(now),
                             only="numpy=2.x,lane=host", night=Night(history=history_file, name=name,
                                                                     dist=tmp_path / f"dist-{name}"),
                             installer=lambda combo, env, log: {"numpy": "2.4.6"}, rebuild=rebuild)
    good, bad = rollup.bisect[2], rollup.bisect[4]
    assert good.startswith("python -m venv --system-site-packages bisect-good && python -m wheels.install --dist "
                           f"{tmp_path / 'dist-n1'} --python bisect-good/bin/python --no-deps && ")
    assert f"--dist {tmp_path / 'dist-n2'} " in bad
    assert " && python -m pip --python bisect-bad/bin/python install --no-deps numpy==2.4.6 && " in bad
    assert rollup.bisect[1] == "# the toolchain of n1 (last good): numpy==2.4.6; wheels n1c0ffeen1c0 (dist-n1)"
    assert rollup.bisect[3] == ("# the toolchain of n2 (first bad): numpy==2.4.6; wheels n2c0ffeen2c0 + changes"
                                " (dist-n2)")


def test_a_lanes_journals_record_the_manifest_of_the_nights_wheels(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint reads the manifest named by COOP_WHEEL_MANIFEST: a night installing another dist's wheels
    must not record the manifest of wheels/dist (tox sets that one for every environment)."""
    monkeypatch.setenv("COOP_WHEEL_MANIFEST", str(tmp_path / "wheels" / "dist" / "manifest.json"))
    command = '"' + sys.executable + '", "-c", "import os; print(os.environ[\'COOP_WHEEL_MANIFEST\'])"'
    out = tmp_path / "out"
    run_nightly(load_matrix(matrix(tmp_path, command)), out, probes(), only="numpy=2.x,lane=host",
                night=Night(dist=tmp_path / "dist-night-2"))
    assert (out / "logs" / "numpy-2.x_lane-host.log").read_text().splitlines()[1] == str(
        tmp_path / "dist-night-2" / "manifest.json")


def test_an_earlier_night_run_again_after_a_later_one_rolls_up_whole(tmp_path: Path) -> None:
    """A lane of night 1 re-run after night 2 began (a call that failed, tried again): night 1's roll-up still
    holds every lane of night 1."""
    history_file, mat = tmp_path / "history.jsonl", load_matrix(matrix(tmp_path))
    for name, only in (("n1", "numpy=1.26,lane=host"), ("n2", "numpy=1.26,lane=host"), ("n1", "numpy=2.x,lane=host")):
        rollup = run_nightly(mat, tmp_path / name, probes(), runner=passing, only=only,
                             night=Night(history=history_file, name=name))
    assert [r.id for r in rollup.results if r.outcome == "passed"] == ["numpy=1.26,lane=host", "numpy=2.x,lane=host"]


def test_the_roll_up_groups_status_changes_by_kind_with_their_first_cases() -> None:
    """A timed-out lane loses every case it did not reach: the Markdown shows one row per kind of change with its
    count and three cases (in id order), not a row per case."""
    def change(case: str, now: str | None, lane: str = "gpu") -> Transition:
        return Transition("numpy=2.3,lane=gpu-full", lane, case, "Pass", now, True, "night-1", "night-2")

    lost = [change(f"block.load/numba/c{i}", None) for i in (4, 0, 3, 1, 2)]
    rows = transition_rows([*lost, change("block.load/numba/c9", "Fail"), change("block.load/numba/c5", None, "x")])
    assert [(r["now"], r["lane"], r["cases"], r["first"]) for r in rows] == [
        (None, "gpu", 5, ["block.load/numba/c0", "block.load/numba/c1", "block.load/numba/c2"]),
        ("Fail", "gpu", 1, ["block.load/numba/c9"]),
        (None, "x", 1, ["block.load/numba/c5"])]



def test_the_json_rollup_keeps_every_changed_id_packed_by_kind_of_change() -> None:
    """A full lane stopped early loses 1.6 M ids on the H200: one JSON object per id made a 254 MB nightly.json.
    Each kind of change is one entry, its ids packed as the baseline packs them, and every id unpacks again."""
    lost = [caseid.render("block.load", "numba", [("dtype", dtype), ("block", block), ("ipt", ipt)])
            for dtype in ("int8", "int32", "float64") for block in range(32, 32 + 400) for ipt in range(1, 17)]
    changes = [Transition("numpy=2.3,lane=gpu-full", "gpu", i, "Pass", None, True, "night-1", "night-2") for i in lost]
    changes.append(Transition("numpy=2.3,lane=gpu-full", "gpu", lost[0].replace("int8", "int16"), "Pass", "Fail", True,
                              "night-1", "night-2"))
    text = json.dumps(Rollup("m", "now", [], [], transitions=changes).to_json())
    entries = json.loads(text)["transitions"]
    assert len(text) < 20_000
    assert [(e["now"], e["cases"]) for e in entries] == [(None, len(lost)), ("Fail", 1)]
    assert sorted(i for e in entries for i in unpack(e["ids"], "transitions")) == sorted(t.id for t in changes)
