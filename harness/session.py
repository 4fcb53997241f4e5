"""A run of one lane over backends and contracts, written to a journal that it can resume.

``run_worker`` does the work in this process; ``supervise`` runs it in a child process and, when
the child dies or stops making progress, charges the in-flight group (Crash / Timeout), keeps
everything recorded, and starts a new child that resumes after it. The supervisor holds the
journal's lock for the whole run and hands it to each child, which ends as soon as its supervisor
is gone. An interrupt stops the run at once and charges nothing. A journal is resumed only by a
run of its own session (:func:`check_resume`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import coopcheck

from harness.cases import DEFAULT_SEED, Case, check_unique
from harness.contracts import Contract, contract_paths, load_contracts
from harness.engine import Engine
from harness.errors import HarnessError, Interrupted
from harness.expectations import Ledger, Verdict, load_expectations
from harness.fingerprint import fingerprint
from harness.gpus import VISIBLE_ENV
from harness.journal import (
    CaseRecord,
    EndRecord,
    GroupRecord,
    JournalLock,
    JournalWriter,
    Record,
    SessionRecord,
    final_cases,
    journal_ended,
    read_journal,
)
from harness.lanes import LANES, LAUNCH_BOUND, LazyGroup, lane_groups, lane_kind
from harness.progress import JournalTail, RunProgress
from harness.scaling import balance, contiguous, costs_of
from harness.statuses import Status

#: The toolkit tag of a run, which expectations may name (``tags = { toolkit = ... }``).
TOOLKIT_ENV = "COOP_TOOLKIT"
#: What a resumed run must share with its journal's session: the fields that decide which cases run and what
#: they are checked against (the time and the environment fingerprint may differ).
RESUMED = ("lane", "profile", "seed", "shard", "backends", "arch", "max_blocks", "toolkit", "contracts_sha256",
           "expectations_sha256", "balance_sha256")
#: A worker lost this many times in a row before it recorded a verdict stops the run: it would never get anywhere.
MAX_STALLS = 3
#: Host lanes: the kernels a batch of groups compiles, one disassembly for this many of them
#: (:mod:`harness.inspect.batched`: nvdisasm's start-up, not the listing, is most of a kernel's inspection).
INSPECT_CHUNK = 32
#: The exit status of a worker stopped by an interrupt (the shell's 128 + SIGINT).
INTERRUPTED = 130
#: Exit status of a supervised worker that ended between groups to be started afresh (over ``worker_memory``).
RECYCLED = 75
#: The least time a worker gets before it announces its first group: starting (imports, contracts, reading the
#: journal it resumes, activating a backend) is no kernel group, so a short --group-timeout never kills a
#: healthy worker that is starting.
STARTUP_SECONDS = 60.0


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
    shard: tuple[int, int] = (1, 1)  # (k, n): this run takes the k-th of n shares of the kernel groups
    #: Measured seconds per kernel group (:func:`harness.scaling.group_costs`): shards balanced by cost, not
    #: contiguous slices. The supervisor hands its workers the same table, so they plan the same shares.
    costs: dict[str, float] | None = None
    gpu: str | None = None  # the supervisor sets the worker's CUDA_VISIBLE_DEVICES to it; None: inherited
    #: Resident bytes past which a supervised worker ends between groups and its supervisor starts a fresh one
    #: (None: never). A backend's compiles may pile up in the process: the CuTe DSL keeps about 3 MB of every
    #: kernel it built, so one worker of cutlass's full host lane reached 17 GB.
    worker_memory: int | None = None

    def session_record(self, env: dict[str, Any] | None = None) -> SessionRecord:
        """The journal's record of this run: what an identical re-run or a resume needs, and ``env`` (the
        fingerprint)."""
        sums = "".join(f"{_sha256(path)}  {path.name}\n" for path in contract_paths(self.contracts_dir))
        return SessionRecord(self.lane, self.profile, self.seed, tuple(self.backends), env or {}, arch=self.arch,
                             max_blocks=self.max_blocks, toolkit=os.environ.get(TOOLKIT_ENV, ""), shard=self.shard,
                             contracts_sha256=hashlib.sha256(sums.encode()).hexdigest(),
                             expectations_sha256=_sha256(self.expectations) if self.expectations else "",
                             balance_sha256=_costs_sha256(self.costs), gpu=os.environ.get(VISIBLE_ENV, ""))

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
        if self.worker_memory is not None:
            args += ["--worker-memory", repr(self.worker_memory / 2**30)]
        return args

    def worker_files(self) -> dict[str, tuple[str, str]]:
        """What a worker reads from files besides its journal (there may be thousands of ids or groups): option ->
        (file suffix beside the journal, text); ``--only`` for ``only_ids``, ``--balance`` for ``costs``."""
        files = {}
        if self.only_ids is not None:
            files["--only"] = (".ids", "\n".join(sorted(self.only_ids)) + "\n")
        if self.costs is not None:
            files["--balance"] = (".costs.json", _costs_json(self.costs))
        return files

    def write_worker_files(self, journal: Path) -> list[str]:
        """Write :meth:`worker_files` beside ``journal``; the worker arguments that name them."""
        args = []
        for option, (suffix, text) in self.worker_files().items():
            journal.with_suffix(suffix).write_text(text, encoding="utf-8")
            args += [option, str(journal.with_suffix(suffix))]
        return args

    def worker_env(self) -> dict[str, str] | None:
        """The worker's environment: this one, with ``gpu`` its only visible device when set."""
        return None if self.gpu is None else {**os.environ, VISIBLE_ENV: self.gpu}


