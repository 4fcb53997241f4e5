"""Progress of a supervised run, read from its journals as the workers write them: per backend, kernel groups and
cases done of the plan, failures so far, elapsed time and an estimate. A terminal gets a live display (rich);
anything else a plain line per backend now and then, so that a CI log stays readable."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from harness import caseid
from harness.expectations import Ledger
from harness.journal import CaseRecord, GroupRecord, Record, from_json

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: A plain display writes a backend's line each time its cases pass another tenth of its total, and at least this
#: often while it works: about a dozen lines per backend, however long the run.
PLAIN_EVERY_SECONDS = 30.0
PLAIN_STEPS = 10
#: No estimate before a backend has worked this long: its first cases (rejections) take no time at all.
ESTIMATE_AFTER_SECONDS = 5.0


class JournalTail:
    """Reads the records appended to a journal since the last :meth:`read`, complete lines only (a worker may be
    writing the last one)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0

    def read(self) -> list[Record]:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
        except FileNotFoundError:
            return []
        complete = chunk[:chunk.rfind(b"\n") + 1]
        first = self.offset
        self.offset += len(complete)
        return [from_json(line.decode("utf-8", "replace"), f"{self.path} (from byte {first})")
                for line in complete.splitlines() if line.strip()]


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"


@dataclass
class Tally:
    """One backend's share of the run: its planned groups and cases, and what its journals record of them."""

    groups: int
    cases: int
    groups_done: int = 0
    accepted: dict[str, bool] = field(default_factory=dict)  # case id -> whether its verdict is accepted
    started: float | None = None  # when this run first saw it start a group (monotonic)
    done_before: int = 0  # cases recorded before that (a resumed journal's)
    finished: float | None = None

    @property
    def done(self) -> int:
        return len(self.accepted)

    def text(self, now: float) -> str:
        """``groups 3/40  cases 120/5000  2 failed  0:42 elapsed  about 3:10 left``."""
        failed = sum(1 for ok in self.accepted.values() if not ok)
        counts = f"groups {self.groups_done}/{self.groups}  cases {self.done}/{self.cases}  {failed} failed"
        if self.started is None:
            return f"{counts}  waiting"
        elapsed = (self.finished or now) - self.started
        if self.finished is not None:
            return f"{counts}  {_clock(elapsed)} elapsed, done"
        ran = self.done - self.done_before
        estimate = ran and elapsed >= ESTIMATE_AFTER_SECONDS
        left = f"about {_clock(elapsed / ran * (self.cases - self.done))} left" if estimate else "estimating"
        return f"{counts}  {_clock(elapsed)} elapsed  {left}"


class RunProgress:
    """Follows the journals of one run against its plan (backend, cases of a kernel group) and shows it on
    ``stream``: live when that is a terminal,
    else in plain lines. Feed it every record the journals gain, and call :meth:`feed` with none now and then so
    that the time moves on; use it with ``with``. Threads (a supervisor per shard) may feed it at once."""

    def __init__(self, plan: Sequence[tuple[str, Sequence[object]]], ledger: Ledger, stream: IO[str],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.tallies: dict[str, Tally] = {}
        for backend, cases in plan:
            tally = self.tallies.setdefault(backend, Tally(0, 0))
            tally.groups, tally.cases = tally.groups + 1, tally.cases + len(cases)
        self._ledger, self._stream, self._clock = ledger, stream, clock
        self._lock = threading.Lock()
        # per journal and case without a verdict: its tally and the cases of its group still without one (a host-lane
        # batch announces its groups before any verdict; a group announced again holds its cases from then on)
        self._inflight: dict[Path, dict[str, tuple[Tally, set[str]]]] = {}
        self._live: Progress | None = None
        if stream.isatty() and os.environ.get("TERM") != "dumb":
            # imported only here: a worker imports this module (for the tail) but shows nothing, and off a
            # terminal plain lines need no rich
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

            self._live = Progress(TextColumn("{task.description:<11}"), BarColumn(), TaskProgressColumn(),
                                  TextColumn("{task.fields[text]}"), console=Console(file=stream))
            self._tasks: dict[str, TaskID] = {
                backend: self._live.add_task(backend, total=tally.cases, completed=tally.done, text=tally.text(0.0))
                for backend, tally in self.tallies.items()}
        self._lines: dict[str, tuple[float, int]] = {}  # plain: per backend, when its last line went and its tenth

    def __enter__(self) -> RunProgress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._show(self._clock())
            self._live.stop()

    def feed(self, journal: Path, records: Sequence[Record], live: bool = True) -> None:
        """Count ``records`` appended to ``journal``, then update the display; ``live`` False for what a journal
        held before this run (a resumed one): counted, but neither timed nor shown."""
        with self._lock:
            now = self._clock()
            for record in records:
                if isinstance(record, GroupRecord) and record.cases:
                    tally = self._tally(record.cases[0])
                    if tally is None:
                        continue
                    if live and tally.started is None:
                        tally.started, tally.done_before = now, tally.done
                    pending = set(record.cases)
                    self._inflight.setdefault(journal, {}).update((cid, (tally, pending)) for cid in record.cases)
                elif isinstance(record, CaseRecord):
                    self._count(journal, record, now)
            if live:
                self._show(now)

    def _tally(self, case_id: str) -> Tally | None:
        """The tally of the backend of ``case_id``; None for a backend this run does not cover (a resumed journal
        may hold one that an --ids-file run leaves out)."""
        return self.tallies.get(caseid.head(case_id)[1])

    def _count(self, journal: Path, record: CaseRecord, now: float) -> None:
        tally = self._tally(record.id)
        if tally is None:
            return
        tally.accepted[record.id] = self._ledger.resolve(record).accepted
        group = self._inflight.get(journal, {}).pop(record.id, None)
        if group is not None and group[0] is tally:
            group[1].discard(record.id)
            if not group[1]:
                tally.groups_done += 1
        if tally.done >= tally.cases and tally.started is not None and tally.finished is None:
            tally.finished = now

    def _show(self, now: float) -> None:
        for backend, tally in self.tallies.items():
            if self._live is not None:
                self._live.update(self._tasks[backend], completed=tally.done, text=tally.text(now))
                continue
            if tally.started is None:
                continue
            step = tally.done * PLAIN_STEPS // max(tally.cases, 1)
            last, last_step = self._lines.get(backend, (tally.started, 0))
            if step > last_step or (now - last >= PLAIN_EVERY_SECONDS and tally.finished is None):
                print(f"progress: {backend:<11} {tally.text(now)}", file=self._stream, flush=True)
                self._lines[backend] = (now, step)
