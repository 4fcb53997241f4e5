"""The backends side by side, per contract: each backend's final verdicts by status, and the lanes it ran in.

A column counts one verdict per case id, the worst over the lanes that ran it with the expectations applied
(as the pass rates do), so its Pass row is that backend's pass-rate numerator and its rows add up to its
checks of the contract. Every status the project defines has a row, zeros included, so that columns compare
row by row; a backend the journals name without a check of the contract gets an empty column.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from harness.expectations import Verdict
from harness.report.verdicts import Lane, describe
from harness.statuses import Status

#: The rows, in the order the statuses module defines them.
STATUSES = tuple(str(s) for s in Status)


def _column(verdicts: list[Verdict], lanes: Sequence[str]) -> dict[str, Any]:
    found = Counter(str(v.status) for v in verdicts)
    return {"total": len(verdicts), "accepted": sum(v.accepted for v in verdicts),
            "statuses": {s: found[s] for s in STATUSES}, "lanes": list(lanes)}


def section(lanes: Sequence[Lane], final: Mapping[str, Verdict], backends: Sequence[str]) -> dict[str, Any]:
    """The report's ``counts.side_by_side``: ``final`` (case id -> its final verdict) per contract, a column
    per backend of ``backends`` (in that order) with the lanes that ran its checks of the contract."""
    verdicts: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for case_id, verdict in final.items():
        info = describe(case_id)
        verdicts[info.contract, info.backend].append(verdict)
    ran: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)
    for lane in lanes:
        for case_id in lane.cases:
            info = describe(case_id)
            ran[info.contract, info.backend][lane.name] = None
    return {"backends": list(backends), "statuses": list(STATUSES), "contracts": [
        {"contract": contract,
         "columns": {b: _column(verdicts.get((contract, b), []), list(ran.get((contract, b), {}))) for b in backends}}
        for contract in sorted({contract for contract, _ in verdicts})]}
