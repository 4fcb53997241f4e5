"""The Reduce contract kernels, launched through the adapter and judged by the family's oracle.

One launch per kernel, built as the harness builds it: every valid_items boundary of that kernel point, each in
every data pattern of its operator, one block each. Every algorithm and operator runs, on 1-D, 2-D and 3-D blocks,
the 65-thread blocks of NVIDIA/cccl#1902, a partial last warp, a block of fewer than 32 threads and one of whole
warps (raking_commutative_only's own path as well as its fallback).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.reduce"]
#: The family's kernel axes, and its kernels: (algorithm, dtype, block, items_per_thread, op)
AXES = ("op",)
KERNELS = [
    ("raking", "int8", "65", 1, "sum"),
    ("raking", "float32", "13x5", 3, "first"),
    ("raking", "uint16", "7", 2, "matmul"),
    ("raking", "float64", "100", 1, "min"),
    ("raking_commutative_only", "int32", "8x4x2", 2, "sum"),
    ("raking_commutative_only", "float16", "65", 1, "max"),
    ("raking_commutative_only", "uint64", "32", 4, "min"),
    ("warp_reductions", "int64", "65", 2, "first"),
    ("warp_reductions", "float32", "16x8", 1, "sum"),
    ("warp_reductions", "uint8", "1", 7, "max"),
    ("warp_reductions", "int16", "100", 3, "matmul"),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(map(str, kernel)))
def test_reduce(launches_right: Callable[..., None], kernel: tuple[str, str, str, int, str]) -> None:
    launches_right(CONTRACT, AXES, kernel)


def test_the_kernels_cover_every_algorithm_and_operator() -> None:
    assert {k[0] for k in KERNELS} == set(CONTRACT.axes["alg"])
    assert {k[4] for k in KERNELS} == set(CONTRACT.axes["op"])
