"""The plan tests' one judge: a host model of a family's contract kernel, run on one launch of every case of a
kernel point, judged by the family's oracle."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.families import family_of

from harness.cases import point_cases
from harness.contracts import Contract

SEED = 20261201

Point = tuple[tuple[str, Any], ...]
#: ``simulate(plan, inplace, batch)``: the ``dst`` the kernel of ``plan`` returns for ``batch``.
Simulate = Callable[[Any, bool, Any], np.ndarray]
PlanFailures = Callable[..., list[str]]


@pytest.fixture(scope="session")
def plan_failures() -> PlanFailures:
    """``(contract, point, make_plan, simulate, flipped=None)`` -> the oracle's failure lines for ``simulate`` run
    with ``make_plan(spec)``'s plan (with ``flipped``, that plan's fields in that subclass, which changes one
    decision) over one launch of every case of ``point``. A model's assertion (an access outside the scratch) is a
    failure line too: the GPU would show it."""
    def failures(contract: Contract, point: Point, make_plan: Callable[[coopcheck.KernelSpec], Any],
                 simulate: Simulate, flipped: type | None = None) -> list[str]:
        oracle: Any = contract.oracle
        cases = point_cases(contract, "cutlass", point)
        launch = oracle.build(cases[0].spec, cases, SEED)
        spec, snap = launch.spec, oracle.snapshot(launch.batch)
        plan = make_plan(spec)
        if flipped is not None:
            plan = flipped(**{f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)})
        try:
            got = simulate(plan, spec.static("output") == "inplace", launch.batch)
        except AssertionError as outside:
            return [str(outside)]
        assert got.shape == (launch.batch.n_blocks * family_of(spec).out_length(spec),)
        found = oracle.block_failures(spec, snap, got)
        return found + [v.detail for v in oracle.judge(launch, snap, got) if not v.passed]

    return failures
