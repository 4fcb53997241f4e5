"""Runs of the harness CLI in child processes for the fault suite, and what the suite reads back.

Each child starts in a session of its own, so a signal can go to a run's whole process group as Ctrl-C
sends it; waits are bounded; a test's children (and the workers it saw) never outlive it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from harness.contracts import load_contracts
from harness.journal import CaseRecord, GroupRecord, read_journal
from harness.session import RunConfig, planned_groups

HARNESS = (sys.executable, "-m", "harness")


def lane_options(contracts: Path) -> list[str]:
    """The options of the suite's lane: the model backend over the small contracts, every case."""
    return ["--lane", "simulator", "--backend", "model", "--contracts", str(contracts), "--profile", "full"]


def planned_ids(contracts: Path) -> set[str]:
    config = RunConfig(lane="simulator", profile="full", backends=["model"], contracts_dir=contracts)
    return {case.id for _, cases in planned_groups(config, load_contracts(contracts)) for case in cases}


def recorded(journal: Path) -> Counter[str]:
    """How many case records each case id has in ``journal``."""
    return Counter(r.id for r in read_journal(journal) if isinstance(r, CaseRecord))


def wait_until(condition: Callable[[], bool], timeout: float, step: float = 0.02) -> bool:
    """Whether ``condition`` held within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def children_of(pid: int) -> list[int]:
    """The live child processes of ``pid`` (a supervisor's worker)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if len(fields) > 1 and int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def group_in_flight(journal: Path, kernel: str) -> GroupRecord | None:
    """The journal's last announced group when its kernel id contains ``kernel`` and none of its cases has a
    verdict yet (its worker is inside it)."""
    if not journal.exists():
        return None
    records = list(read_journal(journal))
    starts = [i for i, r in enumerate(records) if isinstance(r, GroupRecord)]
    if not starts:
        return None
    group = records[starts[-1]]
    assert isinstance(group, GroupRecord)
    judged = any(isinstance(r, CaseRecord) and r.id in group.cases for r in records[starts[-1]:])
    return group if kernel in group.kernel and not judged else None


def _as_from_a_terminal() -> None:
    """A child run takes Ctrl-C as one started from a terminal does. A test session started in the background
    (``cmd &``, as CI runners may start it) inherits SIGINT ignored, and a Python started so keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Children:
    """The harness processes a test started, each logging to its own file; :meth:`close` kills any still alive."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen[bytes]] = []
        self.seen: set[int] = set()  # other processes of theirs (workers), killed too if they outlive the test

    def start(self, *args: object) -> subprocess.Popen[bytes]:
        log = (self.folder / f"child-{len(self.procs)}.log").open("wb")
        proc = subprocess.Popen([*HARNESS, *map(str, args)], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=self.folder, preexec_fn=_as_from_a_terminal)
        log.close()
        self.procs.append(proc)
        return proc

    def log(self, proc: subprocess.Popen[bytes]) -> str:
        return (self.folder / f"child-{self.procs.index(proc)}.log").read_text(errors="replace")

    def wait(self, proc: subprocess.Popen[bytes], timeout: float) -> int | None:
        """The exit status, or None when ``proc`` still runs after ``timeout`` seconds."""
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the child's own process group: it and its workers
            proc.wait()
        for pid in self.seen:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
