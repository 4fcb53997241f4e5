"""What a report says was checked, per contract x backend: each rule with the passing cases it speaks of, the
axis values covered, the resource figures the host lane measured, the sanitizer lanes that ran with their
control, and a grid of algorithm x block x dtype by lane (is this combination checked under that tool?).

Only what the journals hold is counted: a figure no ``ResourceRecord`` carries is not shown, and rules are
counted from the contract files given, which are checked against the digest each run recorded.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.contracts import Contract, Rule
from harness.journal import ResourceRecord
from harness.lanes import SANITIZER_TOOLS
from harness.report.verdicts import Lane, describe
from harness.statuses import Status

#: The axes of the coverage grid: a row per algorithm and block, a column per dtype (ipt folded in).
GRID = ("alg", "block", "dtype")
#: How the grid names a lane in a cell (a lane not listed is named by its first letter, upper-cased).
SHORT = {"host": "H", "simulator": "S", "gpu": "G", "gpu-racecheck": "R", "gpu-memcheck": "M",
         "gpu-initcheck": "I", "gpu-synccheck": "Y"}
FIGURES = ("registers", "shared_bytes", "barriers", "local_bytes", "stack_bytes")
_REJECTS = "rejects-statics"  # the one check that rejection cases, not run cases, exercise


def contracts_digest(paths: Iterable[Path]) -> str:
    """The digest a session records of its contract files (harness.session): sha256 of their sha256 lines."""
    lines = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in sorted(paths))
    return hashlib.sha256(lines.encode()).hexdigest()


def _contracts_note(lanes: Sequence[Lane], paths: Sequence[Path]) -> str:
    """Whether the rules were counted from the contracts each lane ran (a session records their digest)."""
    if not paths:
        return "No contract files given"
    digest = contracts_digest(paths)
    other = [lane.name for lane in lanes if lane.session.contracts_sha256 not in ("", digest)]
    unrecorded = [lane.name for lane in lanes if not lane.session.contracts_sha256]
    note = f"Rules counted from {', '.join(sorted(p.name for p in paths))} (digest {digest[:12]})"
    if other:
        note += f", which differ from the contracts lane{'s' * (len(other) > 1)} {', '.join(other)} ran"
    if unrecorded:
        note += f"; lane{'s' * (len(unrecorded) > 1)} {', '.join(unrecorded)} recorded no contracts digest"
    return note if other or unrecorded else note + ", the contracts every lane ran"


def _speaks_of(rule: Rule, params: dict[str, str]) -> bool:
    """``Rule.applies`` on an id's text values: a ``when`` may hold numbers (``ipt = [1]``)."""
    return all(params.get(axis) in {str(v) for v in values} for axis, values in rule.when.items())


def _rules(contract: Contract | None, passed: dict[str, list[dict[str, str]]]) -> list[dict[str, Any]]:
    """Each rule: its ``when`` and, per lane, how many of its passing checks of the rule's kind it speaks of."""
    if contract is None:
        return []
    rows = []
    for rule in contract.rules:
        kind = "reject" if rule.check == _REJECTS else "run"
        counts = {lane: sum(1 for params in cases if params["kind"] == kind and _speaks_of(rule, params))
                  for lane, cases in passed.items()}
        when = "; ".join(f"{axis}={','.join(map(str, values))}" for axis, values in rule.when.items())
        rows.append({"name": rule.name, "when": when or "every case",
                     "passed": {lane: n for lane, n in counts.items() if n}})
    return rows


def _axes(contract: Contract | None, passed: Iterable[dict[str, str]]) -> list[dict[str, Any]]:
    """Each axis: the values some passing check (no rejection: its parameters are none of the contract's axes)
    covered and, with the contract, the values none did."""
    seen: dict[str, dict[str, None]] = defaultdict(dict)
    for params in passed:
        for axis, value in params.items():
            if axis != "kind":
                seen[axis][value] = None
    declared = {axis: [str(v) for v in values] for axis, values in contract.axes.items()} if contract else {}
    order = list(declared) + [axis for axis in seen if axis not in declared]
    rows = []
    for axis in order:
        values = declared.get(axis, sorted(seen[axis]))
        rows.append({"axis": axis, "covered": [v for v in values if v in seen[axis]],
                     "not_covered": [v for v in values if v not in seen[axis]]})
    return rows


def _span(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high}"


