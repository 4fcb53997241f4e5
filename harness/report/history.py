"""The nightly history: one JSON line per night, appended crash-safe; which case changed status, when and where.

A night's line holds, per combination that ran, its outcome, its toolchain, the session of each of its
harness lanes and their final verdicts packed as a baseline packs them. A transition is a case whose
status in one combination's harness lane differs from the last night that combination ran before: the
night it changed is the first bad (or first good) night. A torn last line (a nightly killed while
appending) is dropped, on reading and before the next append.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.journal import append_line
from harness.report.baseline import Verdicts, verdicts_of
from harness.report.errors import ReportError

SCHEMA = 1
KIND = "coop-nightly-night"


def append_night(path: Path, night: dict[str, Any]) -> None:
    """Append one night as one line, written in one call and forced to disk, under the history's lock."""
    append_line(path, json.dumps({"schema": SCHEMA, "kind": KIND, **night}, separators=(",", ":")))


def read_history(path: Path) -> list[dict[str, Any]]:
    """Every night, oldest first; a bad line other than a torn last one names its place."""
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


@dataclass(frozen=True)
class Transition:
    """Case ``id`` went from ``was`` (last seen ``since``) to ``now`` on ``night``, in harness lane ``lane`` of
    combination ``combination``; None: absent that night."""

    combination: str
    lane: str
    id: str
    was: str | None
    now: str | None
    regression: bool  # accepted before (or absent), not accepted now
    since: str
    night: str


def _verdicts(night: dict[str, Any], combination: str) -> Verdicts:
    return verdicts_of(night["lanes"][combination]["verdicts"], f"history {night['night']}: {combination}")


def transitions(nights: Sequence[dict[str, Any]]) -> list[Transition]:
    """Every status change between consecutive nights of each combination, in night order."""
    found: list[Transition] = []
    last: dict[str, dict[str, Any]] = {}  # combination -> the last night it ran
    for night in nights:
        for combination, entry in night["lanes"].items():
            before = last.get(combination)
            last[combination] = night
            if before is None or not entry["verdicts"]:
                continue
            was_all, now_all = _verdicts(before, combination), _verdicts(night, combination)
            for lane in sorted(now_all.keys() & was_all.keys()):
                was, now = was_all[lane], now_all[lane]
                for case_id in sorted(was.keys() | now.keys()):
                    a, b = was.get(case_id), now.get(case_id)
                    if a != b:
                        found.append(Transition(combination, lane, case_id, a and str(a[0]), b and str(b[0]),
                                                (a is None or a[1]) and (b is None or not b[1]),
                                                before["night"], night["night"]))
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


def bisect(nights: Sequence[dict[str, Any]], folder: Path) -> list[str]:
    """Shell lines that re-run exactly the regressed ids of each combination's harness lane of the last night,
    once on the toolchain of its last good night and once on the first bad one's; the id files go in ``folder``."""
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
        for which, when in (("last good", since), ("first bad", night)):
            entry = by_night[when]["lanes"][combination]
            env = f"bisect-{'good' if which == 'last good' else 'bad'}"
            pins = [f"{name}=={version}" for name, version in entry["toolchain"].items()]
            steps = [["python", "-m", "venv", env],
                     ["python", "-m", "wheels.install", "--dist", "wheels/dist", "--python", f"{env}/bin/python"],
                     *([["python", "-m", "pip", "--python", f"{env}/bin/python", "install", *pins]] if pins else []),
                     _rerun(lane, entry["sessions"][lane], f"{env}/bin/python", ids_file, f"{env}/{lane}.jsonl")]
            lines.append(f"# the toolchain of {when} ({which}): {', '.join(pins) or 'as installed'}")
            lines.append(" && ".join(shlex.join(step) for step in steps))
    return lines
