"""Every Warp Scan specialization (dtype x width x operator x mode x seed x aggregate) compiles for sm_90 without a
GPU, names its specialization, meets the contract's resource rules (no block barrier, no local memory, no CALL),
and fits a 1024-thread block.

By default the widths of NVIDIA/cccl#858 and of a whole hardware warp run for 8-byte items, every operator and
mode, with an initial value and the aggregate or with neither; the rest is ``slow``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import coopcheck
import numpy as np
import pytest
from coopcheck.warp_scan import AGGREGATES, ALGORITHMS, MODES, OPERATORS, SEEDS

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["warp.scan"]


def _params() -> list[object]:
    return [pytest.param(coopcheck.KernelSpec("warp.scan", dtype, (1024,), 1, "any", variant=(
                             ("width", width), ("op", op), ("mode", mode), ("seed", seed), ("aggregate", aggregate))),
                         id=f"{dtype}-w{width}-{op}-{mode}-{seed}-{aggregate}",
                         marks=() if dtype in ("int64", "float64") and width in ("7", "32")
                         and (seed == "initial") == (aggregate == "on") else pytest.mark.slow)
            for dtype, width, op, mode, seed, aggregate in product(coopcheck.DTYPES, CONTRACT.axes["width"],
                                                                   OPERATORS, MODES, SEEDS, AGGREGATES)
            if not (op == "matmul" and dtype.startswith("float"))]


@pytest.mark.parametrize("spec", _params())
def test_compiles_meets_the_resource_rules_and_fits_a_1024_thread_block(
        fits_a_1024_thread_block: Callable[..., coopcheck.Artifacts], spec: coopcheck.KernelSpec) -> None:
    artifacts = fits_a_1024_thread_block(spec, CONTRACT, ALGORITHMS)
    assert artifacts.dynamic_shared_bytes == 1024 * np.dtype(spec.dtype).itemsize  # an item a thread
