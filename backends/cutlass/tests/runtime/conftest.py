"""Runtime tests launch the contract kernels on a GPU (the ``adapter`` fixture fails, not skips, without one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import coopcheck
import pytest

from harness.contracts import Contract
from harness.oracles.launch import point_failures

ARCH = "sm_90"
#: Failure lines an assertion shows.
SHOWN = 8

Point = tuple[tuple[str, Any], ...]


@pytest.fixture(scope="module")
def launches_right(adapter: coopcheck.Adapter) -> Callable[[Contract, Point, int], None]:
    """Launch the contract kernel of a kernel ``point`` as the harness does and judge it by the family's
    ``oracle``: one launch of every case of that point, each in every data pattern, one block each, its data drawn
    from ``seed``. Every block and every case must pass."""
    def check(contract: Contract, point: Point, seed: int) -> None:
        failures = point_failures(adapter, contract, point, seed, ARCH)
        assert not failures, f"{dict(point)}:\n" + "\n".join(failures[:SHOWN])

    return check
