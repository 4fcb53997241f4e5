"""The nightly run: which matrix combinations this machine can run, running them, and the roll-up.

Probes are cheap and never crash (a GPU is what ``nvidia-smi -L`` lists; no CUDA is initialized
here). The runner is pluggable: the default fills the matrix's command template and runs it with
the combination's environment; a combination this machine cannot run is recorded as not run, with why.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.errors import HarnessError
from harness.expectations import Ledger, load_expectations
from harness.fingerprint import gpu_present
from harness.lanes import LANE_OUT_ENV
from harness.report.command import fill
from harness.report.document import tally
from harness.report.errors import ReportError
from harness.report.matrix import Combination, Matrix
from harness.report.render import md_text
from harness.report.verdicts import journals_in, load_lanes

SCHEMA = 1
KIND = "coop-nightly-rollup"
Outcome = Literal["passed", "failed", "not run", "runnable"]
#: Runs one combination: (combination, its fresh output folder for journals, its log file) -> exit
#: status, None when it timed out.
LaneRunner = Callable[[Combination, Path, Path], int | None]


@dataclass
class Probes:
    """What this machine has, each asked at most once."""

    gpu: Callable[[], bool] = gpu_present
    which: Callable[[str], str | None] = shutil.which
    running: tuple[int, int] = (sys.version_info.major, sys.version_info.minor)
    _gpu_answer: bool | None = field(default=None, init=False)

    def lacks(self, need: str) -> str | None:
        """Why this machine cannot meet ``need``, or None when it can."""
        if need == "gpu":
            if self._gpu_answer is None:
                self._gpu_answer = self.gpu()
            return None if self._gpu_answer else "no GPU (nvidia-smi -L lists none)"
        kind, _, arg = need.partition(":")
        if kind == "python":
            wanted = tuple(int(p) for p in arg.split("."))
            found = wanted == self.running or self.which(f"python{arg}") is not None
            return None if found else f"python{arg} is not on PATH"
        return None if self.which(arg) is not None else f"{arg} is not on PATH"


@dataclass(frozen=True)
class CommandRunner:
    """Runs the matrix's command template in a new process group (killed whole on timeout)."""

    template: Sequence[str]
    timeout_s: float

    def __call__(self, combo: Combination, lane_out: Path, log: Path) -> int | None:
        argv = fill(self.template, combo.placeholders(str(lane_out)))
        env = {**os.environ, **combo.env, LANE_OUT_ENV: str(lane_out)}
        with log.open("w", encoding="utf-8") as out:
            out.write(f"$ {' '.join(argv)}\n")
            out.flush()
            try:
                proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            except OSError as exc:
                raise ReportError(f"nightly: cannot start {argv[0]!r}: {exc.strerror}") from None
            try:
                return proc.wait(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return None


@dataclass(frozen=True)
class LaneResult:
    id: str
    outcome: Outcome
    reason: str = ""
    returncode: int | None = None
    seconds: float = 0.0
    log: str | None = None
    journals: list[str] = field(default_factory=list)
    verdicts: dict[str, Any] | None = None


def _judge(combo: Combination, rc: int | None, seconds: float, lane_out: Path, log: Path, out: Path,
           timeout_s: float, ledger: Ledger) -> LaneResult:
    """Passed only on exit status 0 with journals in the lane's folder and every verdict in them accepted
    (the expectations of ``ledger`` applied)."""
    journals = journals_in(lane_out, recursive=True)
    names = [p.relative_to(out).as_posix() for p in journals]
    verdicts, problem = None, ""
    if not journals:
        problem = f"it left no journal in {lane_out.relative_to(out).as_posix()}"
    else:
        try:
            verdicts = tally(r for lane in load_lanes(journals, names, ledger) for r in lane.cases.values())
        except HarnessError as exc:
            problem = f"its journals cannot be read: {exc}"
    if rc is None:
        reason = f"timed out after {timeout_s:.0f} s"
    elif rc != 0:
        reason = f"exit status {rc}"
    elif problem:
        reason = f"exit status 0, but {problem}"
    elif verdicts is not None and verdicts["total"] == 0:
        reason = "exit status 0, but its journals hold no verdict"
    elif verdicts is not None and verdicts["accepted"] < verdicts["total"]:
        reason = f"exit status 0, but {verdicts['total'] - verdicts['accepted']} verdicts are not accepted"
    else:
        reason = ""
    return LaneResult(combo.id, "failed" if reason else "passed", reason, rc, round(seconds, 1),
                      log.relative_to(out).as_posix() if log.exists() else None, names, verdicts)


@dataclass(frozen=True)
class Rollup:
    matrix: str
    generated: str
    results: list[LaneResult]
    excluded: list[tuple[str, str]]
    dry_run: bool = False

    @property
    def failed(self) -> bool:
        """A failed lane fails the night, and so does a night that ran nothing; a dry run fails nothing."""
        outcomes = {r.outcome for r in self.results}
        return not self.dry_run and ("failed" in outcomes or "passed" not in outcomes)

    @property
    def verdict(self) -> str:
        return "Dry run" if self.dry_run else "Night FAILED" if self.failed else "Night passed"

    def totals(self) -> dict[str, int]:
        outcomes = ("passed", "failed", "not run", "runnable")
        counts = {o: sum(1 for r in self.results if r.outcome == o) for o in outcomes}
        return {"combinations": len(self.results) + len(self.excluded), "excluded": len(self.excluded), **counts}

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "kind": KIND, "matrix": self.matrix, "generated": self.generated,
                "dry_run": self.dry_run, "failed": self.failed, "totals": self.totals(),
                "lanes": [asdict(r) for r in self.results],
                "excluded": [{"id": i, "reason": why} for i, why in self.excluded]}

    def markdown(self) -> str:
        totals = self.totals()
        lines = [f"# Nightly roll-up: {md_text(self.matrix)}", "",
                 f"Generated {self.generated}. {self.verdict}: "
                 + ", ".join(f"{n} {k}" for k, n in totals.items()) + ".", "",
                 "| combination | outcome | why | seconds | verdicts accepted | log |",
                 "|---|---|---|--:|--:|---|"]
        for r in self.results:
            verdicts = f"{r.verdicts['accepted']}/{r.verdicts['total']}" if r.verdicts else ""
            seconds = r.seconds if r.outcome in ("passed", "failed") else ""
            lines.append(f"| {md_text(r.id)} | {r.outcome} | {md_text(r.reason)} | {seconds} | {verdicts} "
                         f"| {md_text(r.log or '')} |")
        if self.excluded:
            lines += ["", "Excluded by the matrix file:", ""]
            lines += [f"- {md_text(i)}: {md_text(why)}" for i, why in self.excluded]
        return "\n".join(lines) + "\n"


