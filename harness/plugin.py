"""pytest plugin: one test item per case (node id = case id), each kernel group run once by the engine.

Enabled per session with ``-p harness.plugin --coop-lane LANE``; without ``--coop-lane`` it adds
nothing. Under pytest-xdist it schedules by kernel group, so a group's cases run on one worker
(one compile, one launch) and node ids stay case ids. ``--coop-fail-closed`` fails the session on
any skip.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import coop
import pytest

from harness import caseid
from harness.cases import DEFAULT_SEED, PROFILES, Case
from harness.contracts import KERNEL_AXES, contracts_dir, load_contracts
from harness.engine import Engine
from harness.errors import CaseIdError, HarnessError
from harness.journal import CaseRecord, EndRecord, GroupRecord, JournalWriter, Record
from harness.lanes import lane_cases
from harness.options import arch, positive_int, whole_number
from harness.session import RunConfig, resolve_backends
from harness.statuses import Status

SETTINGS = pytest.StashKey[tuple[RunConfig, Path | None]]()
RUNNER = pytest.StashKey["CaseRunner"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("coop", "coop conformance cases")
    group.addoption("--coop-lane", help="run the contract cases of this lane (host, simulator, gpu, gpu-<tool>)")
    group.addoption("--coop-profile", default="pr", choices=PROFILES)
    group.addoption("--coop-backend", action="append", default=[], help="repeatable; default: all installed")
    group.addoption("--coop-seed", type=whole_number, default=DEFAULT_SEED)
    group.addoption("--coop-arch", type=arch, default="sm_90", help="sm_<major><minor>[a|f] (%(default)s)")
    group.addoption("--coop-max-blocks", type=positive_int, default=4096,
                    help="blocks per launch, at least 1")
    group.addoption("--coop-contracts", type=Path, help="contracts folder")
    group.addoption("--coop-expectations", type=Path, help="expectations file (default: in the contracts folder)")
    group.addoption("--coop-journal", help="journal path; {worker} becomes the xdist worker id")
    group.addoption("--coop-fail-closed", action="store_true",
                    help="fail the session on any skip or undeclared NotSupported (qualification lanes)")


class CaseFailure(Exception):
    """A case verdict that is not accepted; pytest shows only its one-line detail."""


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

    def cases(self) -> list[Case]:
        found = [c for contract in load_contracts(self.config.contracts_dir) for backend in self.config.backends
                 for c in lane_cases(contract, backend, self.config.profile, self.config.lane)]
        for case in found:
            self.groups.setdefault(kernel_scope(case.id), []).append(case)
        return found

    def verdict(self, case: Case) -> CaseRecord:
        if case.id not in self.verdicts:
            engine = self._engine(case.backend)
            scope = kernel_scope(case.id)
            self.emit(GroupRecord(scope, tuple(c.id for c in self.groups[scope])))
            for record in engine.run_group(case.spec, self.groups[scope]):
                self.verdicts[record.id] = record
        return self.verdicts[case.id]

    def _engine(self, backend: str) -> Engine:
        if backend not in self.engines:
            self.engines[backend] = Engine(coop.register(backend), self.config.lane, self.config.seed, self.emit,
                                           self.config.arch, self.config.max_blocks)
        return self.engines[backend]


class CaseItem(pytest.Item):
    """One contract case; its outcome is the engine's verdict for it."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        runner = self.config.stash[RUNNER]
        try:
            record = runner.ledger.resolve(runner.verdict(self.case))
        except HarnessError as exc:  # the harness's own failure: no verdict, and the run stops with exit 2
            pytest.exit(f"coop: {exc}", returncode=2)
        self.user_properties += [("status", str(record.status)), ("lane", record.lane)]
        if record.status is Status.PASS:
            return
        if record.accepted:
            pytest.xfail(f"{record.status}: {record.detail} ({record.waiver})")
        if record.status is Status.NOT_SUPPORTED and not self.config.getoption("coop_fail_closed"):
            pytest.skip(f"NotSupported (undeclared): {record.detail}")
        raise CaseFailure(f"{record.status}: {record.detail}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailure):
            return f"{self.case.id}\n{excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.case.contract.path, None, ""  # no domain: pytest would rewrite its dots as "::"


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
    for case in runner.cases():
        item = CaseItem.from_parent(session, name=case.id, nodeid=case.id, case=case)
        item.add_marker(pytest.mark.coop_case)
        items.append(item)


def kernel_scope(nodeid: str) -> str:
    """The kernel group of a case id (its kernel axes, plus the rejection); other node ids are their own."""
    try:
        contract, backend, params = caseid.parse(nodeid)
    except CaseIdError:
        return nodeid
    return caseid.render(contract, backend, [(k, v) for k, v in params if k in (*KERNEL_AXES, "reject")])


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
        runner.writer.write(EndRecord(dict(Counter(str(r.status) for r in runner.verdicts.values()))))
        runner.writer.close()
    if SETTINGS not in config.stash or not config.getoption("coop_fail_closed"):
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    skipped = [r.nodeid for r in (reporter.stats.get("skipped", []) if reporter else [])]
    if skipped and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\ncoop: a fail-closed lane had {len(skipped)} skipped case(s), e.g. {skipped[0]}")
