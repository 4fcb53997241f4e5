"""Runtime tests launch kernels: on a GPU, or in numba's CUDA simulator, never silently neither."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import coopcheck
import pytest

from harness.contracts import Contract
from harness.oracles.launch import point_failures


@pytest.fixture(scope="session")
def adapter() -> coopcheck.Adapter:
    """The registered numba adapter, failing (not skipping) where it cannot launch."""
    adapter = coopcheck.register("numba")
    if not adapter.can_launch():
        pytest.fail(
            "runtime tests launch kernels and this process has neither a GPU nor numba's simulator; "
            "try: NUMBA_ENABLE_CUDASIM=1 pytest backends/numba/tests/runtime (the variable must be "
            "set before numba is imported, so not in a process that ran the compile tests)",
            pytrace=False,
        )
    return adapter


@pytest.fixture(scope="session")
def launches_right(adapter: coopcheck.Adapter) -> Callable[[Contract, Sequence[str], tuple[Any, ...]], None]:
    """Launch a family's contract kernel as the harness does and judge it by the family's oracle: ``kernel`` is
    (method, dtype, block, items_per_thread, then the values of the family's kernel ``axes``); one launch of every
    case of that kernel point, each in every data pattern, one block each. Every block and case must pass."""
    def check(contract: Contract, axes: Sequence[str], kernel: tuple[Any, ...]) -> None:
        method, dtype, block, ipt, *values = kernel
        point = (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", method), *zip(axes, values, strict=True))
        failures = point_failures(adapter, contract, point, 20261129)
        assert not failures, f"{dict(point)}:\n" + "\n".join(failures[:8])

    return check
