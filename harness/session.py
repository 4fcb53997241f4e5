"""A run of one lane over backends and contracts, written to a journal that it can resume.

``run_worker`` does the work in this process; ``supervise`` runs it in a child process and, when
the child dies or stops making progress, charges the in-flight group (Crash / Timeout), keeps
everything recorded, and starts a new child that resumes after it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import coop

from harness.cases import DEFAULT_SEED, Case, group_by_kernel
from harness.contracts import Contract, load_contracts
from harness.engine import Engine
from harness.errors import HarnessError
from harness.expectations import Ledger, Verdict, load_expectations
from harness.fingerprint import fingerprint
from harness.journal import (
    CaseRecord,
    EndRecord,
    GroupRecord,
    JournalWriter,
    SessionRecord,
    final_cases,
    read_journal,
)
from harness.lanes import lane_cases, lane_kind
from harness.statuses import Status

#: The toolkit tag of a run, which expectations may name (``tags = { toolkit = ... }``).
TOOLKIT_ENV = "COOP_TOOLKIT"


@dataclass
class RunConfig:
    """What one run covers; the CLI and the pytest plugin build it from their options."""

    lane: str
    profile: str = "pr"
    seed: int = DEFAULT_SEED
    backends: list[str] = field(default_factory=list)
    contracts_dir: Path | None = None
    arch: str = "sm_90"
    max_blocks: int = 4096
    expectations: Path | None = None
    only_ids: frozenset[str] | None = None  # run just these (a re-run of chosen cases)
    shard: tuple[int, int] = (1, 1)  # (k, n): this run takes every n-th kernel group, from the k-th

    def session_record(self, env: dict[str, Any] | None = None) -> SessionRecord:
        """The journal's record of this run: what an identical re-run needs, and ``env`` (the fingerprint)."""
        return SessionRecord(self.lane, self.profile, self.seed, tuple(self.backends), env or {}, arch=self.arch,
                             max_blocks=self.max_blocks, toolkit=os.environ.get(TOOLKIT_ENV, ""))

    def ledger(self) -> Ledger:
        """The expectations of this run, tagged as its journal's session record tags it."""
        exps = load_expectations(self.expectations) if self.expectations else []
        return Ledger(exps, self.session_record().tags)

    def worker_args(self) -> list[str]:
        args = ["--lane", self.lane, "--profile", self.profile, "--seed", str(self.seed), "--arch", self.arch,
                "--max-blocks", str(self.max_blocks), "--shard", "{}/{}".format(*self.shard)]
        for backend in self.backends:
            args += ["--backend", backend]
        if self.contracts_dir is not None:
            args += ["--contracts", str(self.contracts_dir)]
        if self.expectations is not None:
            args += ["--expectations", str(self.expectations)]
        return args

    def write_only_ids(self, path: Path) -> list[str]:
        """Worker arguments that carry ``only_ids`` (through a file: there may be thousands)."""
        if self.only_ids is None:
            return []
        path.write_text("\n".join(sorted(self.only_ids)) + "\n", encoding="utf-8")
        return ["--only", str(path)]


def resolve_backends(names: list[str]) -> list[str]:
    """The named backends, or every installed one; an unknown name is an error listing the known."""
    installed = coop.available()
    if not names:
        if not installed:
            raise HarnessError("no coop backend is installed (entry-point group coop.backends is empty)")
        return installed
    unknown = [n for n in names if n not in installed]
    if unknown:
        raise HarnessError(f"unknown backend(s) {', '.join(unknown)}; installed: {', '.join(installed) or 'none'}")
    return names


