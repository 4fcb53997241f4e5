"""The plan tests' one judge (a host model of a family's contract kernel, run on one launch of every case of a
kernel point, judged by the family's oracle) and the reducing families' device operators on NumPy arrays."""

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
from harness.oracles.operands import matmul
from harness.oracles.values import raw_view

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


def _operate(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``op(a, b)`` elementwise, as the device operators compute it: integers wrap, float min and max ignore a NaN
    operand (a signalling one too) and select an operand bit for bit, matmul multiplies the packed matrices."""
    if op == "sum":
        with np.errstate(over="ignore", invalid="ignore"):
            return a + b
    if op == "matmul":
        width = a.dtype.itemsize * 8
        product = matmul(raw_view(a).astype(np.uint64), raw_view(b).astype(np.uint64), width // 4)
        return product.astype(f"uint{width}").view(a.dtype)
    if op == "first":
        return np.where(a == 0, b, a)
    with np.errstate(invalid="ignore"):
        takes_b = (b < a) if op == "min" else (a < b)
        if a.dtype.kind == "f":
            takes_b = np.isnan(a) | (~np.isnan(b) & takes_b)
    return np.where(takes_b, b, a)


@pytest.fixture(scope="session")
def operate() -> Callable[[str, np.ndarray, np.ndarray], np.ndarray]:
    """``operate(op, a, b)``: the Reduce and Scan operators as the device computes them, on NumPy arrays."""
    return _operate