def _costs_json(costs: dict[str, float]) -> str:
    return json.dumps(costs, sort_keys=True, separators=(",", ":"))


def _costs_sha256(costs: dict[str, float] | None) -> str:
    return "" if costs is None else hashlib.sha256(_costs_json(costs).encode()).hexdigest()


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise HarnessError(f"{path}: cannot read: {exc.strerror}") from None


def check_resume(journal: Path, session: SessionRecord, records: list[Record] | None = None) -> None:
    """Refuse to continue ``journal`` (its ``records``, when read already) from a run of another session, listing
    each field of ``RESUMED`` that differs; a journal without a session record has nothing to differ from."""
    if records is None:
        records = list(read_journal(journal, kinds=(SessionRecord,))) if journal.exists() else []
    previous = next((r for r in reversed(records) if isinstance(r, SessionRecord)), None)
    if previous is None:
        return
    differences = [f"{name}: journal {_shown(name, getattr(previous, name))}, this run "
                   f"{_shown(name, getattr(session, name))}"
                   for name in RESUMED if getattr(previous, name) != getattr(session, name)]
    if differences:
        raise HarnessError(f"{journal}: is another session's journal ({'; '.join(differences)}): resume it with the "
                           "options and files it was started with, or start a new journal")


def _shown(name: str, value: Any) -> str:
    if name == "balance_sha256":
        return repr(value[:8]) if value else "contiguous shards"
    return "{}/{}".format(*value) if name == "shard" else repr(value)


def resolve_backends(names: list[str]) -> list[str]:
    """The named backends (each item one name or a comma-separated list, as a matrix lane passes them in one
    argument), or every installed one; an unknown name is an error listing the known."""
    names = [name for item in names for name in item.split(",") if name]
    installed = coopcheck.available()
    if not names:
        if not installed:
            raise HarnessError("no coop backend is installed (entry-point group coopcheck.backends is empty)")
        return installed
    unknown = [n for n in names if n not in installed]
    if unknown:
        raise HarnessError(f"unknown backend(s) {', '.join(unknown)}; installed: {', '.join(installed) or 'none'}")
    return names


#: A backend's compile identity of a kernel spec (its adapter's ``kernel_key``), by backend name.
KernelKey = Callable[[str, coopcheck.KernelSpec], Hashable]