def planned_groups(config: RunConfig, contracts: list[Contract]) -> list[tuple[str, list[Case]]]:
    """(backend, cases of one kernel spec) in run order: this shard's share of the lane.

    A shard takes a contiguous k-th slice of each backend's groups per contract: neighbouring kernel
    points share most compile-time parameters, so a backend whose kernels ignore some axis (numba's
    ignore the block shape) still compiles each kernel in about one shard, not in all of them.
    """
    k, n = config.shard
    groups = []
    for backend in config.backends:
        for contract in contracts:
            mine = list(group_by_kernel(lane_cases(contract, backend, config.profile, config.lane)))
            groups += [(backend, cases) for _spec, cases in mine[(k - 1) * len(mine) // n:k * len(mine) // n]]
    return groups


def run_worker(config: RunConfig, journal: Path) -> Counter[str]:
    """Run every case not yet recorded in ``journal``; returns the counts by the backends' own status."""
    started = time.perf_counter()
    lane_kind(config.lane)
    config.backends = resolve_backends(config.backends)
    contracts = load_contracts(config.contracts_dir)
    done = final_cases(read_journal(journal)) if journal.exists() else {}
    counts: Counter[str] = Counter(str(r.status) for r in done.values())
    with JournalWriter(journal) as writer:
        writer.write(config.session_record(fingerprint()))
        engines: dict[str, Engine] = {}
        for backend, cases in planned_groups(config, contracts):
            todo = [c for c in cases if c.id not in done and (config.only_ids is None or c.id in config.only_ids)]
            if not todo:
                continue
            if backend not in engines:
                activating = time.perf_counter()
                engines[backend] = Engine(coop.register(backend), config.lane, config.seed, writer.write,
                                          config.arch, config.max_blocks)
                engines[backend].phases["startup"] += time.perf_counter() - activating + (
                    activating - started if len(engines) == 1 else 0.0)
            writer.write(GroupRecord(todo[0].kernel_id, tuple(c.id for c in todo)))
            for record in engines[backend].run_group(todo[0].spec, todo):
                counts[str(record.status)] += 1
            writer.sync()
        writer.write(EndRecord(dict(counts), phases={b: _rounded(e.phases) for b, e in engines.items()}))
    return counts


def phase_totals(journals: list[Path]) -> dict[str, dict[str, float]]:
    """Seconds per backend and phase over every run (shard, resumed attempt) the journals record, most first."""
    totals: dict[str, defaultdict[str, float]] = {}
    for journal in journals:
        for record in read_journal(journal):
            if isinstance(record, EndRecord):
                for backend, phases in record.phases.items():
                    for phase, seconds in phases.items():
                        totals.setdefault(backend, defaultdict(float))[phase] += seconds
    return {b: dict(sorted(p.items(), key=lambda item: -item[1])) for b, p in totals.items()}


def _rounded(phases: dict[str, float]) -> dict[str, float]:
    return {phase: round(seconds, 3) for phase, seconds in sorted(phases.items())}


def _charge_inflight(journal: Path, status: Status, detail: str) -> int:
    """Record ``status`` for the cases of the last started group that have no verdict yet."""
    records = list(read_journal(journal))
    done = final_cases(records)
    groups = [r for r in records if isinstance(r, GroupRecord)]
    if not groups:
        return 0
    missing = [cid for cid in groups[-1].cases if cid not in done]
    lane = next((r.lane for r in reversed(records) if isinstance(r, SessionRecord)), "unknown")
    with JournalWriter(journal) as writer:
        for cid in missing:
            writer.write(CaseRecord(cid, status, lane, f"{detail} (group {groups[-1].kernel})"))
    return len(missing)


def _ended(journal: Path) -> bool:
    records = list(read_journal(journal)) if journal.exists() else []
    return bool(records) and isinstance(records[-1], EndRecord)


def supervise(config: RunConfig, journal: Path, group_timeout: float = 900.0, max_restarts: int = 50) -> None:
    """Run the lane in child processes until it ends; a dead or silent child costs one group."""
    restarts = 0
    python = [sys.executable, *(["-P"] if sys.flags.safe_path else [])]  # keep a -P run off the source tree
    cmd = [*python, "-m", "harness", "worker", *config.worker_args(), "--journal", str(journal),
           *config.write_only_ids(journal.with_suffix(".ids"))]
    while True:
        proc = subprocess.Popen(cmd)
        timed_out = _watch(proc, journal, group_timeout)
        if proc.returncode == 0 and _ended(journal):
            return
        if proc.returncode == 2 and not timed_out:  # a handled usage or input error: already printed
            raise HarnessError("the worker stopped on an error (see above); the journal keeps what it recorded")
        if timed_out:
            charged = _charge_inflight(journal, Status.TIMEOUT, f"no progress for {group_timeout:.0f} s")
        else:
            rc = proc.returncode
            how = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
            charged = _charge_inflight(journal, Status.CRASH, f"worker died with {how}")
        restarts += 1
        if restarts > max_restarts or charged == 0:
            raise HarnessError(f"{journal}: the worker keeps dying ({restarts} restarts); last run charged "
                               f"{charged} case(s); see the journal")
        print(f"harness: worker restarted after charging {charged} case(s); resuming", file=sys.stderr)


def _watch(proc: subprocess.Popen[bytes], journal: Path, timeout: float) -> bool:
    """Wait for ``proc``; kill it when the journal has not grown for ``timeout`` s. True if killed."""
    last_size, last_change = -1, time.monotonic()
    while proc.poll() is None:
        size = journal.stat().st_size if journal.exists() else 0
        if size != last_size:
            last_size, last_change = size, time.monotonic()
        elif time.monotonic() - last_change > timeout:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.2)
    return False


def resolve_journals(ledger: Ledger, journals: list[Path]) -> tuple[dict[str, Verdict], list[str]]:
    """The final verdicts of ``journals`` with the run's expectations applied, and the expectations' problems
    (expired, or matching no case)."""
    finals = {cid: record for journal in journals for cid, record in final_cases(read_journal(journal)).items()}
    return {cid: ledger.resolve(record) for cid, record in finals.items()}, ledger.problems()
