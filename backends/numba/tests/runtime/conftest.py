"""Runtime tests launch kernels: on a GPU, or in numba's CUDA simulator, never silently neither."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import coopcheck
import pytest

from harness.cases import point_cases
from harness.contracts import Contract


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
def launches_right(adapter: coopcheck.Adapter) -> Callable[[ModuleType, Contract, Sequence[str], tuple[Any, ...]],
                                                           None]:
    """Launch a family's contract kernel as the harness does and judge it by the family's oracle: ``kernel`` is
    (method, dtype, block, items_per_thread, then the values of the family's kernel ``axes``); one launch of every
    case of that kernel point, each in every data pattern, one block each. Every block and case must pass."""
    def check(oracle: ModuleType, contract: Contract, axes: Sequence[str], kernel: tuple[Any, ...]) -> None:
        method, dtype, block, ipt, *values = kernel
        point = (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", method), *zip(axes, values, strict=True))
        cases = point_cases(contract, "numba", point)
        launch = oracle.build(cases[0].spec, cases, 20261129)
        snap = oracle.snapshot(launch.batch)
        out = adapter.launch(adapter.compile(launch.spec, arch="sm_90"), launch.spec, launch.batch)
        failures = oracle.block_failures(launch.spec, snap, out)
        assert not failures, (f"{coopcheck.kernel_symbol(launch.spec, include_block=True)}:\n"
                              + "\n".join(failures[:8]))
        verdicts = oracle.judge(launch, snap, out)
        assert all(v.passed for v in verdicts), [v.detail for v in verdicts if not v.passed][:2]

    return check
