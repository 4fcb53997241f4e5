"""The nightly run: which matrix combinations this machine can run, running them, and the roll-up.

Probes are cheap and never crash (a GPU is what ``nvidia-smi -L`` lists; no CUDA is initialized
here). Each lane first gets a fresh environment with its toolchain (:mod:`harness.report.toolchain`;
one that cannot be installed or imported is the lane's status, "toolchain unavailable"), then its
command runs there. Installer and runner are pluggable; a combination this machine cannot run is
recorded as not run, with why. Each lane, once finished, is compared with the committed baseline and appended
to the history, and the roll-up is written again: it covers every lane run under the night's name, in this run
or an earlier one (a night split over several calls, each ``--only`` a few lanes), and shows every case whose
status changed since the combination's last night.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from packaging.requirements import Requirement

from harness.errors import HarnessError
from harness.expectations import Ledger, load_expectations
from harness.fingerprint import MANIFEST_ENV, gpu_present
from harness.lanes import LANE_OUT_ENV
from harness.report import history
from harness.report.baseline import Verdicts, baseline_of, pack
from harness.report.command import fill
from harness.report.diff import compare
from harness.report.document import Source, tally
from harness.report.errors import ReportError
from harness.report.matrix import Combination, Matrix
from harness.report.render import render_markdown_template
from harness.report.toolchain import Installer, env_python
from harness.report.verdicts import Lane, journals_in, load_lanes

SCHEMA = 1
KIND = "coop-nightly-rollup"
BISECT = "bisect.sh"  # in the night's folder: the commands of harness.report.history.bisect
Outcome = Literal["passed", "failed", "toolchain unavailable", "not run", "runnable"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "toolchain unavailable", "not run", "runnable")
#: Runs one combination: (combination, its fresh output folder for journals, its log file) -> exit
#: status, None when it timed out.
LaneRunner = Callable[[Combination, Path, Path], int | None]


def lane_limit(combo: Combination, default: float, cap: float | None = None) -> float:
    """Seconds a combination's command may run: its values' own limit, else the matrix's, and never past ``cap``
    (the run's, e.g. what one call to a GPU machine allows)."""
    return min(combo.timeout_s or default, cap or math.inf)


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
    """Runs a combination's command in a new process group (killed whole on timeout), inside its fresh
    environment under ``envs`` when there is one (first on PATH); its journals record the manifest of the
    ``dist`` its wheels came from."""

    timeout_s: float  # the limit of a combination whose values set none
    contracts: Path
    envs: Path
    cap: float | None = None
    dist: Path | None = None

    def __call__(self, combo: Combination, lane_out: Path, log: Path) -> int | None:
        venv = self.envs / combo.slug
        argv = fill(combo.command, combo.placeholders(str(lane_out), str(venv), str(self.contracts)))
        env = {**os.environ, **combo.env, LANE_OUT_ENV: str(lane_out)}
        if self.dist is not None:
            env[MANIFEST_ENV] = str(self.dist / "manifest.json")
        if env_python(venv).exists():
            env |= {"VIRTUAL_ENV": str(venv), "PATH": os.pathsep.join((str(env_python(venv).parent), env["PATH"]))}
        with log.open("w", encoding="utf-8") as out:
            out.write(f"$ {' '.join(argv)}\n")
            out.flush()
            try:
                proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            except OSError as exc:
                raise ReportError(f"nightly: cannot start {argv[0]!r}: {exc.strerror}") from None
            try:
                return proc.wait(timeout=lane_limit(combo, self.timeout_s, self.cap))
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
    toolchain: dict[str, str] = field(default_factory=dict)  # distribution -> version installed (or pinned)
    regressions: int | None = None  # against the baseline (None: none given, or no verdicts)
    unreached: int | None = None  # baseline cases a stopped lane never reached (not regressions: it never ran them)
    flakes: int | None = None
    wheels: str = ""  # the source of the wheels it installed (commit, "+ changes" when built from a changed tree)

    @classmethod
    def of_entry(cls, combination: str, entry: dict[str, Any]) -> LaneResult:
        """The result a history entry keeps (a lane run earlier the same night)."""
        return cls(combination, entry["outcome"], toolchain=entry["toolchain"], **entry.get("result", {}))


def _judge(combo: Combination, rc: int | None, seconds: float, lane_out: Path, log: Path, out: Path,
           timeout_s: float, ledger: Ledger, baseline: Verdicts | None) -> tuple[LaneResult, list[Lane]]:
    """Passed only on exit status 0 with journals in the lane's folder and every verdict in them accepted
    (the expectations of ``ledger`` applied); regressions and flakes counted against ``baseline``."""
    journals = journals_in(lane_out, recursive=True)
    names = [p.relative_to(out).as_posix() for p in journals]
    verdicts, problem, lanes = None, "", []
    regressions = flakes = unreached = None
    if not journals:
        problem = f"it left no journal in {lane_out.relative_to(out).as_posix()}"
    else:
        try:
            lanes = load_lanes(journals, names, ledger)
            verdicts = tally(r for lane in lanes for r in lane.cases.values())
        except HarnessError as exc:
            problem = f"its journals cannot be read: {exc}"
    if lanes and baseline is not None:
        diff = compare(baseline, lanes)
        changed = [c.now for c in [*diff.missing, *diff.new_failures]] if history.stopped(rc) else []
        unreached = sum(map(history.not_reached, changed))
        regressions = len(diff.new_failures) + len(diff.missing) + len(diff.flakes) - unreached
        flakes = len(diff.flakes) + len(diff.known_flakes)
    if rc is None:
        reason = f"timed out after {timeout_s:g} s"
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
                      log.relative_to(out).as_posix() if log.exists() else None, names, verdicts,
                      regressions=regressions, flakes=flakes, unreached=unreached), lanes


