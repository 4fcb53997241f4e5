"""The qualification report as one JSON document built from journals: the only place counts are made.

The Markdown, HTML and JSON files render this document, and the bundle verifier rebuilds it from the
bundled journals and compares, so a count can never disagree with the verdicts it claims to count.
Every waiver is recomputed from the expectations file given (dated by the report), and qualified
means: every verdict accepted, every lane ended, no expectation expired or unmatched, and every cell
of the coverage manifest earned.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.contracts import load_contract
from harness.coverage import EVIDENCE, Cell, Evidence, load_coverage
from harness.datafile import read_text
from harness.expectations import Ledger, Verdict, load_expectations
from harness.report import checked, sidebyside
from harness.report.characters import carried_tree
from harness.report.errors import ReportError
from harness.report.verdicts import SEVERITY, Lane, describe, load_lanes, rank, use_contracts
from harness.statuses import Status

SCHEMA = 1
KIND = "coop-qualification-report"
SHARED = "shared-contract checks"
WHEELS = "fresh-wheel checks"
#: Fingerprint fields the runner records (harness.fingerprint), in display order; others follow as recorded.
FINGERPRINT = (
    ("python", "Python"),
    ("platform", "Platform"),
    ("packages", "Packages"),
    ("gpu", "GPU, driver, compute capability"),
    ("ptxas", "CUDA toolkit (ptxas)"),
    ("compute_sanitizer", "compute-sanitizer"),
    ("toolchains", "Backend toolchains"),
    ("commit", "Source commit"),
    ("dirty", "Uncommitted changes"),
    ("wheel_manifest", "Wheel manifest"),
)
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Source:
    """An input file: where to read it, and the name the report shows (a bundle uses its own paths)."""

    path: Path
    name: str

    @classmethod
    def of(cls, path: Path) -> Source:
        """Shown relative to the working directory when inside it: a report names no machine paths."""
        try:
            shown = path.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            shown = path
        return cls(path, str(shown))


@dataclass(frozen=True)
class Inputs:
    """What a report is made from: journals (required), the expectations file, the wheel manifest, the
    coverage manifest (without one, nothing says what qualifying takes: the report does not qualify) and the
    contract files (without them, no rule is counted as checked)."""

    journals: Sequence[Source]
    expectations: Source | None = None
    manifest: Source | None = None
    coverage: Source | None = None
    contracts: Sequence[Source] = ()

    def optional(self) -> dict[str, Source]:
        """The optional inputs given, by key (the keys of ``Inputs`` and of the report's ``inputs``)."""
        found = {"expectations": self.expectations, "manifest": self.manifest, "coverage": self.coverage}
        return {key: source for key, source in found.items() if source is not None}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tally(records: Iterable[Verdict]) -> dict[str, Any]:
    """Counts of verdicts: total, how many a fail-closed lane accepts, and per status (worst last)."""
    records = list(records)
    statuses = Counter(r.status for r in records)
    return {
        "total": len(records),
        "accepted": sum(1 for r in records if r.accepted),
        "statuses": {str(s): statuses[s] for s in sorted(statuses, key=SEVERITY.__getitem__)},
    }


def backends_of(lanes: Sequence[Lane]) -> list[str]:
    """Backends in the order the sessions name them, then any other a case id names."""
    order: dict[str, None] = {}
    for lane in lanes:
        order.update(dict.fromkeys(lane.backends))
    for lane in lanes:
        order.update(dict.fromkeys(describe(i).backend for i in lane.cases))
    return list(order)


def _keep_worst(into: dict[str, Verdict], case_id: str, record: Verdict) -> None:
    old = into.get(case_id)
    if old is None or rank(record) > rank(old):
        into[case_id] = record


def categories(lanes: Sequence[Lane]) -> dict[str, dict[str, Verdict]]:
    """Category -> one verdict per case id (the worst over the category's lanes), in one pass.

    Shared-contract checks are the rejections and compile/resource checks of every backend; run
    checks count per backend and lane they ran in: GPU lanes (plain and sanitizer) as GPU checks, any
    other lane under its own name (``numba simulator checks``: no host lane runs kernels); each
    sanitizer lane also counts on its own; the wheels lane holds the fresh-wheel checks.
    """
    found: dict[str, dict[str, Verdict]] = defaultdict(dict)
    for lane in lanes:
        for case_id, record in lane.cases.items():
            info = describe(case_id)
            if lane.kind == "wheels":
                name = WHEELS
            elif info.kind != "run":
                name = SHARED
            else:
                name = f"{info.backend} {'GPU' if lane.kind == 'gpu' else lane.name} checks"
            _keep_worst(found[name], case_id, record)
            if lane.tool is not None:
                _keep_worst(found[f"checks under {lane.tool}"], case_id, record)
    backends = backends_of(lanes)
    launched = [lane.name for lane in lanes if lane.kind == "host"]
    order = [SHARED, *(f"{b} {name} checks" for name in launched for b in backends),
             *(f"{b} GPU checks" for b in backends),
             *(f"checks under {lane.tool}" for lane in lanes if lane.tool is not None), WHEELS]
    return {name: found[name] for name in order if found.get(name)}


def _passed(verdicts: dict[str, Verdict]) -> set[str]:
    return {i for i, r in verdicts.items() if r.status is Status.PASS}


def _count(n: int, checks: str) -> str:
    return f"{n} {checks.removesuffix('s') if n == 1 else checks}"


def summary_line(lanes: Sequence[Lane], cats: dict[str, dict[str, Verdict]]) -> str:
    """``Passed: N shared-contract checks, N numba GPU checks, ..., under racecheck``.

    A GPU check counts when it passed in every GPU lane that ran it; "under T" names each sanitizer
    tool whose lane ran every counted GPU check, and a tool whose lane ran only some says how many.
    """
    gpu_names = [n for n in cats if n.endswith(" GPU checks")]
    others = [n for n in cats if n not in (SHARED, WHEELS, *gpu_names) and not n.startswith("checks under ")]
    order = [SHARED, *others, WHEELS, *gpu_names]
    parts = [_count(len(_passed(cats[n])), n) for n in order if n in cats]
    if not parts:
        return "Passed: nothing (no verdict recorded)"
    gpu_passed = set().union(*(_passed(cats[n]) for n in gpu_names))
    full, partial = [], []
    for lane in lanes:
        if lane.tool is None or not gpu_passed:
            continue
        covered = len(gpu_passed & lane.cases.keys())
        if covered == len(gpu_passed):
            full.append(lane.tool)
        elif covered:
            partial.append(f"{lane.tool}: {covered} of them")
    line = "Passed: " + ", ".join(parts)
    if full:
        line += ", under " + " and ".join(full)
    if partial:
        line += f" ({'; '.join(partial)})"
    return line


def not_accepted_line(lanes: Sequence[Lane]) -> str:
    bad = Counter(r.status for lane in lanes for r in lane.cases.values() if not r.accepted)
    if not bad:
        return "Not accepted: none"
    parts = ", ".join(f"{bad[s]} {s}" for s in sorted(bad, key=SEVERITY.__getitem__, reverse=True))
    return f"Not accepted: {_count(sum(bad.values()), 'verdicts')} ({parts})"


def final_verdicts(lanes: Sequence[Lane]) -> dict[str, Verdict]:
    """One verdict per case id: the worst over every lane that ran it (a check passes only where it passed
    everywhere)."""
    merged: dict[str, Verdict] = {}
    for lane in lanes:
        for case_id, record in lane.cases.items():
            _keep_worst(merged, case_id, record)
    return merged


def pass_rates(lanes: Sequence[Lane], final: dict[str, Verdict]) -> dict[str, Any]:
    """Contract x backend: checks passed over checks, one verdict per case id (``final``: see
    :func:`final_verdicts`)."""
    cells: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for case_id, record in final.items():
        info = describe(case_id)
        counts[info.contract, info.backend][0] += record.status is Status.PASS
        counts[info.contract, info.backend][1] += 1
    for (contract, backend), (passed, total) in sorted(counts.items()):
        cells[contract][backend] = {"passed": passed, "total": total, "rate": round(passed / total, 4)}
    return {"contracts": sorted(cells), "backends": backends_of(lanes), "cells": dict(cells)}


def _text(value: Any) -> str:
    if value is None or value == "" or value == {} or value == []:
        return NOT_RECORDED
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return "; ".join(f"{k} {_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value)
    return str(value)


def _provenance(env: dict[str, Any]) -> dict[str, str]:
    """Source commit, uncommitted changes and wheel manifest as the report shows them: a run from wheels was
    built from its manifest's commit (``git`` in the run's directory may name another repository); only a
    run that recorded no manifest ran from a source tree."""
    manifest = env.get("wheel_manifest")
    if isinstance(manifest, dict):
        wheels = _wheels(manifest)
        return {"commit": f"{_text(manifest.get('source_commit'))} (from the wheel manifest)",
                "dirty": _text(manifest.get("dirty")),
                "wheel_manifest": f"{_count(len(wheels), 'wheels')}, listed below"}
    commit = env.get("commit")
    return {"commit": f"source tree {commit}" if commit else NOT_RECORDED, "dirty": _text(env.get("dirty")),
            "wheel_manifest": NOT_RECORDED}


def environment(lanes: Sequence[Lane]) -> list[dict[str, Any]]:
    """The fingerprint, one entry per set of lanes that ran in the same environment, with its wheels."""
    groups: dict[str, list[Lane]] = {}
    for lane in lanes:
        groups.setdefault(json.dumps(lane.session.env, sort_keys=True, default=str), []).append(lane)
    out = []
    for members in groups.values():
        env = members[0].session.env
        shown = {k: _text(env.get(k)) for k, _ in FINGERPRINT} | _provenance(env)
        known = dict(FINGERPRINT)
        fields = [{"key": k, "label": label, "value": shown[k]} for k, label in FINGERPRINT]
        fields += [{"key": k, "label": k, "value": _text(v)} for k, v in env.items() if k not in known]
        manifest = env.get("wheel_manifest")
        out.append({"lanes": [lane.name for lane in members], "fields": fields,
                    "wheels": _wheels(manifest) if isinstance(manifest, dict) else []})
    return out


def _wheels(manifest: dict[str, Any]) -> list[dict[str, str]]:
    """One row per wheel of a wheel manifest (``wheels.manifest``): name, version, sha256 prefix, its native
    artifacts with their capabilities, and the tools that built it; a field the manifest lacks is shown so."""
    entries = manifest.get("wheels")
    rows = []
    for wheel in entries if isinstance(entries, list) else []:
        wheel = wheel if isinstance(wheel, dict) else {}
        native = [n for n in wheel.get("native") or () if isinstance(n, dict)]
        tools = [wheel.get("build_backend"), *(f"{k}: {v}" for n in native for k, v in (n.get("tools") or {}).items())]
        rows.append({"name": _text(wheel.get("name")), "version": _text(wheel.get("version")),
                     "sha256": str(wheel.get("sha256") or NOT_RECORDED)[:12],
                     "native": ", ".join(str(n.get("artifact")) for n in native) or "none",
                     "capabilities": ", ".join(dict.fromkeys(str(c) for n in native
                                                             for c in n.get("capabilities") or ())),
                     "toolchain": "; ".join(str(t) for t in tools if t) or NOT_RECORDED})
    return rows


def manifest_section(source: Source | None) -> dict[str, Any] | None:
    """The wheel manifest given: what it was built from, and one row per wheel."""
    if source is None:
        return None
    text = read_text(source.path, ReportError, f"{source.name} (the wheel manifest)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{source.name}: the wheel manifest is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ReportError(f"{source.name}: the wheel manifest is not a JSON object (python -m wheels.build writes one)")
    return {"name": source.name, "source_commit": _text(data.get("source_commit")), "dirty": _text(data.get("dirty")),
            "toolchain": _text(data.get("toolchain")), "wheels": _wheels(data)}


def expectations_section(source: Source | None, ledger: Ledger) -> dict[str, Any]:
    """The file applied (name and sha256) and each entry: how many verdicts it matched, expired or unmatched."""
    if source is None:
        return {"name": None, "sha256": None, "entries": []}
    entries = [{
        "where": e.where,
        "cases": e.cases,
        "status": str(e.status),
        "tags": ", ".join(f"{k}={v}" for k, v in sorted(e.tags.items())),
        "bug": e.bug,
        "expires": e.expires.isoformat(),
        "expired": not ledger.live(e),
        "unmatched": ledger.unmatched(e),
        "reason": e.reason,
        "verdicts_matched": ledger.matched[e.where],
    } for e in ledger.expectations]
    return {"name": source.name, "sha256": sha256_file(source.path), "entries": entries}


def _checks_by_cell(lane: Lane) -> dict[tuple[str, str, str], list[Verdict]]:
    """(contract, backend, kind of check) -> the lane's verdicts of that kind."""
    found: dict[tuple[str, str, str], list[Verdict]] = defaultdict(list)
    for case_id, verdict in lane.cases.items():
        info = describe(case_id)
        found[info.contract, info.backend, info.kind].append(verdict)
    return found


def _lane_missed(evidence: Evidence, lane: Lane | None) -> str:
    """Why a lane earns none of its cells: it did not run, or its sanitizer's control was not seen ('' else)."""
    if lane is None:
        return f"lane {evidence.lane} did not run"
    if evidence.tool is None:
        return ""
    if not lane.controls:
        return f"lane {lane.name} holds no record that its positive control was seen"
    missed = next((c for c in lane.controls if not c.seen), None)
    return f"lane {lane.name}'s positive control was not seen: {missed.detail}" if missed else ""


def _unearned(cell: Cell, evidence: Evidence, lane: Lane, checks: list[Verdict]) -> str:
    """Why ``lane``'s ``checks`` (its verdicts of the cell's kind of check) do not earn ``cell`` ('' if they do)."""
    what = f"{evidence.checks} checks of {cell.contract}/{cell.backend} in lane {lane.name}"
    if not checks:
        return f"no {what}"

    def tolerated(v: Verdict) -> bool:  # a failure of tolerated rules only does not cost this kind
        return v.status is Status.FAIL and bool(v.rules) and set(v.rules) <= evidence.tolerates

    bad = [v for v in checks if not (v.accepted or tolerated(v))]
    if bad:
        return f"{len(bad)} of the {len(checks)} {what} not accepted, e.g. {bad[0].status}: {bad[0].id}"
    if not any(v.status is Status.PASS or tolerated(v) for v in checks):
        return f"none of the {len(checks)} {what} passed (waived or declared unsupported ones are no evidence)"
    return ""


def coverage_section(source: Source | None, lanes: Sequence[Lane]) -> dict[str, Any]:
    """Every cell of the coverage manifest, earned or not and why (``lane_wide``: the lane earns none of its
    cells), and the lanes it needs that did not run."""
    if source is None:
        return {"name": None, "sha256": None, "cells": [], "earned": 0, "lanes_not_run": []}
    by_name = {lane.name: lane for lane in lanes}
    indexes = {lane.name: _checks_by_cell(lane) for lane in lanes}
    rows: list[dict[str, Any]] = []
    not_run: dict[str, list[str]] = {}
    for cell in load_coverage(source.path, source.name):
        evidence = EVIDENCE[cell.evidence]
        lane = by_name.get(evidence.lane)
        why = wide = _lane_missed(evidence, lane)
        if lane is None:
            not_run.setdefault(evidence.lane, []).append(cell.evidence)
        elif not why:
            why = _unearned(cell, evidence, lane, indexes[lane.name].get((cell.contract, cell.backend,
                                                                           evidence.checks), []))
        rows.append({"contract": cell.contract, "backend": cell.backend, "evidence": cell.evidence,
                     "lane": evidence.lane, "earned": not why, "why": why, "lane_wide": bool(wide)})
    return {"name": source.name, "sha256": sha256_file(source.path), "cells": rows,
            "earned": sum(1 for row in rows if row["earned"]),
            "lanes_not_run": [{"lane": name, "evidence": list(dict.fromkeys(kinds)), "cells": len(kinds)}
                              for name, kinds in not_run.items()]}


def coverage_problems(coverage: dict[str, Any]) -> list[str]:
    """One line per lane that earns none of its cells (it did not run, or its control was not seen), then
    every other cell not earned, with why."""
    if coverage["name"] is None:
        return ["no coverage manifest given: nothing says what a qualification must cover"]
    wide: dict[str, list[str]] = {}  # why -> the evidence kind of each cell it costs
    cells = []
    for row in coverage["cells"]:
        if row["lane_wide"]:
            wide.setdefault(row["why"], []).append(row["evidence"])
        elif not row["earned"]:
            cells.append(f"coverage cell {row['contract']} x {row['backend']} x {row['evidence']} not earned: "
                         f"{row['why']}")
    return [f"{why}: no {', '.join(dict.fromkeys(kinds))} evidence ({_count(len(kinds), 'coverage cells')} "
            "not earned)" for why, kinds in wide.items()] + cells


def _control(lane: Lane) -> str | None:
    """A sanitizer lane's positive control: seen, not seen, or not recorded (None for other lanes)."""
    if lane.tool is None:
        return None
    if not lane.controls:
        return "not recorded"
    return "seen" if all(c.seen for c in lane.controls) else "not seen"


def _lane_entry(lane: Lane) -> dict[str, Any]:
    return {
        "name": lane.name, "kind": lane.kind, "tool": lane.tool, "journals": list(lane.journals),
        "profile": lane.profile, "seed": lane.session.seed, "backends": list(lane.backends),
        "ended": lane.ended, "control": _control(lane),
        "started": dt.datetime.fromtimestamp(lane.session.time, dt.UTC).isoformat(timespec="seconds"),
    }


def _non_pass(lane: Lane) -> list[dict[str, Any]]:
    return [{
        "lane": lane.name, "id": r.id, "status": str(r.status), "accepted": r.accepted, "detail": r.detail,
        "waiver": r.waiver, "seed": r.seed, "artifact": r.artifact, "rules": list(r.rules),
    } for r in sorted(lane.cases.values(), key=lambda r: r.id) if r.status is not Status.PASS]


Loaded = tuple[list[Lane], Ledger]


def load(inputs: Inputs, today: dt.date) -> Loaded:
    """The lanes of ``inputs`` with the expectations file applied as of ``today``, and the ledger that did it."""
    source = inputs.expectations
    ledger = Ledger(load_expectations(source.path, source.name) if source else [], today=today)
    use_contracts([s.path for s in inputs.contracts])  # their kernel axes tell compile checks from run checks
    return load_lanes([s.path for s in inputs.journals], [s.name for s in inputs.journals], ledger), ledger


def build(inputs: Inputs, generated: dt.datetime, loaded: Loaded | None = None) -> dict[str, Any]:
    """The report document for ``inputs`` (``loaded``: already loaded from them); ``generated`` dates it
    and decides which expectations have expired. Every text in it is one a report can carry; the summary
    counts the characters that were escaped for it (``replaced``, when there were any)."""
    lanes, ledger = load(inputs, generated.date()) if loaded is None else loaded
    cats = categories(lanes)
    final = final_verdicts(lanes)
    expectations = expectations_section(inputs.expectations, ledger)
    coverage = coverage_section(inputs.coverage, lanes)
    problems = []
    not_accepted = sum(1 for lane in lanes for r in lane.cases.values() if not r.accepted)
    if not any(lane.cases for lane in lanes):
        problems.append("no verdict recorded: a qualification that ran nothing fails")
    if not_accepted:
        problems.append(f"{_count(not_accepted, 'verdicts')} not accepted (see the non-pass list)")
    problems += [f"lane {lane.name} did not end: its journal has no end record" for lane in lanes if not lane.ended]
    problems += [f"expectation {problem}" for problem in ledger.problems()]
    problems += coverage_problems(coverage)
    doc, replaced = carried_tree({
        "schema": SCHEMA,
        "kind": KIND,
        "generated": generated.isoformat(timespec="seconds"),
        "summary": {
            "qualified": not problems,
            "problems": problems,
            "passed": summary_line(lanes, cats),
            "not_accepted": not_accepted_line(lanes),
        },
        "coverage": coverage,
        "counts": {
            "categories": {name: tally(verdicts.values()) for name, verdicts in cats.items()},
            "lanes": {lane.name: tally(lane.cases.values()) for lane in lanes},
            "pass_rates": pass_rates(lanes, final),
            "side_by_side": sidebyside.section(lanes, final, backends_of(lanes)),
        },
        "lanes": [_lane_entry(lane) for lane in lanes],
        "environment": environment(lanes),
        "expectations": expectations,
        "manifest": manifest_section(inputs.manifest),
        "checked": checked.section(lanes, [load_contract(s.path) for s in inputs.contracts],
                                   [s.path for s in inputs.contracts]),
        "non_pass": [row for lane in lanes for row in _non_pass(lane)],
        "inputs": {
            "journals": [{"name": s.name, "sha256": sha256_file(s.path)} for s in inputs.journals],
            **{key: {"name": s.name, "sha256": sha256_file(s.path)} for key, s in inputs.optional().items()},
            "contracts": [{"name": s.name, "sha256": sha256_file(s.path)} for s in inputs.contracts],
        },
    })
    if replaced:
        doc["summary"]["replaced"] = replaced
    return dict(doc)
