"""The representative kernels: a test taking ``representative`` runs once per kernel of a small set
that covers every operation x algorithm and every dtype, block shape and items-per-thread of the
contracts' grid. (Markers come from the path, in the root conftest.)"""

from __future__ import annotations

from math import prod

import coopcheck
import pytest

#: Kernels per operation x algorithm; 3 x 10 = 30 walk each axis of the grid at least twice.
_PER_PAIR = 3


def representative() -> list[coopcheck.KernelSpec]:
    """Kernel k takes the k-th value of each axis, cycling (warp_transpose moves on to the next
    block whose thread count is a warp multiple)."""
    from harness.contracts import load_contracts, parse_block

    axes = {c.operation: c.axes for c in load_contracts()}
    specs, k = [], 0
    for operation in coopcheck.OPERATIONS:
        dtypes, ipts = axes[operation]["dtype"], axes[operation]["ipt"]
        blocks = [parse_block(b) for b in axes[operation]["block"]]
        for algorithm in coopcheck.ALGORITHMS:
            for _ in range(_PER_PAIR):
                shift = 0
                while algorithm == "warp_transpose" and prod(blocks[(k + shift) % len(blocks)]) % 32:
                    shift += 1
                specs.append(coopcheck.KernelSpec(operation, dtypes[k % len(dtypes)], blocks[(k + shift) % len(blocks)],
                                             ipts[k % len(ipts)], algorithm))
                k += 1
    return specs


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "representative" in metafunc.fixturenames:
        metafunc.parametrize("representative", representative())

