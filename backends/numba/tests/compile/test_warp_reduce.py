"""Every Warp Reduce specialization (dtype x width x operator x mode) compiles for sm_90 without a GPU, names its
specialization, meets the contract's resource rules (no block barrier, no local memory, no CALL), and fits a
1024-thread block.

By default the widths of NVIDIA/cccl#858 and of a whole hardware warp run for 8-byte items, every operator and mode;
the rest is ``slow``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import coopcheck
import numpy as np
import pytest
from coopcheck.warp_reduce import ALGORITHMS, MODES, OPERATORS

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["warp.reduce"]


def _params() -> list[object]:
    return [pytest.param(coopcheck.KernelSpec("warp.reduce", dtype, (1024,), 1, "any",
                                              variant=(("width", width), ("op", op), ("mode", mode))),
                         id=f"{dtype}-w{width}-{op}-{mode}",
                         marks=() if dtype in ("int64", "float64") and width in ("7", "32") else pytest.mark.slow)
            for dtype, width, op, mode in product(coopcheck.DTYPES, CONTRACT.axes["width"], OPERATORS, MODES)
            if not (op == "matmul" and dtype.startswith("float"))]


@pytest.mark.parametrize("spec", _params())
def test_compiles_meets_the_resource_rules_and_fits_a_1024_thread_block(
        fits_a_1024_thread_block: Callable[..., coopcheck.Artifacts], spec: coopcheck.KernelSpec) -> None:
    artifacts = fits_a_1024_thread_block(spec, CONTRACT, ALGORITHMS)
    assert artifacts.dynamic_shared_bytes == 1024 * (np.dtype(spec.dtype).itemsize + 1)  # an item, a flag byte a thread
