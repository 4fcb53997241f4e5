"""The fault sweep: runs with crash, hang, raise and corrupt faults planted in many kernel groups are killed at
random points (the run, its worker, a report, a bundle) and resumed; afterwards every case is recorded exactly
once, with the verdict its fault decides (or the Crash of a worker killed inside its group), and a report or a
bundle is whole or absent. The figures print at the end of the session (tests/faults/figures.py)."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import Counter
from pathlib import Path

import coopcheck
import pytest

from harness.cases import Case
from harness.cli import main
from harness.contracts import load_contracts
from harness.journal import CaseRecord, LaunchRecord, Record, read_journal
from harness.report.bundle import verify_bundle
from harness.report.qualification import FILES
from harness.report.render import render_html, render_markdown
from harness.session import RunConfig, planned_groups
from harness.statuses import Status
from tests.faults import figures
from tests.faults.runs import Children, alive, children_of, recorded, wait_until
from tests.support.model_backend import FAULT_ENV, planted_fault

#: One campaign per seed: the seed draws the planted faults, the kill points and the signals.
CAMPAIGNS = (11, 12, 13, 14)
#: Kernel symbols a campaign plants a fault in, per kind (a symbol names one or two kernel groups).
PLANTS = {"crash": 2, "hang": 1, "raise": 8, "corrupt": 8}
#: Kills of the run or of its worker per campaign.
KILLS = 6
GROUP_TIMEOUT = "1"
#: How a run is stopped: a signal to the run alone, or Ctrl-C (SIGINT to its whole process group).
STOPS = ("SIGKILL", "SIGTERM", "SIGINT", "Ctrl-C")
#: The detail of a verdict the supervisor charges to the group a killed worker was in.
KILLED = "worker died with signal SIGKILL"


def _plant(rng: random.Random, groups: list[list[Case]]) -> str:
    """The fault variable: ``PLANTS`` kernel symbols, a hang only in a symbol of one group (each costs a timeout)."""
    per_symbol = Counter(coopcheck.kernel_symbol(cases[0].spec) for cases in groups if cases[0].reject is None)
    hangs = rng.sample(sorted(s for s, n in per_symbol.items() if n == 1), PLANTS["hang"])
    others = [kind for kind, n in PLANTS.items() if kind != "hang" for _ in range(n)]
    symbols = rng.sample(sorted(set(per_symbol) - set(hangs)), len(others))
    return ",".join([f"hang:{s}" for s in hangs] + [f"{k}:{s}" for k, s in zip(others, symbols, strict=True)])


def _block0_riders(records: list[Record]) -> set[str]:
    """Cases judged from block 0 of their launch (what ``corrupt`` flips): in the last launch that held them."""
    first_of: dict[str, str] = {}
    riders = set()
    for record in records:
        if isinstance(record, LaunchRecord):
            first = record.cases[record.blocks[0] if record.blocks else 0]
            first_of.update(dict.fromkeys(record.cases, first))
        elif isinstance(record, CaseRecord) and first_of.get(record.id) == record.id:
            riders.add(record.id)
    return riders


def _right(kind: str, record: CaseRecord, block0: bool) -> bool:
    """Whether ``record`` is the verdict a case of a group with fault ``kind`` ('' for none) must get."""
    if kind == "crash":
        return record.status is Status.CRASH and "worker died with signal SIGSEGV" in record.detail
    if kind == "hang":
        return record.status is Status.TIMEOUT and f"no progress for {GROUP_TIMEOUT} s" in record.detail
    if kind == "raise":
        return record.status is Status.CRASH and "planted launch failure" in record.detail
    if kind == "corrupt":
        return record.status is (Status.FAIL if block0 else Status.PASS)
    return record.status is Status.PASS


class Campaign:
    """One journal: a run with faults planted, killed ``KILLS`` times at random points, resumed after each."""

    def __init__(self, seed: int, children: Children, lane: list[str], contracts: Path, journal: Path) -> None:
        self.rng = random.Random(seed)
        self.children, self.lane, self.journal = children, lane, journal
        config = RunConfig(lane="simulator", profile="full", backends=["model"], contracts_dir=contracts)
        self.groups = [cases for _, cases in planned_groups(config, load_contracts(contracts))]
        self.faults = _plant(self.rng, self.groups)
        self.kills: Counter[str] = Counter()
        self.orphans = 0  # workers that outlived the run they belonged to

    def run(self) -> int | None:
        """Run to the end through the kills; the last run's exit status (None: it did not end in time)."""
        total = sum(len(cases) for cases in self.groups)
        run = self.children.start("run", *self.lane, "--journal", self.journal, "--group-timeout", GROUP_TIMEOUT)
        for threshold in sorted(self.rng.uniform(0.05, 0.85) * total for _ in range(KILLS)):
            if not wait_until(lambda t=threshold, r=run: r.poll() is not None or self._verdicts() >= t, 120, 0.05):
                return None
            time.sleep(self.rng.uniform(0, 0.3))
            if run.poll() is not None:
                break
            if self.rng.random() < 0.5:
                self._kill_worker(run.pid)
            else:
                self._stop(run.pid, self.rng.choice(STOPS))
                if self.children.wait(run, 30) is None:
                    return None
                run = self.children.start("run", *self.lane, "--resume", self.journal, "--group-timeout",
                                          GROUP_TIMEOUT)
        return self.children.wait(run, 120)

    def _verdicts(self) -> int:
        """Case records so far (counted, not parsed: this runs every few milliseconds beside the run)."""
        return self.journal.read_bytes().count(b'"type":"case"') if self.journal.exists() else 0

    def _kill_worker(self, run_pid: int) -> None:
        if wait_until(lambda: bool(children_of(run_pid)), 5):
            for worker in children_of(run_pid):
                os.kill(worker, signal.SIGKILL)
                self.kills["worker"] += 1

    def _stop(self, run_pid: int, how: str) -> None:
        workers = children_of(run_pid)
        self.children.seen.update(workers)
        if how == "Ctrl-C":
            os.killpg(run_pid, signal.SIGINT)
        else:
            os.kill(run_pid, getattr(signal, how))
        self.kills["run"] += 1
        self.orphans += sum(not wait_until(lambda w=w: not alive(w), 10) for w in workers)


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize("seed", CAMPAIGNS)
def test_every_case_is_recorded_once_with_its_verdict_through_faults_and_kills(
        seed: int, children: Children, lane: list[str], small_contracts: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    journal = tmp_path / "sweep.jsonl"
    campaign = Campaign(seed, children, lane, small_contracts, journal)
    monkeypatch.setenv(FAULT_ENV, campaign.faults)
    status = campaign.run()
    records = list(read_journal(journal))
    counts = Counter(r.id for r in records if isinstance(r, CaseRecord))
    finals = {r.id: r for r in records if isinstance(r, CaseRecord)}
    block0 = _block0_riders(records)
    planned = {c.id: c for cases in campaign.groups for c in cases}
    kinds = {cid: planted_fault(case.spec) if case.reject is None else "" for cid, case in planned.items()}
    killed = {cid for cid, r in finals.items() if r.status is Status.CRASH and KILLED in r.detail}
    wrong = [cid for cid, r in finals.items() if cid not in killed and not _right(kinds[cid], r, cid in block0)]
    faulted = [cases for cases in campaign.groups if kinds[cases[0].id]]
    preempted = [cases for cases in faulted if any(c.id in killed for c in cases)]
    injected = [cases for cases in faulted if cases not in preempted]
    survived = [cases for cases in injected if all(counts[c.id] == 1 and c.id not in wrong for c in cases)]
    killed_groups = {r.detail.rpartition("(group ")[2] for cid, r in finals.items() if cid in killed}
    lost = len(planned.keys() - counts.keys())
    kills = sum(campaign.kills.values())
    whole = status == 1 and not lost and not wrong and max(counts.values()) == 1 and not campaign.orphans
    figures.add(request.node, faults=len(injected), faults_survived=len(survived), faults_preempted=len(preempted),
                **{f"faults.{kind}": sum(kinds[g[0].id] == kind for g in injected) for kind in figures.FAULT_KINDS},
                kills=kills, kills_survived=kills if whole else 0,
                **{f"kills.{point}": n for point, n in campaign.kills.items()},
                cases=len(planned), lost=lost, wrong=len(wrong), duplicates=sum(n - 1 for n in counts.values()))
    assert status == 1, children.log(children.procs[-1])  # the faults make verdicts a lane does not accept
    assert campaign.orphans == 0, "a worker outlived the run it belonged to"
    assert lost == 0 and max(counts.values()) == 1 and wrong == []
    assert len(killed_groups) <= campaign.kills["worker"]  # a killed worker costs at most the group it was in
    assert main(["run", *lane, "--resume", str(journal), "--no-isolate"]) == 1  # a finished journal: nothing to add
    assert recorded(journal) == counts


def _report_state(out: Path, junit: dict[str, bytes]) -> str:
    """Which report ``out`` holds whole ('old', 'new'), 'absent', or 'mixed' (files of different reports)."""
    if not out.exists():
        return "absent"
    try:
        doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
        which = Path(doc["inputs"]["journals"][0]["name"]).stem
        whole = (sorted(p.name for p in out.iterdir()) == sorted(FILES)
                 and (out / "report.md").read_text(encoding="utf-8") == render_markdown(doc)
                 and (out / "report.html").read_text(encoding="utf-8") == render_html(doc)
                 and (out / "junit.xml").read_bytes() == junit[which])
    except (OSError, ValueError, KeyError):
        return "mixed"
    return which if whole else "mixed"


@pytest.mark.usefixtures("model_backend")
def test_a_report_or_bundle_killed_while_written_is_whole_or_absent(
        children: Children, lane: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest) -> None:
    """Kills at random points of ``report`` (over an older report) and ``bundle`` (folder and .tar.gz)."""
    rng = random.Random(15)
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    monkeypatch.setenv(FAULT_ENV, "corrupt:coop_block_load")
    assert main(["run", *lane, "--journal", str(old), "--no-isolate"]) == 1
    monkeypatch.delenv(FAULT_ENV)
    assert main(["run", *lane, "--journal", str(new), "--no-isolate"]) == 0
    junit = {}
    for name, journal in (("old", old), ("new", new)):
        assert main(["report", str(journal), "--out", str(tmp_path / name), "--no-expectations"]) == 1
        junit[name] = (tmp_path / name / "junit.xml").read_bytes()
    started = time.monotonic()
    timing = children.start("report", new, "--out", tmp_path / "timing", "--no-expectations")
    assert children.wait(timing, 60) == 1
    seconds = time.monotonic() - started
    states: Counter[str] = Counter()
    for i in range(4):
        out = tmp_path / f"report-{i}"
        assert main(["report", str(old), "--out", str(out), "--no-expectations"]) == 1
        proc = children.start("report", new, "--out", out, "--no-expectations")
        time.sleep(rng.uniform(0.4 * seconds, seconds))
        proc.kill()
        children.wait(proc, 30)
        states[_report_state(out, junit)] += 1
    for i in range(4):
        dest = tmp_path / (f"bundle-{i}.tar.gz" if i % 2 else f"bundle-{i}")
        proc = children.start("bundle", new, "--out", dest, "--no-expectations")
        time.sleep(rng.uniform(0.4 * seconds, seconds))
        proc.kill()
        children.wait(proc, 30)
        states["bundle absent" if not dest.exists() else "bundle whole" if verify_bundle(dest) == [] else
               "bundle broken"] += 1
    whole = states["old"] + states["new"] + states["bundle absent"] + states["bundle whole"]
    figures.add(request.node, kills=8, kills_survived=whole, **{"kills.report": 4, "kills.bundle": 4})
    assert whole == 8, states