def planned_groups(config: RunConfig, contracts: list[Contract],
                   kernel_key: KernelKey | None = None) -> list[tuple[str, list[Case]]]:
    """(backend, cases of one kernel spec that the run covers) in run order: this shard's share of the lane.

    Shards split a lane between compiled kernels, never inside one: the groups whose specs share a ``kernel_key``
    (numba's kernels leave the block shape out, so one kernel serves every block) go to one shard together, so a
    kernel compiles once in the lane, not once per shard that runs one of its points (numba's full reduce and
    scan families on 16 workers: 19,107 compiles of 8,384 kernels when sliced by group). Without the key (the
    supervisor's count of the whole lane) each group is its own kernel. Without ``config.costs`` a shard takes a
    contiguous k-th slice of each backend's kernels per contract, cut by their groups; a
    :data:`~harness.lanes.LAUNCH_BOUND` lane's shard takes every n-th kernel instead, which spreads the costly
    points (the simulator's smoke lane in two shards: 17 s and 231 s of launches in slices). With measured costs,
    the lane's kernels go to shards by :func:`harness.scaling.balance` of their groups' summed costs.
    """
    k, n = config.shard
    key = kernel_key or _each_group_its_own
    lanes = [(backend, contract, _kernels(lane_groups(contract, backend, config.profile, config.lane), backend, key))
             for backend in config.backends for contract in contracts]
    if config.costs is None and lane_kind(config.lane) in LAUNCH_BOUND:
        owners = [[i % n for i in range(len(kernels))] for *_lane, kernels in lanes]
    elif config.costs is None:
        owners = [contiguous([len(groups) for groups in kernels], n) for *_lane, kernels in lanes]
    else:
        costs = config.costs
        owner = iter(balance([math.fsum(costs_of([g.kernel for g in groups], costs))
                              for *_lane, kernels in lanes for groups in kernels], n))
        owners = [[next(owner) for _groups in kernels] for *_lane, kernels in lanes]
    planned = []
    for (backend, contract, kernels), owned in zip(lanes, owners, strict=True):
        share = [group for groups, shard in zip(kernels, owned, strict=True) if shard == k - 1 for group in groups]
        made = [[c for make in group.makers for c in make()] for group in share]
        check_unique((c for cases in made for c in cases), contract)  # the whole lane, in an unsharded plan
        for cases in made:
            covered = [c for c in cases if config.only_ids is None or c.id in config.only_ids]
            planned += [(backend, covered)] if covered else []
    return planned


def _each_group_its_own(_backend: str, spec: coopcheck.KernelSpec) -> Hashable:
    return spec


def _kernels(groups: list[LazyGroup], backend: str, key: KernelKey) -> list[list[LazyGroup]]:
    """``groups`` gathered by compiled kernel, kernels in the order of their first group."""
    kernels: dict[Hashable, list[LazyGroup]] = {}
    for group in groups:
        kernels.setdefault(key(backend, group.spec), []).append(group)
    return list(kernels.values())


def _kernel_batches(todo: list[tuple[str, list[Case]]], kernels: int,
                    kernel_key: KernelKey) -> Iterator[list[tuple[str, list[Case]]]]:
    """Runs of ``todo`` holding ``kernels`` distinct compiled kernels each (the last fewer): one disassembly lists a
    batch's kernels, and a shard holds each kernel's groups together, so a count of groups would hold few kernels."""
    batch: list[tuple[str, list[Case]]] = []
    seen: set[Hashable] = set()
    for backend, cases in todo:
        key = (backend, kernel_key(backend, cases[0].spec))
        if key not in seen and len(seen) == kernels:
            yield batch
            batch, seen = [], set()
        seen.add(key)
        batch.append((backend, cases))
    if batch:
        yield batch


class Recycled(Exception):
    """A worker ended between groups over its ``worker_memory``, its journal closed by an end record: its
    supervisor starts a fresh one, which resumes after it."""