def _resources(records: list[ResourceRecord]) -> list[dict[str, Any]]:
    """Per algorithm: kernels measured, each figure's range over them, and the forbidden opcodes found."""
    by_alg: dict[str, list[ResourceRecord]] = defaultdict(list)
    for record in records:
        by_alg[dict(describe(record.id).params).get("alg", "")].append(record)
    rows = []
    for alg, found in sorted(by_alg.items()):
        patterns = sorted({p for r in found for p in r.forbidden})
        hits = {p: sum(1 for r in found if r.forbidden.get(p)) for p in patterns}
        seen = [f"{p} in {n} of {len(found)} kernels" for p, n in hits.items() if n]
        forbidden = f"found: {'; '.join(seen)}" if seen else f"none found ({', '.join(patterns)})" if patterns \
            else "no forbidden opcode applies"
        rows.append({"alg": alg, "kernels": len(found), "forbidden": forbidden,
                     **{key: _span([r.figures[key] for r in found if key in r.figures]) if any(
                         key in r.figures for r in found) else "not recorded" for key in FIGURES}})
    return rows


def _sanitizers(lanes: Sequence[Lane], contract: str, backend: str) -> list[dict[str, Any]]:
    """Each compute-sanitizer tool: its lane's run checks of this contract x backend and whether its control
    was seen."""
    by_tool = {lane.tool: lane for lane in lanes if lane.tool is not None}
    rows = []
    for tool in SANITIZER_TOOLS:
        lane = by_tool.get(tool)
        if lane is None:
            rows.append({"tool": tool, "lane": f"gpu-{tool}", "passed": 0, "total": 0, "control": "did not run"})
            continue
        mine = [v for i, v in lane.cases.items() if (d := describe(i)).contract == contract and d.backend == backend
                and d.kind == "run"]
        control = ("not recorded" if not lane.controls else
                   "seen" if all(c.seen for c in lane.controls) else "not seen")
        rows.append({"tool": tool, "lane": lane.name, "passed": sum(1 for v in mine if v.status is Status.PASS),
                     "total": len(mine), "control": control})
    return rows


def _grid(cells: dict[tuple[str, ...], dict[str, list[int]]], contract: Contract | None) -> dict[str, Any]:
    """Cells of algorithm x block x dtype: per lane, checks passed of checks run (in the contract's order)."""
    order = {axis: {str(v): i for i, v in enumerate(contract.axes.get(axis, ()))} for axis in GRID} if contract \
        else {axis: {} for axis in GRID}

    def key(point: tuple[str, ...]) -> tuple[Any, ...]:
        return tuple((order[axis].get(value, len(order[axis])), value) for axis, value in zip(GRID, point, strict=True))

    rows = [{**dict(zip(GRID, point, strict=True)),
             "lanes": {lane: {"passed": n[0], "total": n[1]} for lane, n in by_lane.items()}}
            for point, by_lane in sorted(cells.items(), key=lambda item: key(item[0]))]
    dtypes = sorted({point[2] for point in cells}, key=lambda d: key(("", "", d)))
    return {"dtypes": dtypes, "cells": rows}


def section(lanes: Sequence[Lane], contracts: Sequence[Contract], paths: Sequence[Path]) -> dict[str, Any]:
    """The report's ``checked``: one entry per contract x backend that some lane checked."""
    known = {c.id: c for c in contracts}
    passed: dict[tuple[str, str], dict[str, list[dict[str, str]]]] = defaultdict(lambda: defaultdict(list))
    grids: dict[tuple[str, str], dict[tuple[str, ...], dict[str, list[int]]]] = defaultdict(dict)
    resources: dict[tuple[str, str], list[ResourceRecord]] = defaultdict(list)
    for lane in lanes:
        if lane.kind == "wheels":
            continue
        for case_id, verdict in lane.cases.items():
            info = describe(case_id)
            params = dict(info.params)
            cell = (info.contract, info.backend)
            if verdict.status is Status.PASS:
                passed[cell][lane.name].append({**params, "kind": info.kind})
            if info.kind != "reject" and all(axis in params for axis in GRID):
                count = grids[cell].setdefault(tuple(params[a] for a in GRID), {}).setdefault(lane.name, [0, 0])
                count[0] += verdict.status is Status.PASS
                count[1] += 1
        for record in lane.resources.values():
            info = describe(record.id)
            resources[info.contract, info.backend].append(record)
    entries = []
    for contract, backend in sorted(passed.keys() | grids.keys() | resources.keys()):
        found = passed[contract, backend]
        entries.append({
            "contract": contract, "backend": backend,
            "passed": {lane: len(cases) for lane, cases in found.items()},
            "rules": _rules(known.get(contract), found),
            "axes": _axes(known.get(contract), (p for cases in found.values() for p in cases if p["kind"] != "reject")),
            "resources": _resources(resources[contract, backend]),
            "sanitizers": _sanitizers(lanes, contract, backend),
            "grid": _grid(grids[contract, backend], known.get(contract)),
        })
    legend = {lane.name: SHORT.get(lane.name, lane.name[:1].upper()) for lane in lanes if lane.kind != "wheels"}
    return {"contracts": _contracts_note(lanes, paths), "grids": {"legend": legend}, "entries": entries}