@dataclass(frozen=True)
class Rollup:
    matrix: str
    generated: str
    results: list[LaneResult]
    excluded: list[tuple[str, str]]
    dry_run: bool = False
    transitions: list[history.Transition] = field(default_factory=list)
    bisect: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """A failed lane fails the night, and so does a night that ran nothing; a dry run fails nothing."""
        outcomes = {r.outcome for r in self.results}
        return not self.dry_run and (bool(outcomes & {"failed", "toolchain unavailable"}) or "passed" not in outcomes)

    @property
    def verdict(self) -> str:
        return "Dry run" if self.dry_run else "Night FAILED" if self.failed else "Night passed"

    def totals(self) -> dict[str, int]:
        counts: dict[str, int] = {o: sum(1 for r in self.results if r.outcome == o) for o in OUTCOMES}
        return {"combinations": len(self.results) + len(self.excluded), "excluded": len(self.excluded), **counts}

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "kind": KIND, "matrix": self.matrix, "generated": self.generated,
                "dry_run": self.dry_run, "failed": self.failed, "totals": self.totals(),
                "lanes": [asdict(r) for r in self.results],
                "excluded": [{"id": i, "reason": why} for i, why in self.excluded],
                "transitions": [{**kind, "cases": len(ids), "ids": pack(ids)}
                                for kind, ids in grouped_changes(self.transitions)],
                "bisect": self.bisect}

    def markdown(self) -> str:
        return render_markdown_template("nightly.md.j2", {**self.to_json(), "verdict": self.verdict,
                                                          "bisect_file": BISECT,
                                                          "changes": transition_rows(self.transitions)})


#: Cases a Markdown row of status changes names; the JSON keeps every one, packed.
SHOWN = 3
#: What one kind of status change shares.
CHANGE_KIND = ("combination", "lane", "was", "now", "since", "night", "regression", "unreached")


def grouped_changes(transitions: list[history.Transition]) -> list[tuple[dict[str, Any], list[str]]]:
    """(kind, its case ids) per kind of status change (:data:`CHANGE_KIND`), in the order each kind first appears:
    a lane that stopped early loses every case it did not reach, which a row or an object per case would bury."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for t in transitions:
        groups.setdefault(tuple(getattr(t, k) for k in CHANGE_KIND), []).append(t.id)
    return [(dict(zip(CHANGE_KIND, key, strict=True)), ids) for key, ids in groups.items()]


def transition_rows(transitions: list[history.Transition]) -> list[dict[str, Any]]:
    """The Markdown rows of the status changes: each kind with its count and first :data:`SHOWN` case ids."""
    return [{**kind, "cases": len(ids), "first": sorted(ids)[:SHOWN]} for kind, ids in grouped_changes(transitions)]


@dataclass(frozen=True)
class Night:
    """What a night compares and keeps: the expectations in force, the committed baseline, the history file (its
    lines: :mod:`harness.report.history`), the night's name (default: now, UTC; give the same name to every run
    of one night) and the dist folder of the wheels its lanes install (recorded with its source commit)."""

    expectations: Path | None = None
    baseline: Verdicts | None = None
    history: Path | None = None
    name: str = ""
    dist: Path | None = None


def _wheels(dist: Path | None) -> dict[str, str]:
    """The dist folder and the source its manifest records ("" when it records none or cannot be read)."""
    if dist is None:
        return {}
    try:
        manifest = json.loads((dist / "manifest.json").read_text(encoding="utf-8"))
        commit, dirty = str(manifest.get("source_commit") or ""), bool(manifest.get("dirty"))
    except (OSError, ValueError, AttributeError):
        commit, dirty = "", False
    return {"dist": str(dist), "source": f"{commit[:12]}{' + changes' if dirty and commit else ''}"}


def _entry(result: LaneResult, lanes: list[Lane], wheels: dict[str, str]) -> dict[str, Any]:
    """A combination's history entry: its result as the roll-up shows it, the wheels, its sessions and verdicts."""
    sessions = {lane.name: {"profile": lane.session.profile, "seed": lane.session.seed,
                            "max_blocks": lane.session.max_blocks, "arch": lane.session.arch} for lane in lanes}
    kept = {k: v for k, v in asdict(result).items() if k not in ("id", "outcome", "toolchain")}
    return {"outcome": result.outcome, "toolchain": result.toolchain, "result": kept, "wheels": wheels,
            "sessions": sessions, "verdicts": baseline_of(lanes)["lanes"]}