def resident_bytes() -> int:
    """The most memory this process has held resident (Linux reports kibibytes, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def physical_memory() -> int:
    """This machine's memory in bytes (what a run's default ``worker_memory`` shares out among its workers)."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def run_worker(config: RunConfig, journal: Path, lock: JournalLock | None = None) -> Counter[str]:
    """Run every case not yet recorded in ``journal`` (a journal of this session, or new), holding its lock
    (``lock``: a supervisor's); returns the counts by the backends' own status. Past ``config.worker_memory``
    it raises :class:`Recycled` after a batch of groups, once that batch is recorded, unless nothing is left."""
    started = time.perf_counter()
    lane_kind(config.lane)
    config.backends = resolve_backends(config.backends)
    contracts = load_contracts(config.contracts_dir)
    session = config.session_record(fingerprint(config.backends))
    with JournalWriter(journal, lock) as writer:
        records = list(read_journal(journal, kinds=(SessionRecord, CaseRecord)))
        check_resume(journal, session, records)
        done = final_cases(records)
        counts: Counter[str] = Counter(str(r.status) for r in done.values())
        writer.write(session)
        engines: dict[str, Engine] = {}

        def engine(backend: str) -> Engine:
            if backend not in engines:
                activating = time.perf_counter()
                engines[backend] = Engine(coopcheck.register(backend), config.lane, config.seed, writer.write,
                                          config.arch, config.max_blocks)
                engines[backend].phases["startup"] += time.perf_counter() - activating
            return engines[backend]

        def kernel_key(backend: str, spec: coopcheck.KernelSpec) -> Hashable:
            return engine(backend).adapter.kernel_key(spec)

        todo = [(b, [c for c in cases if c.id not in done])
                for b, cases in planned_groups(config, contracts, kernel_key)]
        todo = [(backend, cases) for backend, cases in todo if cases]
        # The plan activated every backend it holds (for their kernel keys); the worker's own start (contracts,
        # journal, the plan) is charged to the first.
        if engines:
            activations = sum(e.phases["startup"] for e in engines.values())
            next(iter(engines.values())).phases["startup"] += time.perf_counter() - started - activations

        def announce(cases: list[Case]) -> None:  # a worker lost from here on is charged this group
            writer.write(GroupRecord(cases[0].kernel_id, tuple(c.id for c in cases)))

        recycle = False
        ahead = not LANES[lane_kind(config.lane)]  # a host lane compiles a batch, then lists its SASS at once
        for batch in _kernel_batches(todo, INSPECT_CHUNK, kernel_key) if ahead else ([group] for group in todo):
            if ahead:
                for backend, cases in batch:
                    backend_engine = engine(backend)  # activated first: a backend lost activating costs no group
                    announce(cases)
                    backend_engine.prepare(cases[0].spec, cases)
                for backend in dict.fromkeys(b for b, _ in batch):
                    engines[backend].prefetch_inspections([cases[0].spec for b, cases in batch if b == backend])
            for backend, cases in batch:
                backend_engine = engine(backend)
                if not ahead:
                    announce(cases)
                for record in backend_engine.run_group(cases[0].spec, cases):
                    counts[str(record.status)] += 1
                writer.sync()
            recycle = (config.worker_memory is not None and resident_bytes() > config.worker_memory
                       and batch[-1] is not todo[-1])
            if recycle:
                break
        writer.write(EndRecord(dict(counts), phases={b: rounded(e.phases) for b, e in engines.items()}))
    if recycle:
        raise Recycled(str(journal))
    return counts


def phase_totals(records: Iterable[Record]) -> dict[str, dict[str, float]]:
    """Seconds per backend and phase over every run (shard, resumed attempt) the records hold, most first."""
    totals: dict[str, defaultdict[str, float]] = {}
    for record in records:
        if isinstance(record, EndRecord):
            for backend, phases in record.phases.items():
                for phase, seconds in phases.items():
                    totals.setdefault(backend, defaultdict(float))[phase] += seconds
    return {b: dict(sorted(p.items(), key=lambda item: -item[1])) for b, p in totals.items()}


def phase_lines(phases: dict[str, dict[str, float]]) -> list[str]:
    """A run summary's lines of :func:`phase_totals`: where each backend's time went."""
    return [f"  {backend:<11} seconds by phase (summed over workers): "
            + ", ".join(f"{phase} {seconds:.1f}" for phase, seconds in spent.items())
            for backend, spent in sorted(phases.items())]


def rounded(phases: dict[str, float]) -> dict[str, float]:
    return {phase: round(seconds, 3) for phase, seconds in sorted(phases.items())}


def exit_with_supervisor(pipe: int) -> None:
    """In a worker: end this process at once when the pipe ``pipe`` (a descriptor), whose other end only the
    supervisor holds, closes (the supervisor is gone, however it died): a journal never keeps a writer that
    nothing watches. Read unbuffered: a buffered reader's lock, held by this thread, blocks interpreter exit."""

    def watch() -> None:
        while os.read(pipe, 1 << 16):
            pass
        os._exit(INTERRUPTED)

    threading.Thread(target=watch, name="supervisor-watch", daemon=True).start()