def run_nightly(matrix: Matrix, out: Path, probes: Probes | None = None, runner: LaneRunner | None = None,
                only: str | None = None, dry_run: bool = False, expectations: Path | None = None) -> Rollup:
    """Run what this machine can run (``only``: an fnmatch pattern over combination ids) and roll up, judging
    the lanes' verdicts with ``expectations`` applied."""
    ledger = Ledger(load_expectations(expectations) if expectations else [])
    probes = probes or Probes()
    runner = runner or CommandRunner(matrix.command, matrix.timeout_s)
    kept, dropped = matrix.expand()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    results = []
    for combo in kept:
        if only is not None and not fnmatch.fnmatchcase(combo.id, only):
            results.append(LaneResult(combo.id, "not run", f"not selected by --only {only}"))
            continue
        missing = [why for why in map(probes.lacks, combo.needs) if why]
        if missing:
            results.append(LaneResult(combo.id, "not run", "; ".join(missing)))
            continue
        if dry_run:
            results.append(LaneResult(combo.id, "runnable", "dry run: this machine can run it"))
            continue
        lane_out, log = out / "lanes" / combo.slug, out / "logs" / f"{combo.slug}.log"
        shutil.rmtree(lane_out, ignore_errors=True)  # what an earlier night left must not speak for this one
        lane_out.mkdir(parents=True)
        started = time.monotonic()
        rc = runner(combo, lane_out, log)
        results.append(_judge(combo, rc, time.monotonic() - started, lane_out, log, out, matrix.timeout_s, ledger))
    rollup = Rollup(str(matrix.path), dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), results,
                    [(combo.id, why) for combo, why in dropped], dry_run)
    (out / "nightly.json").write_text(json.dumps(rollup.to_json(), indent=1) + "\n", encoding="utf-8")
    (out / "nightly.md").write_text(rollup.markdown(), encoding="utf-8")
    return rollup
