"""Every Exchange specialization (dtype x items_per_thread x method x slicing x output) compiles for sm_90 without
a GPU, names its specialization, meets the contract's resource rules, and fits a 1024-thread block.

The block shape is a launch parameter, so a kernel must launch on every block the contract names: 1024 threads
leave 64 registers a thread. By default the heaviest corner runs (8-byte items, ipt 8: every method, sliced and
not, both outputs); the host lane compiles and inspects the pr profile's kernels, the rest is ``slow``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import coopcheck
import pytest
from coopcheck.exchange import METHODS, OUTPUTS, SLICING

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.exchange"]


def _params() -> list[object]:
    heaviest = ("float64", 8)
    return [pytest.param(coopcheck.KernelSpec("block.exchange", dtype, (1024,), ipt, method,
                                              variant=(("slicing", slicing), ("output", output))),
                         id=f"{dtype}-ipt{ipt}-{method}-{slicing}-{output}",
                         marks=() if (dtype, ipt) == heaviest else pytest.mark.slow)
            for dtype, ipt, method, slicing, output in product(coopcheck.DTYPES, CONTRACT.axes["ipt"], METHODS,
                                                               SLICING, OUTPUTS)]


@pytest.mark.parametrize("spec", _params())
def test_compiles_meets_the_resource_rules_and_fits_a_1024_thread_block(
        fits_a_1024_thread_block: Callable[..., coopcheck.Artifacts], spec: coopcheck.KernelSpec) -> None:
    artifacts = fits_a_1024_thread_block(spec, CONTRACT, METHODS)
    warp_share = 32 * spec.items_per_thread * 8
    assert artifacts.dynamic_shared_bytes == (warp_share if spec.static("slicing") == "on" else 1024 * warp_share // 32)