def _charge_inflight(journal: Path, lock: JournalLock, worker: int, status: Status, detail: str) -> tuple[int, int]:
    """Record ``status`` for the cases without a verdict of the last group that process ``worker`` started (none
    when it was lost before or between groups); returns how many it charged and how many cases the journal
    holds a verdict for now."""
    records = list(read_journal(journal, kinds=(SessionRecord, GroupRecord, CaseRecord)))
    done = final_cases(records)
    groups = [r for r in records if isinstance(r, GroupRecord)]
    missing = [cid for cid in groups[-1].cases if cid not in done] if groups and groups[-1].pid == worker else []
    lane = next((r.lane for r in reversed(records) if isinstance(r, SessionRecord)), "unknown")
    if missing:
        with JournalWriter(journal, lock) as writer:
            for cid in missing:
                writer.write(CaseRecord(cid, status, lane, f"{detail} (group {groups[-1].kernel})"))
    return len(missing), len(done) + len(missing)


class WorkerProcess(Protocol):
    """What a supervisor needs of a running worker: a local ``subprocess.Popen``, or a worker on another host
    (:class:`harness.hosts.HostWorker`) whose journal lines reach the local journal as they are written."""

    @property
    def pid(self) -> int: ...  # the pid its group records carry

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdin(self) -> IO[bytes] | None: ...  # closed when the worker is done with (a local worker's pipe)

    def poll(self) -> int | None: ...

    def kill(self) -> None: ...

    def wait(self) -> int: ...


class Launch(Protocol):
    """Starts one worker attempt of a shard writing ``journal`` under the supervisor's ``lock``."""

    #: Where its workers run, for the supervisor's messages: "" here, else e.g. " on host ssh=gpu1".
    where: str

    def start(self, config: RunConfig, journal: Path, lock: JournalLock) -> WorkerProcess: ...


class LocalLaunch:
    """A worker process on this machine, handed the journal's lock as an inherited descriptor."""

    where = ""

    def start(self, config: RunConfig, journal: Path, lock: JournalLock) -> WorkerProcess:
        python = [sys.executable, *(["-P"] if sys.flags.safe_path else [])]  # keep a -P run off the source tree
        cmd = [*python, "-m", "harness", "worker", *config.worker_args(), "--journal", str(journal),
               "--lock-fd", str(lock.fd), "--supervised", *config.write_worker_files(journal)]
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, pass_fds=(lock.fd,), env=config.worker_env())


def supervise(config: RunConfig, journal: Path, group_timeout: float = 900.0, max_restarts: int = 50,
              stop: threading.Event | None = None, progress: RunProgress | None = None,
              launch: Launch | None = None) -> None:
    """Run the lane in child processes (started by ``launch``: here, by default) until it ends: a child that
    dies or falls silent inside a group costs that group, one lost between groups a restart. ``stop`` set (an
    interrupt) ends the child at once and raises :class:`Interrupted`, charging nothing. ``progress`` is fed
    every record the journal gains."""
    stop = stop or threading.Event()
    lock = JournalLock(journal)
    tail = JournalTail(journal)
    try:
        if progress is not None:
            progress.feed(journal, tail.read(), live=False)
        _supervise(config, journal, lock, group_timeout, max_restarts, stop, _Follower(journal, tail, progress),
                   launch or LocalLaunch())
    finally:
        lock.release()


@dataclass
class _Follower:
    """A supervisor's view of its journal as the worker writes it: every new record goes to the run's progress."""

    journal: Path
    tail: JournalTail
    progress: RunProgress | None

    def read(self) -> list[Record]:
        records = self.tail.read()
        if self.progress is not None:
            self.progress.feed(self.journal, records)
        return records


