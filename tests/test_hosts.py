"""Shards on several hosts through execnet gateways: local ``popen`` gateways stand in for hosts, each installing
wheels built from this tree into a fresh environment; the model backend rides on ``PYTHONPATH`` (only it: the
harness the workers run is the installed wheel's, which the host's setup checks)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import coopcheck
import pytest

from harness.cli import main
from harness.contracts import load_contracts
from harness.journal import CaseRecord, GroupRecord, SessionRecord, final_cases, read_journal
from harness.scaling import group_costs
from harness.session import RunConfig, planned_groups
from tests.conftest import ROOT
from tests.support.model_backend import FAULT_ENV
from tests.test_session import CRASHING
from wheels.build import build_project, export_tree
from wheels.manifest import MANIFEST_NAME, Manifest, WheelRecord, write_manifest
from wheels.projects import discover
from wheels.wheelfile import sha256

#: The distributions a model-backend run needs installed: the base package and the harness.
NEEDED = ("coopcheck", "coopcheck-harness")

@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base package's and the harness's wheels, built from this tree, with their manifest."""
    scratch = tmp_path_factory.mktemp("hosts-dist")
    out, tree = scratch / "dist", scratch / "tree"
    out.mkdir()
    export_tree(ROOT, tree)
    records = []
    for project in (p for p in discover(tree) if p.name in NEEDED):
        wheel = build_project(project, tree, out, scratch, isolation=False)
        records.append(WheelRecord(wheel.name, wheel.version, wheel.path.name, sha256(wheel.path),
                                   str(project.directory), wheel.generator))
    write_manifest(Manifest(None, True, {}, tuple(records)), out / MANIFEST_NAME)
    return out


