"""The lane's one-line summary, counted from the journals' final verdicts (backends from the data).

A backend's *GPU checks* are its cases that passed. Where several backends ran, the line also says how many *case
points* (contract and parameters, whichever backend) passed on every backend that ran them; with one backend that
number would only repeat its count.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping

from harness import caseid
from harness.journal import CaseRecord
from harness.statuses import Status


def summary_line(finals: Mapping[str, CaseRecord], tool: str) -> str:
    """E.g. ``Passed: 1 cutlass GPU check, 2 numba GPU checks, under racecheck (1 of 2 case points passed on every
    backend that ran them)``."""
    passed: Counter[str] = Counter()
    points: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for record in finals.values():
        contract, backend, params = caseid.parse(record.id)
        ok = record.status is Status.PASS
        passed[backend] += ok
        points[contract, ",".join(f"{k}={v}" for k, v in params)].append(ok)
    parts = [f"{passed[b]} {b} GPU check{'' if passed[b] == 1 else 's'}" for b in sorted(passed)]
    line = f"Passed: {', '.join(parts) or 'no GPU check'}, under {tool}"
    if len(passed) > 1:
        line += (f" ({sum(all(oks) for oks in points.values())} of {len(points)} case points passed on every backend "
                 "that ran them)")
    return line
