"""Every Scan specialization (dtype x items_per_thread x algorithm x operator x mode x seed) compiles for sm_90
without a GPU, names its specialization, meets the contract's resource rules (shared scratch and barriers, no local
memory, no CALL), and fits a 1024-thread block.

The block shape is a launch parameter, so a kernel must launch on every block the contract names: 1024 threads
leave 64 registers a thread. By default the heaviest corner runs (8-byte items at the contract's largest ipt, every
algorithm, operator, mode and seed it takes); the rest is ``slow``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import coopcheck
import pytest
from coopcheck.scan import ALGORITHMS, MODES, OPERATORS, SEEDS

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.scan"]


def _params() -> list[object]:
    largest = max(CONTRACT.axes["ipt"])
    return [pytest.param(coopcheck.KernelSpec("block.scan", dtype, (1024,), ipt, algorithm,
                                              variant=(("op", op), ("mode", mode), ("seed", seed))),
                         id=f"{dtype}-ipt{ipt}-{algorithm}-{op}-{mode}-{seed}",
                         marks=() if dtype in ("int64", "float64") and ipt == largest and mode == "exclusive"
                         else pytest.mark.slow)
            for dtype, ipt, algorithm, op, mode, seed in product(coopcheck.DTYPES, CONTRACT.axes["ipt"], ALGORITHMS,
                                                                 OPERATORS, MODES, SEEDS)
            if not (op == "matmul" and dtype.startswith("float"))]


@pytest.mark.parametrize("spec", _params())
def test_compiles_meets_the_resource_rules_and_fits_a_1024_thread_block(
        fits_a_1024_thread_block: Callable[..., coopcheck.Artifacts], spec: coopcheck.KernelSpec) -> None:
    artifacts = fits_a_1024_thread_block(spec, CONTRACT, ALGORITHMS)
    assert artifacts.dynamic_shared_bytes == (1024 + 32 + 1) * 8  # an item a thread, one a warp, the prefix
