"""Runtime tests launch the contract kernels on a GPU (the ``adapter`` fixture fails, not skips, without one)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import coopcheck
import pytest

from harness.cases import point_cases
from harness.contracts import Contract

ARCH = "sm_90"
#: Failure lines an assertion shows.
SHOWN = 8

Point = tuple[tuple[str, Any], ...]


@pytest.fixture(scope="module")
def launches_right(adapter: coopcheck.Adapter) -> Callable[[ModuleType, Contract, Point, int], None]:
    """Launch the contract kernel of a kernel ``point`` as the harness does and judge it by the family's
    ``oracle``: one launch of every case of that point, each in every data pattern, one block each, its data drawn
    from ``seed``. Every block and every case must pass."""
    def check(oracle: ModuleType, contract: Contract, point: Point, seed: int) -> None:
        cases = point_cases(contract, "cutlass", point)
        launch = oracle.build(cases[0].spec, cases, seed)
        before = oracle.snapshot(launch.batch)
        got = adapter.launch(adapter.compile(launch.spec, arch=ARCH), launch.spec, launch.batch)
        failures = oracle.block_failures(launch.spec, before, got)
        failures += [v.detail for v in oracle.judge(launch, before, got) if not v.passed]
        assert not failures, (f"{coopcheck.kernel_symbol(launch.spec, include_block=True)}:\n"
                              + "\n".join(failures[:SHOWN]))

    return check