def _supervise(config: RunConfig, journal: Path, lock: JournalLock, group_timeout: float, max_restarts: int,
               stop: threading.Event, follower: _Follower, launch: Launch) -> None:
    restarts = stalls = 0
    verdicts = len(final_cases(read_journal(journal, kinds=(CaseRecord,))))
    while True:
        proc = launch.start(config, journal, lock)
        timed_out = _watch(proc, follower, group_timeout, stop)
        follower.read()  # what the worker wrote last
        if proc.stdin is not None:
            proc.stdin.close()
        rc = proc.wait()  # it has ended: _watch returned
        if stop.is_set() or rc in (INTERRUPTED, -signal.SIGINT):
            raise Interrupted(f"{journal}: interrupted")
        if rc == 0 and journal_ended(journal):
            return
        if rc == RECYCLED and (now := len(final_cases(read_journal(journal, kinds=(CaseRecord,))))) > verdicts:
            verdicts = now  # it ended between groups, after recording some: nothing to charge, no restart counted
            print(f"harness: worker{launch.where} started afresh at {now} verdicts (over its --worker-memory); "
                  "resuming", file=sys.stderr)
            continue
        if rc == 2 and not timed_out:  # a handled usage or input error: already printed
            raise HarnessError(f"the worker{launch.where} stopped on an error (see above); the journal keeps what "
                               "it recorded")
        if timed_out:
            how = f"no progress for {group_timeout:g} s"
            charged, now = _charge_inflight(journal, lock, proc.pid, Status.TIMEOUT, how)
        else:
            died = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
            how = f"worker{launch.where} died with {died}"
            charged, now = _charge_inflight(journal, lock, proc.pid, Status.CRASH, how)
        stalls = 0 if now > verdicts else stalls + 1
        verdicts, restarts = now, restarts + 1
        if stalls >= MAX_STALLS:
            raise HarnessError(f"{journal}: the worker{launch.where} was lost {stalls} times in a row before it "
                               f"recorded a verdict (last: {how}); see the journal")
        if restarts > max_restarts:
            raise HarnessError(f"{journal}: the worker{launch.where} was lost {restarts} times, more than the "
                               f"{max_restarts} restarts a run takes (last: {how}); see the journal")
        print(f"harness: worker{launch.where} restarted after charging {charged} case(s); resuming", file=sys.stderr)


def _watch(proc: WorkerProcess, follower: _Follower, timeout: float, stop: threading.Event) -> bool:
    """Wait for ``proc``; kill it when its journal has gained no record for ``timeout`` s (``STARTUP_SECONDS`` at
    least until the worker announces its first group) and return True, or when ``stop`` is set."""
    last_change, starting = time.monotonic(), True
    while proc.poll() is None:
        records = follower.read()
        if records:
            last_change = time.monotonic()
            starting = starting and not any(isinstance(r, GroupRecord) for r in records)
        if time.monotonic() - last_change > (max(timeout, STARTUP_SECONDS) if starting else timeout):
            proc.kill()
            proc.wait()
            return True
        if stop.wait(min(0.2, timeout / 4)):
            proc.kill()
            proc.wait()
    return False


def supervise_shards(runs: list[tuple[RunConfig, Path]], group_timeout: float,
                     progress: RunProgress | None = None, launches: Sequence[Launch] | None = None) -> None:
    """Supervise each (shard, journal) in a thread of its own, its workers started by its ``launches`` entry
    (here, by default), all feeding ``progress``; an interrupt stops them all at once and raises
    :class:`Interrupted`. A shard that stops on an error leaves the others running; the first error is raised
    when they are done."""
    stop = threading.Event()
    starts: Sequence[Launch] = launches or [LocalLaunch() for _run in runs]
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        futures = [pool.submit(supervise, config, journal, group_timeout, stop=stop, progress=progress,
                               launch=launch) for (config, journal), launch in zip(runs, starts, strict=True)]
        try:
            for future in futures:
                future.result()
        except (KeyboardInterrupt, Interrupted):
            stop.set()
            wait(futures)
            raise Interrupted("interrupted") from None


@dataclass
class RunOutcome:
    """What a finished run's journals hold for its summary, read in one pass (a full run's journals hold
    millions of records): final verdicts with the expectations applied, the expectations' problems
    (expired, or matching no case), and the seconds by backend and phase."""

    finals: dict[str, Verdict]
    problems: list[str]
    phases: dict[str, dict[str, float]]


def read_outcome(ledger: Ledger, journals: list[Path], whole_run: bool = True) -> RunOutcome:
    ends: list[EndRecord] = []
    records: dict[str, CaseRecord] = {}
    for journal in journals:
        for record in read_journal(journal, kinds=(CaseRecord, EndRecord)):
            if isinstance(record, CaseRecord):
                records[record.id] = record  # the last verdict of a case wins, as in final_cases
            elif isinstance(record, EndRecord):
                ends.append(record)
    finals = {cid: ledger.resolve(record) for cid, record in records.items()}
    return RunOutcome(finals, ledger.problems(whole_run), phase_totals(ends))
