"""An oracle's verdicts on a hand-written implementation of its family's ABI over the pr kernel points: how the
oracle tests hold a family's oracle to a sequential reference and to known wrong implementations made from it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import coopcheck
import numpy as np

from harness.cases import kernel_points, point_cases
from harness.contracts import Contract

#: ``dst`` of a launch from its spec and batch, or None where the implementation does not apply (not judged).
Implementation = Callable[[coopcheck.KernelSpec, Any], np.ndarray | None]


def pr_verdicts(contract: Contract, implementation: Implementation) -> tuple[int, int, Counter[str]]:
    """(cases judged, failing, diagnoses named) of ``implementation`` over the pr kernel points it takes."""
    oracle: Any = contract.oracle
    judged = failing = 0
    named: Counter[str] = Counter()
    for point in kernel_points(contract, "pr"):
        cases = point_cases(contract, "reference", point)
        launch = oracle.build(cases[0].spec, cases, 11)
        before = oracle.snapshot(launch.batch)
        out = implementation(launch.spec, launch.batch)
        if out is None:
            continue
        for verdict in oracle.judge(launch, before, out):
            judged += 1
            failing += not verdict.passed
            named.update(verdict.diagnoses)
    return judged, failing, named


def when(applies: Callable[[coopcheck.KernelSpec], bool], implementation: Implementation) -> Implementation:
    """``implementation`` at the specs ``applies`` takes; not judged elsewhere."""
    return lambda spec, batch: implementation(spec, batch) if applies(spec) else None


def assert_caught_and_named(contract: Contract, implementation: Implementation, caught: float, diagnosis: str,
                            explained: float) -> None:
    """``implementation`` fails at least ``caught`` of the cases it is judged in, and ``diagnosis`` explains at least
    ``explained`` of its failures."""
    judged, failing, named = pr_verdicts(contract, implementation)
    assert judged and failing >= caught * judged, (failing, judged)
    assert named[diagnosis] >= explained * failing, (named, failing)
