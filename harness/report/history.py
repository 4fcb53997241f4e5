"""The nightly history: JSON lines appended crash-safe; which case changed status, when and where.

A line holds, per combination run, its outcome, its toolchain, its result (as the roll-up shows it), the wheels
it installed, the session of each of its harness lanes and their final verdicts packed as a baseline packs them.
The nightly appends one line per combination as it finishes, so a night may span many lines and runs (each GPU
call takes a few lanes): :func:`nights` merges the lines of one night's name, a combination run again that
night keeping its later run. A transition is a case whose status in one combination's harness lane differs
from the last night that combination left verdicts: the night it changed is the first bad (or first good)
night. A torn last line (a nightly killed while appending) is dropped, on reading and before the next append.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.journal import append_line
from harness.report.baseline import Verdicts, verdicts_of
from harness.report.errors import ReportError
from harness.statuses import Status

SCHEMA = 1
KIND = "coop-nightly-night"


def append_night(path: Path, night: dict[str, Any]) -> None:
    """Append one line of a night, written in one call and forced to disk, under the history's lock."""
    append_line(path, json.dumps({"schema": SCHEMA, "kind": KIND, **night}, separators=(",", ":")))


def read_history(path: Path) -> list[dict[str, Any]]:
    """Every line, oldest first (:func:`nights` merges them by night); a bad line other than a torn last one names
    its place."""
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")
    nights = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            night = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError):
            if number == len(lines):  # no newline after it: the append was cut short
                break
            raise ReportError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(night, dict) or night.get("kind") != KIND or night.get("schema") != SCHEMA:
            raise ReportError(f"{path}:{number}: not a schema-{SCHEMA} {KIND} line")
        nights.append(night)
    return nights