def run_nightly(matrix: Matrix, out: Path, probes: Probes | None = None, runner: LaneRunner | None = None,
                only: str | None = None, dry_run: bool = False, night: Night | None = None,
                installer: Installer | None = None, lane_timeout: float | None = None,
                rebuild: history.Rebuild | None = None) -> Rollup:
    """Run what this machine can run (``only``: an fnmatch pattern over combination ids), each lane in a fresh
    environment of its toolchain when an ``installer`` is given and for at most ``lane_timeout`` seconds, and roll
    up the night (see :class:`Night`); ``rebuild`` says how the environments were built, for the bisect lines."""
    night = night or Night()
    name = night.name or dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    ledger = Ledger(load_expectations(night.expectations) if night.expectations else [])
    probes = probes or Probes()
    runner = runner or CommandRunner(matrix.timeout_s, matrix.path.parent, out / "envs", lane_timeout, night.dist)
    kept, dropped = matrix.expand()
    rebuild = replace(rebuild or history.Rebuild(), env={c.id: c.env for c in kept}, no_deps={
        c.id: frozenset(Requirement(r).name for r in c.no_deps) for c in kept})
    wheels = _wheels(night.dist)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    results: dict[str, LaneResult] = {}
    for combo in kept:
        if only is not None and not fnmatch.fnmatchcase(combo.id, only):
            continue
        missing = [why for why in map(probes.lacks, combo.needs) if why]
        if missing or dry_run:
            results[combo.id] = LaneResult(combo.id, "not run", "; ".join(missing)) if missing else LaneResult(
                combo.id, "runnable", "dry run: this machine can run it")
            continue
        lane_out, log, env = out / "lanes" / combo.slug, out / "logs" / f"{combo.slug}.log", out / "envs" / combo.slug
        for stale in (lane_out, env):  # what an earlier night left must not speak for this one
            shutil.rmtree(stale, ignore_errors=True)
        lane_out.mkdir(parents=True)
        started = time.monotonic()
        toolchain: dict[str, str] | str = {}
        if installer is not None and (combo.requires or combo.imports):  # else it runs in this environment
            env.parent.mkdir(parents=True, exist_ok=True)
            toolchain = installer(combo, env, out / "logs" / f"{combo.slug}.install.log")
        lanes: list[Lane] = []
        if isinstance(toolchain, str):
            result = LaneResult(combo.id, "toolchain unavailable", toolchain, log=f"logs/{combo.slug}.install.log",
                                seconds=round(time.monotonic() - started, 1))
        else:
            rc = runner(combo, lane_out, log)
            result, lanes = _judge(combo, rc, time.monotonic() - started, lane_out, log, out,
                                   lane_limit(combo, matrix.timeout_s, lane_timeout), ledger, night.baseline)
            result = replace(result, toolchain=toolchain)
        results[combo.id] = result = replace(result, wheels=wheels.get("source", ""))
        if night.history is not None:  # at once: a run stopped later keeps this lane
            history.append_night(night.history, {"night": name, "matrix": Source.of(matrix.path).name,
                                                 "lanes": {combo.id: _entry(result, lanes, wheels)}})
        _roll_up(matrix, out, name, kept, dropped, results, only, night, rebuild)
    return _roll_up(matrix, out, name, kept, dropped, results, only, night if not dry_run else replace(
        night, history=None), rebuild, dry_run)


def _roll_up(matrix: Matrix, out: Path, name: str, kept: list[Combination],
             dropped: list[tuple[Combination, str]], results: dict[str, LaneResult], only: str | None, night: Night,
             rebuild: history.Rebuild, dry_run: bool = False) -> Rollup:
    """The night so far, written as nightly.json, nightly.md and bisect.sh: each combination's result from this
    run, else from an earlier run of the same night (the history's), else not selected by ``only``."""
    nights = history.nights(history.read_history(night.history)) if night.history is not None else []
    tonight: dict[str, Any] = next((n["lanes"] for n in nights if n["night"] == name), {})
    rows = []
    for combo in kept:
        mine = results.get(combo.id)
        if mine is None or (mine.outcome in ("not run", "runnable") and combo.id in tonight):
            mine = LaneResult.of_entry(combo.id, tonight[combo.id]) if combo.id in tonight else LaneResult(
                combo.id, "not run", f"not selected by --only {only}")
        rows.append(mine)
    changes = history.transitions(nights) if tonight else []
    lines = history.bisect(nights, out / "bisect", rebuild) if tonight else []
    rollup = Rollup(Source.of(matrix.path).name, name, rows, [(combo.id, why) for combo, why in dropped], dry_run,
                    changes, lines)
    (out / "nightly.json").write_text(json.dumps(rollup.to_json(), indent=1) + "\n", encoding="utf-8")
    (out / "nightly.md").write_text(rollup.markdown(), encoding="utf-8")
    (out / BISECT).unlink(missing_ok=True)
    if lines:
        (out / BISECT).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return rollup
