"""Every Shuffle specialization (dtype x items_per_thread x method x output) compiles for sm_90 without a GPU, names
its specialization, meets the contract's resource rules, and fits a 1024-thread block.

The block shape is a launch parameter, so a kernel must launch on every block the contract names: 1024 threads
leave 64 registers a thread. By default the heaviest corner runs (8-byte items at the contract's largest ipt,
every method, both outputs); the rest is ``slow``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import coopcheck
import pytest
from coopcheck.shuffle import METHODS, OUTPUTS, SCALAR

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.shuffle"]


def _params() -> list[object]:
    largest = max(CONTRACT.axes["ipt"])
    return [pytest.param(coopcheck.KernelSpec("block.shuffle", dtype, (1024,), ipt, method,
                                              variant=(("output", output),)),
                         id=f"{dtype}-ipt{ipt}-{method}-{output}",
                         marks=() if dtype == "float64" and ipt in (1, largest) else pytest.mark.slow)
            for dtype, ipt, method, output in product(coopcheck.DTYPES, CONTRACT.axes["ipt"], METHODS, OUTPUTS)
            if ipt == 1 or method not in SCALAR]


@pytest.mark.parametrize("spec", _params())
def test_compiles_meets_the_resource_rules_and_fits_a_1024_thread_block(
        fits_a_1024_thread_block: Callable[..., coopcheck.Artifacts], spec: coopcheck.KernelSpec) -> None:
    artifacts = fits_a_1024_thread_block(spec, CONTRACT, METHODS)
    assert artifacts.dynamic_shared_bytes == 1024 * 8  # one item a thread, as CUB's TempStorage