def nights(lines: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines merged by night name, in the order the nights began; within a night, a combination's later line
    replaces its earlier one (the lane was run again)."""
    merged: dict[str, dict[str, Any]] = {}
    for line in lines:
        night = merged.setdefault(line["night"], {**line, "lanes": {}})
        night["lanes"].update(line["lanes"])
    return list(merged.values())


@dataclass(frozen=True)
class Transition:
    """Case ``id`` went from ``was`` (last seen ``since``) to ``now`` on ``night``, in harness lane ``lane`` of
    combination ``combination``; None: absent that night."""

    combination: str
    lane: str
    id: str
    was: str | None
    now: str | None
    regression: bool  # accepted before (or absent), not accepted now, in a lane that ran to its end
    since: str
    night: str
    unreached: bool = False  # absent or Missing now because the lane was stopped before it reached the case


def stopped(returncode: int | None) -> bool:
    """Whether a lane's command was stopped before its end: past its limit (None) or by a signal (negative)."""
    return returncode is None or returncode < 0


def not_reached(now: str | None) -> bool:
    """Whether a case's status in a stopped lane says only that the lane never got to it: absent, or in flight."""
    return now is None or now == str(Status.MISSING)


def _verdicts(night: dict[str, Any], combination: str) -> Verdicts:
    return verdicts_of(night["lanes"][combination]["verdicts"], f"history {night['night']}: {combination}")


def transitions(nights: Sequence[dict[str, Any]]) -> list[Transition]:
    """Every status change between consecutive nights of each combination that left verdicts, in night order (a
    night whose lane left none, its toolchain unavailable or timed out before a journal, is skipped, not compared)."""
    found: list[Transition] = []
    last: dict[str, dict[str, Any]] = {}  # combination -> the last night it left verdicts
    for night in nights:
        for combination, entry in night["lanes"].items():
            if not entry["verdicts"]:
                continue
            before = last.get(combination)
            last[combination] = night
            if before is None:
                continue
            was_all, now_all = _verdicts(before, combination), _verdicts(night, combination)
            cut_short = stopped(entry.get("result", {}).get("returncode"))
            for lane in sorted(now_all.keys() & was_all.keys()):
                was, now = was_all[lane], now_all[lane]
                for case_id in sorted(was.keys() | now.keys()):
                    a, b = was.get(case_id), now.get(case_id)
                    if a != b:
                        unreached = cut_short and not_reached(b and str(b[0]))
                        found.append(Transition(combination, lane, case_id, a and str(a[0]), b and str(b[0]),
                                                not unreached and (a is None or a[1]) and (b is None or not b[1]),
                                                before["night"], night["night"], unreached))
    return found


def _rerun(lane: str, session: dict[str, Any], python: str, ids: Path, journal: str) -> list[str]:
    """The command that runs exactly the ids of ``ids`` as ``lane``'s session ran them (a sanitizer lane: the
    gpu lane under that compute-sanitizer tool, in one process)."""
    run = [python, "-P", "-m", "harness", "run", "--lane", "gpu" if lane.startswith("gpu") else lane,
           "--profile", session["profile"], "--seed", str(session["seed"]), "--max-blocks",
           str(session["max_blocks"]), "--arch", session["arch"], "--ids-file", str(ids), "--journal", journal]
    tool = lane.partition("-")[2] if lane.startswith("gpu-") else ""
    if not tool:
        return run
    return ["compute-sanitizer", "--tool", tool, "--print-limit", "0", "--error-exitcode", "3",
            "--target-processes", "all", *run[:-4], "--no-isolate", *run[-4:]]


@dataclass(frozen=True)
class Rebuild:
    """How the nightly built and ran its lanes, for the bisect lines to do alike: the venv with the machine's
    packages or not, the arguments of ``wheels.install``, and per combination the distributions it pinned without
    their requirements and the environment variables its values set."""

    system_site: bool = False
    wheel_args: tuple[str, ...] = ()
    no_deps: Mapping[str, frozenset[str]] = field(default_factory=dict)
    env: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


def _wheels_note(entry: dict[str, Any]) -> str:
    wheels = entry.get("wheels") or {}
    if not wheels.get("dist"):
        return ""
    return f"; wheels {wheels.get('source') or 'of unknown source'} ({Path(wheels['dist']).name})"


def _steps(entry: dict[str, Any], lane: str, env: str, ids: Path, rebuild: Rebuild, combination: str) -> str:
    """One shell line: a new environment as the nightly built the entry's, with its wheels and pins (those pinned
    without their requirements likewise), then the re-run of ``ids`` in it, under the combination's variables."""
    python, toolchain = f"{env}/bin/python", entry["toolchain"]
    alone = rebuild.no_deps.get(combination, frozenset())
    variables = [f"{k}={v}" for k, v in rebuild.env.get(combination, {}).items()]
    pip = ["python", "-m", "pip", "--python", python, "install"]
    with_deps = [f"{name}=={version}" for name, version in toolchain.items() if name not in alone]
    without = [f"{name}=={version}" for name, version in toolchain.items() if name in alone]
    dist = (entry.get("wheels") or {}).get("dist", "wheels/dist")
    steps = [["python", "-m", "venv", *(["--system-site-packages"] if rebuild.system_site else []), env],
             ["python", "-m", "wheels.install", "--dist", dist, "--python", python, *rebuild.wheel_args],
             *([[*pip, *with_deps]] if with_deps else []), *([[*pip, "--no-deps", *without]] if without else []),
             [*(["env", *variables] if variables else []),
              *_rerun(lane, entry["sessions"][lane], python, ids, f"{env}/{lane}.jsonl")]]
    return " && ".join(shlex.join(step) for step in steps)


def bisect(nights: Sequence[dict[str, Any]], folder: Path, rebuild: Rebuild | None = None) -> list[str]:
    """Shell lines that re-run exactly the regressed ids of each combination's harness lane of the last night,
    once on the toolchain and wheels of its last good night and once on the first bad one's; the id files go in
    ``folder``."""
    rebuild = rebuild or Rebuild()
    regressed: dict[tuple[str, str, str, str], list[str]] = {}
    for change in transitions(nights):
        if change.regression and nights and change.night == nights[-1]["night"]:
            regressed.setdefault((change.combination, change.lane, change.since, change.night), []).append(change.id)
    by_night = {night["night"]: night for night in nights}
    lines: list[str] = []
    for (combination, lane, since, night), ids in regressed.items():
        slug = f"{combination}_{lane}".replace(",", "_").replace("=", "-")
        ids_file = folder / f"{slug}.ids.txt"
        folder.mkdir(parents=True, exist_ok=True)
        ids_file.write_text("".join(i + "\n" for i in ids), encoding="utf-8")
        lines.append(f"# {combination}, lane {lane}: {len(ids)} case(s) regressed between {since} and {night}")
        for which, when, env in (("last good", since, "bisect-good"), ("first bad", night, "bisect-bad")):
            entry = by_night[when]["lanes"][combination]
            pins = ", ".join(f"{name}=={version}" for name, version in entry["toolchain"].items())
            lines.append(f"# the toolchain of {when} ({which}): {pins or 'as installed'}{_wheels_note(entry)}")
            lines.append(_steps(entry, lane, env, ids_file, rebuild, combination))
    return lines
