"""Every Reduce specialization (dtype x items_per_thread x algorithm x operator) compiles for sm_90 without a GPU,
names its specialization, meets the contract's resource rules (shared scratch and barriers, no local memory, no
CALL), and fits a 1024-thread block.

The block shape is a launch parameter, so a kernel must launch on every block the contract names: 1024 threads
leave 64 registers a thread. By default the heaviest corner runs (8-byte items at the contract's largest ipt,
every algorithm and operator it takes); the rest is ``slow``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import coopcheck
import pytest
from coopcheck.reduce import ALGORITHMS, COMMUTATIVE, OPERATORS

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.reduce"]


def _params() -> list[object]:
    largest = max(CONTRACT.axes["ipt"])
    return [pytest.param(coopcheck.KernelSpec("block.reduce", dtype, (1024,), ipt, algorithm, variant=(("op", op),)),
                         id=f"{dtype}-ipt{ipt}-{algorithm}-{op}",
                         marks=() if dtype in ("int64", "float64") and ipt == largest else pytest.mark.slow)
            for dtype, ipt, algorithm, op in product(coopcheck.DTYPES, CONTRACT.axes["ipt"], ALGORITHMS, OPERATORS)
            if (algorithm != "raking_commutative_only" or op in COMMUTATIVE)
            and not (op == "matmul" and dtype.startswith("float"))]


@pytest.mark.parametrize("spec", _params())
def test_compiles_meets_the_resource_rules_and_fits_a_1024_thread_block(
        fits_a_1024_thread_block: Callable[..., coopcheck.Artifacts], spec: coopcheck.KernelSpec) -> None:
    artifacts = fits_a_1024_thread_block(spec, CONTRACT, ALGORITHMS)
    assert artifacts.dynamic_shared_bytes == 1024 * 8  # one item a thread