@pytest.fixture
def on_hosts(model_backend: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment a gateway (and its worker) inherits: the model backend's entry point and the ``tests``
    package on ``PYTHONPATH``, not the source tree's harness."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "tests").symlink_to(ROOT / "tests")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(model_backend), str(shim)]))
    (tmp_path / "hosts-tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "hosts-tmp"))  # where a host makes the run's folder
    return dict(os.environ)


def _common(contracts: Path) -> list[str]:
    return ["--lane", "simulator", "--backend", "model", "--contracts", str(contracts), "--profile", "full"]


def _verdicts(*journals: Path) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    merged: dict[str, CaseRecord] = {}
    for journal in journals:
        merged.update(final_cases(read_journal(journal)))
    return {cid: (str(r.status), r.detail, r.rules) for cid, r in merged.items()}


def _single(contracts: Path, tmp_path: Path) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    single = tmp_path / "single.jsonl"
    assert main(["run", *_common(contracts), "--journal", str(single), "--no-isolate"]) == 0
    return _verdicts(single)


@pytest.mark.usefixtures("on_hosts")
def test_shards_on_popen_hosts_merge_into_the_single_worker_run(small_contracts: Path, dist: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    single = _single(small_contracts, tmp_path)
    journal = tmp_path / "lane.jsonl"
    assert main(["run", *_common(small_contracts), "--journal", str(journal), "--hosts", "2*popen",
                 "--gpus", "3,5", "--dist", str(dist), "--balance-from", str(tmp_path / "single.jsonl")]) == 0
    out, err = capsys.readouterr()
    shards = [tmp_path / f"lane.shard{k}of4.jsonl" for k in (1, 2, 3, 4)]
    assert "4 worker(s) on 2 gateway(s) (popen), round-robin, each on GPU(s) 3, 5 of its host" in out
    assert all(final_cases(read_journal(s)) for s in shards)
    sessions = [r for s in shards for r in read_journal(s) if isinstance(r, SessionRecord)]
    manifest = json.loads((dist / MANIFEST_NAME).read_text())
    assert [s.shard for s in sessions] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [s.gpu for s in sessions] == ["3", "5", "3", "5"], "the shards of one host go round-robin over its GPUs"
    assert all(s.env["wheel_manifest"] == manifest for s in sessions), "the workers ran from the sent wheels"
    installed = [line.rsplit(" ", 1)[1] for line in err.splitlines() if "the run's wheels installed in" in line]
    assert len(installed) == 1, "one host (one spec): set up once for all of its gateways"
    assert Path(installed[0]).is_relative_to(tmp_path / "hosts-tmp")
    assert not list((tmp_path / "hosts-tmp").iterdir()), "the run's folder on the host is removed at the end"
    costs = group_costs([tmp_path / "single.jsonl"])
    for k, shard in enumerate(shards, start=1):  # each host's worker ran the cost-balanced share planned here
        planned = planned_groups(RunConfig("simulator", "full", backends=["model"], contracts_dir=small_contracts,
                                           shard=(k, 4), costs=costs), load_contracts(small_contracts))
        assert set(final_cases(read_journal(shard))) == {c.id for _backend, cases in planned for c in cases}
    assert _verdicts(*shards) == single


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the gateway to kill through /proc")
def test_a_host_lost_mid_run_keeps_what_came_back_and_a_resume_runs_only_the_rest(
        small_contracts: Path, dist: Path, tmp_path: Path, on_hosts: dict[str, str]) -> None:
    contracts = load_contracts(small_contracts)
    mine = planned_groups(RunConfig("simulator", "full", backends=["model"], contracts_dir=small_contracts,
                                    shard=(2, 2)), contracts)
    hung = coopcheck.kernel_symbol(mine[-1][1][0].spec, include_block=True)  # shard 2's last group; those before
    first = next(i for i, (_backend, cases) in enumerate(mine)  # it come back (the other shard has other blocks)
                 if hung in coopcheck.kernel_symbol(cases[0].spec, include_block=True))
    assert first > 0
    journal = tmp_path / "lane.jsonl"
    second = tmp_path / "lane.shard2of2.jsonl"
    command = [sys.executable, "-m", "harness", "run", *_common(small_contracts), "--journal", str(journal),
               "--hosts", "2*popen", "--dist", str(dist), "--group-timeout", "600"]
    proc = subprocess.Popen(command, cwd=ROOT, env={**on_hosts, FAULT_ENV: f"hang:{hung}"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while not (second.exists() and any(isinstance(r, GroupRecord) and r.kernel == mine[first][1][0].kernel_id
                                           for r in read_journal(second))):
            assert proc.poll() is None and time.monotonic() < deadline, "the hung group's record never came back"
            time.sleep(0.2)
        # the hung group's record came back while its worker runs: lines arrive as they are written
        workers = [pid for gateway in _children(proc.pid) for pid in _children(gateway)
                   if "--shard 2/2" in _cmdline(pid)]
        assert len(workers) == 1
        gateway = next(g for g in _children(proc.pid) if workers[0] in _children(g))
        os.kill(gateway, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, (out, err)
    assert "error: host popen (shard 2/2): lost mid-run" in err and f"--resume {journal} --jobs 2 (on any hosts" in err
    kept = final_cases(read_journal(second))
    assert kept and not any(cid in kept for cid in (c.id for c in mine[first][1]))
    planned = {c.id for _backend, cases in mine for c in cases}
    before = second.stat().st_size
    assert main(["run", *_common(small_contracts), "--resume", str(journal), "--jobs", "2", "--hosts", "popen",
                 "--dist", str(dist)]) == 0
    with second.open("rb") as fh:  # what the resume appended: the lost host's unfinished groups only
        fh.seek(before)
        tail = tmp_path / "tail.jsonl"
        tail.write_bytes(fh.read())
    assert set(final_cases(read_journal(tail))) == planned - set(kept)
    assert _verdicts(tmp_path / "lane.shard1of2.jsonl", second) == _single(small_contracts, tmp_path)


@pytest.mark.usefixtures("on_hosts")
@pytest.mark.parametrize(("spec", "tamper", "message"), [
    ("popen//python=/no/such/python3", False, "host popen//python=/no/such/python3 (shard 1/1): cannot be reached"),
    ("popen", True, "host popen (shard 1/1): cannot verify the wheels: "),
    ("popen", False, "host popen (shard 1/1): cannot install the wheels: the worker's harness imports from "),
], ids=["unreachable", "tampered-wheel", "source-tree-on-pythonpath"])
def test_a_host_that_cannot_run_the_shard_is_named(small_contracts: Path, dist: Path, tmp_path: Path, spec: str,
                                                   tamper: bool, message: str, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    if "imports from" in message:  # a checkout's harness would shadow the wheel the host installed
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([os.environ["PYTHONPATH"], str(ROOT)]))
    if tamper:
        dist = Path(shutil.copytree(dist, tmp_path / "dist"))
        wheel = next(dist.glob("coopcheck_harness-*.whl"))
        wheel.write_bytes(wheel.read_bytes()[:-1])
    journal = tmp_path / "lane.jsonl"
    assert main(["run", *_common(small_contracts), "--journal", str(journal), "--hosts", spec,
                 "--dist", str(dist)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and f"continue the run with --resume {journal}" in err
    assert ("sha256 is" in err) == tamper
    assert not journal.exists() or not final_cases(read_journal(journal))
    assert not list((tmp_path / "hosts-tmp").iterdir()), "a host that failed its setup keeps no folder"


@pytest.mark.parametrize(("argv", "message"), [
    (["--hosts", "bogus=1"], "an execnet spec starts with one of popen"),
    (["--hosts", "0*popen"], "write N*SPEC with N at least 1"),
    (["--hosts", "popen", "--gpus", "all"], "name the GPU ids every host has"),
    (["--hosts", "popen", "--no-isolate"], "leave out --no-isolate"),
])
def test_host_options_it_cannot_use_are_refused_before_anything_runs(argv: list[str], message: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--lane", "host", "--journal", str(tmp_path / "j.jsonl"), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "j.jsonl").exists()


def _sshd() -> str | None:
    return shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if Path(p).is_file()),
                                        None)


@pytest.mark.skipif(_sshd() is None, reason="no sshd on this machine: an ssh gateway to localhost needs one "
                    "(started by the test as this user, on a free port)")
@pytest.mark.usefixtures("on_hosts")
def test_an_ssh_gateway_to_localhost_runs_a_shard(small_contracts: Path, dist: Path, tmp_path: Path) -> None:
    keys = Path(tempfile.mkdtemp(prefix="coop-ssh-"))  # sshd refuses keys in a group-writable folder
    os.chmod(keys, 0o700)
    for name in ("host", "user"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    shutil.copy(keys / "user.pub", keys / "authorized_keys")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sshd = subprocess.Popen([str(_sshd()), "-D", "-e", "-p", str(port), "-h", str(keys / "host"),
                             "-o", f"AuthorizedKeysFile={keys / 'authorized_keys'}", "-o", "StrictModes=no",
                             "-o", f"PidFile={keys / 'pid'}", "-o", "ListenAddress=127.0.0.1"])
    try:
        time.sleep(1)
        if sshd.poll() is not None:
            pytest.skip(f"sshd would not start as this user (exit status {sshd.returncode})")
        spec = (f"ssh=-p {port} -i {keys / 'user'} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                f"127.0.0.1//python={sys.executable}//env:PYTHONPATH={os.environ['PYTHONPATH']}")
        journal = tmp_path / "lane.jsonl"
        assert main(["run", *_common(small_contracts), "--journal", str(journal), "--hosts", spec,
                     "--dist", str(dist)]) == 0
        assert _verdicts(journal) == _single(small_contracts, tmp_path)
    finally:
        sshd.kill()
        sshd.wait()
        shutil.rmtree(keys, ignore_errors=True)


#: A kernel the model backend hangs in when told to (numba-style symbols leave out the block shape).
HANGING = "coop_block_store__int16__ipt1__direct"


@pytest.mark.usefixtures("on_hosts")
def test_a_worker_that_crashes_or_hangs_on_a_host_costs_its_group_and_restarts_there(
        small_contracts: Path, dist: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(FAULT_ENV, f"crash:{CRASHING},hang:{HANGING}")
    journal = tmp_path / "lane.jsonl"
    assert main(["run", *_common(small_contracts), "--journal", str(journal), "--hosts", "popen",
                 "--dist", str(dist), "--group-timeout", "5"]) == 1
    finals = final_cases(read_journal(journal))
    charged = {status: {cid for cid, r in finals.items() if str(r.status) == status} for status in ("Crash", "Timeout")}
    assert charged["Crash"] and all(",ipt=3,alg=striped" in cid for cid in charged["Crash"])
    assert all("worker on host popen (shard 1/1) died with signal SIGSEGV" in finals[c].detail
               for c in charged["Crash"])
    assert charged["Timeout"] and all("dtype=int16,block=" in c and ",ipt=1,alg=direct" in c
                                      for c in charged["Timeout"])
    assert all(str(r.status) == "Pass" for cid, r in finals.items() if cid not in charged["Crash"] | charged["Timeout"])
    err = capsys.readouterr().err
    assert err.count("harness: worker on host popen (shard 1/1) restarted after charging") >= 2
