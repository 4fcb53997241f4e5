"""pytest plugin: one test item per case (node id = case id), each kernel group run once by the engine.

Enabled per session with ``-p harness.plugin --coop-lane LANE``; without ``--coop-lane`` it adds
nothing. Under pytest-xdist it schedules by kernel group, so a group's cases run on one worker
(one compile, one launch) and node ids stay case ids. ``--coop-items group`` collects one item per
kernel group instead (node id = its kernel scope): the ``full`` profile's 1.6 M cases make pytest
itself the bottleneck, and the journal holds every case's verdict either way.
``--coop-fail-closed`` fails the session on any skip.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

import coopcheck
import pytest

from harness import caseid
from harness.cases import DEFAULT_SEED, PROFILES, Case
from harness.contracts import KERNEL_AXES, contracts_dir, load_contracts
from harness.engine import Engine
from harness.errors import CaseIdError, HarnessError
from harness.expectations import Verdict
from harness.journal import CaseRecord, EndRecord, GroupRecord, JournalWriter, Record
from harness.lanes import lane_cases
from harness.options import arch, positive_int, whole_number
from harness.session import RunConfig, resolve_backends, rounded
from harness.statuses import Status

SETTINGS = pytest.StashKey[tuple[RunConfig, Path | None]]()
RUNNER = pytest.StashKey["CaseRunner"]()
#: What pytest makes of an item, worst last (a group's outcome is its worst case's).
Outcome = Literal["passed", "xfailed", "skipped", "failed"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "xfailed", "skipped", "failed")
#: How a group's message words the cases that decided its outcome.
_DECIDED = {"passed": "passed", "xfailed": "accepted", "skipped": "skipped", "failed": "not accepted"}
#: Cases a failing group item lists with their detail (the rest are counted).
MAX_LISTED = 5
#: The id parameters that make a kernel group: the kernel axes, plus the rejection (its own group).
SCOPE_KEYS = (*KERNEL_AXES, "reject")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("coopcheck", "coop conformance cases")
    group.addoption("--coop-lane", help="run the contract cases of this lane (host, simulator, gpu, gpu-<tool>)")
    group.addoption("--coop-profile", default="pr", choices=PROFILES)
    group.addoption("--coop-backend", action="append", default=[],
                    help="repeatable or comma-separated; default: all installed")
    group.addoption("--coop-seed", type=whole_number, default=DEFAULT_SEED)
    group.addoption("--coop-arch", type=arch, default="sm_90", help="sm_<major><minor>[a|f] (%(default)s)")
    group.addoption("--coop-max-blocks", type=positive_int, default=4096,
                    help="blocks per launch, at least 1")
    group.addoption("--coop-contracts", type=Path, help="contracts folder")
    group.addoption("--coop-expectations", type=Path, help="expectations file (default: in the contracts folder)")
    group.addoption("--coop-journal", help="journal path; {worker} becomes the xdist worker id")
    group.addoption("--coop-fail-closed", action="store_true",
                    help="fail the session on any skip or undeclared NotSupported (qualification lanes)")
    group.addoption("--coop-items", choices=("case", "group"), default="case",
                    help="one pytest item per case, or per kernel group (for the full profile) (%(default)s)")


class CaseFailure(Exception):
    """A case verdict that is not accepted; pytest shows only its detail."""


def case_outcome(record: Verdict, fail_closed: bool) -> Outcome:
    """A pass passes, an accepted non-pass xfails, an undeclared NotSupported skips unless the lane is
    fail-closed, and anything else fails."""
    if record.status is Status.PASS:
        return "passed"
    if record.accepted:
        return "xfailed"
    if record.status is Status.NOT_SUPPORTED and not fail_closed:
        return "skipped"
    return "failed"


def case_message(record: Verdict, outcome: Outcome) -> str:
    if outcome == "xfailed":
        return f"{record.status}: {record.detail} ({record.waiver})"
    if outcome == "skipped":
        return f"NotSupported (undeclared): {record.detail}"
    return f"{record.status}: {record.detail}"


def item_outcome(records: Sequence[Verdict], group: bool, fail_closed: bool) -> tuple[Outcome, str]:
    """The outcome and message of an item holding ``records`` (one case, or a kernel group's cases).

    A group's outcome is its worst case's; its message counts the cases that decided it by status and
    lists the first :data:`MAX_LISTED` of them with their detail.
    """
    outcomes = [case_outcome(r, fail_closed) for r in records]
    worst = max(outcomes, key=OUTCOMES.index)
    if not group:
        return worst, case_message(records[0], worst)
    decided = [r for r, o in zip(records, outcomes, strict=True) if o == worst]
    counts = Counter(str(r.status) for r in decided)
    lines = [f"{len(decided)} of {len(records)} case(s) {_DECIDED[worst]}: "
             + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))]
    lines += [f"  {r.id}: {case_message(r, worst)}" for r in decided[:MAX_LISTED]]
    if len(decided) > MAX_LISTED:
        lines.append(f"  ... and {len(decided) - MAX_LISTED} more: the journal holds every verdict")
    return worst, "\n".join(lines)


class CaseRunner:
    """Per-process engines and the backends' own verdicts; a group runs on the first request for any of its
    cases. The journal gets the group announced, then its verdicts; items apply the expectations."""

    def __init__(self, config: RunConfig, journal: Path | None) -> None:
        self.config = config
        self.ledger = config.ledger()
        self.writer = JournalWriter(journal) if journal else None
        self.engines: dict[str, Engine] = {}
        self.groups: dict[str, list[Case]] = {}
        self.verdicts: dict[str, CaseRecord] = {}
        if self.writer:
            from harness.fingerprint import fingerprint

            self.writer.write(config.session_record(fingerprint(config.backends)))

    def emit(self, record: Record) -> None:
        if self.writer:
            self.writer.write(record)

    def collect(self) -> dict[str, list[Case]]:
        """The lane's cases by kernel group (node id -> cases), in collection order."""
        for contract in load_contracts(self.config.contracts_dir):
            for backend in self.config.backends:
                for case in lane_cases(contract, backend, self.config.profile, self.config.lane):
                    self.groups.setdefault(case_scope(case), []).append(case)
        return self.groups

    def verdicts_of(self, cases: Iterable[Case]) -> list[CaseRecord]:
        """The backend's own verdicts of ``cases``, each group run (whole) on the first request for it."""
        found = []
        for case in cases:
            if case.id not in self.verdicts:
                for point in kernel_points(self.groups[case_scope(case)]):
                    self.emit(GroupRecord(point[0].kernel_id, tuple(c.id for c in point)))
                    for record in self._engine(case.backend).run_group(point[0].spec, point):
                        self.verdicts[record.id] = record
            found.append(self.verdicts[case.id])
        return found

    def _engine(self, backend: str) -> Engine:
        if backend not in self.engines:
            activating = time.perf_counter()
            self.engines[backend] = Engine(coopcheck.register(backend), self.config.lane, self.config.seed, self.emit,
                                           self.config.arch, self.config.max_blocks)
            self.engines[backend].phases["startup"] += time.perf_counter() - activating
        return self.engines[backend]


class CaseItem(pytest.Item):
    """One contract case, or one kernel group's cases (``group``); its outcome is that of the engine's
    verdicts, the expectations applied."""

    def __init__(self, *, cases: list[Case], group: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cases = cases
        self.group = group

    def runtest(self) -> None:
        runner = self.config.stash[RUNNER]
        try:
            records = [runner.ledger.resolve(r) for r in runner.verdicts_of(self.cases)]
        except HarnessError as exc:  # the harness's own failure: no verdict, and the run stops with exit 2
            pytest.exit(f"coop: {exc}", returncode=2)
        statuses = Counter(str(r.status) for r in records)
        status = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) if self.group else str(records[0].status)
        self.user_properties += [("status", status), ("lane", records[0].lane)]
        outcome, message = item_outcome(records, self.group, self.config.getoption("coop_fail_closed"))
        if outcome == "xfailed":
            pytest.xfail(message)
        if outcome == "skipped":
            pytest.skip(message)
        if outcome == "failed":
            raise CaseFailure(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailure):
            return f"{self.nodeid}\n{excinfo.value}"
        if isinstance(excinfo.value, pytest.xfail.Exception):  # pytest would format (and never show) a traceback:
            return str(excinfo.value)  # the AST of each frame's module, 0.16 s an accepted item
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.cases[0].contract.path, None, ""  # no domain: pytest would rewrite its dots as "::"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "coop_case: a contract case collected by harness.plugin")
    lane = config.getoption("coop_lane")
    if not lane:
        return
    folder = config.getoption("coop_contracts") or contracts_dir()
    given = config.getoption("coop_expectations")
    if given is not None and not given.is_file():
        raise pytest.UsageError(f"--coop-expectations {given}: no such file")
    expectations = given or folder / "expectations.toml"
    run = RunConfig(lane=lane, profile=config.getoption("coop_profile"), seed=config.getoption("coop_seed"),
                    backends=resolve_backends(config.getoption("coop_backend")), contracts_dir=folder,
                    arch=config.getoption("coop_arch"), max_blocks=config.getoption("coop_max_blocks"),
                    expectations=expectations if expectations.exists() else None)
    journal = config.getoption("coop_journal")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if journal and "{worker}" not in journal and config.getoption("numprocesses", None):
        raise pytest.UsageError(f"--coop-journal {journal}: a journal takes one writer and pytest-xdist runs "
                                "several: put {worker} in the path")
    config.stash[SETTINGS] = (run, Path(journal.format(worker=worker)) if journal else None)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the lane's cases (collection runs in each xdist worker, never in the controller)."""
    if SETTINGS not in config.stash:
        return
    runner = config.stash[RUNNER] = CaseRunner(*config.stash[SETTINGS])
    group = config.getoption("coop_items") == "group"
    units = runner.collect().items() if group else ((c.id, [c]) for cs in runner.collect().values() for c in cs)
    for node, cases in units:
        item = CaseItem.from_parent(session, name=node, nodeid=node, cases=cases, group=group)
        item.add_marker(pytest.mark.coop_case)
        items.append(item)


def kernel_points(group: list[Case]) -> list[list[Case]]:
    """A group's cases by kernel point (by spec), in order: the group is (dtype, block, ipt, alg), and a family's
    kernel axes may go further (Exchange's slicing, Warp Reduce's width, op and mode), each point its own kernel."""
    points: dict[coopcheck.KernelSpec, list[Case]] = {}
    for case in group:
        points.setdefault(case.spec, []).append(case)
    return list(points.values())


def kernel_scope(nodeid: str) -> str:
    """The kernel group of a case id (its kernel axes, plus the rejection); other node ids are their own."""
    try:
        contract, backend, params = caseid.parse(nodeid)
    except CaseIdError:
        return nodeid
    return _scope(contract, backend, tuple(p for p in params if p[0] in SCOPE_KEYS))


def case_scope(case: Case) -> str:
    """``kernel_scope(case.id)`` without parsing the id (collection asks it of every case)."""
    return _scope(case.contract.id, case.backend, tuple(p for p in case.params if p[0] in SCOPE_KEYS))


@cache
def _scope(contract: str, backend: str, params: tuple[tuple[str, Any], ...]) -> str:
    return caseid.render(contract, backend, list(params))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Load-scope scheduling with the kernel group as the scope (xdist's own loadgroup renames node ids)."""
    if SETTINGS not in config.stash:
        return None
    from xdist.scheduler import LoadScopeScheduling

    class KernelScopeScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return kernel_scope(nodeid)

    return KernelScopeScheduling(config, log)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Close this process's journal (its end record counts the backends' own verdicts); in a fail-closed
    lane any skip fails the session."""
    config = session.config
    runner = config.stash.get(RUNNER, None)
    if runner is not None and runner.writer is not None:
        runner.writer.write(EndRecord(dict(Counter(str(r.status) for r in runner.verdicts.values())),
                                      phases={b: rounded(e.phases) for b, e in runner.engines.items()}))
        runner.writer.close()
    if SETTINGS not in config.stash or not config.getoption("coop_fail_closed"):
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    skipped = [r.nodeid for r in (reporter.stats.get("skipped", []) if reporter else [])]
    if skipped and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\ncoop: a fail-closed lane had {len(skipped)} skipped case(s), e.g. {skipped[0]}")
