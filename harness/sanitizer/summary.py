"""The lane's one-line summary, counted from the journals' final verdicts (backends from the data).

A *shared-contract check* is a case point (contract and parameters, whichever backend) that
passed on every backend that ran it; a backend's *GPU checks* are its cases that passed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping

from harness import caseid
from harness.journal import CaseRecord
from harness.statuses import Status


def summary_line(finals: Mapping[str, CaseRecord], tool: str) -> str:
    """E.g. ``Passed: 1 shared-contract checks, 2 numba GPU checks, 1 cutlass GPU checks, under racecheck``.

    >>> from harness.journal import CaseRecord
    >>> v = [CaseRecord("block.load/numba/ipt=1", Status.PASS, "gpu-racecheck"),
    ...      CaseRecord("block.load/numba/ipt=2", Status.PASS, "gpu-racecheck"),
    ...      CaseRecord("block.load/cutlass/ipt=1", Status.PASS, "gpu-racecheck"),
    ...      CaseRecord("block.load/cutlass/ipt=2", Status.SANITIZER_ERROR, "gpu-racecheck")]
    >>> summary_line({r.id: r for r in v}, "racecheck")
    'Passed: 1 shared-contract checks, 1 cutlass GPU checks, 2 numba GPU checks, under racecheck'
    """
    passed: Counter[str] = Counter()
    points: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for record in finals.values():
        contract, backend, params = caseid.parse(record.id)
        ok = record.status is Status.PASS
        passed[backend] += ok
        points[contract, ",".join(f"{k}={v}" for k, v in params)].append(ok)
    shared = sum(all(oks) for oks in points.values())
    parts = [f"{shared} shared-contract checks"] + [f"{passed[b]} {b} GPU checks" for b in sorted(passed)]
    return f"Passed: {', '.join(parts)}, under {tool}"
