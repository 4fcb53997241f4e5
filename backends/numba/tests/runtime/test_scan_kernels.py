"""The Scan contract kernels, launched through the adapter and judged by the family's oracle.

One launch per kernel, built as the harness builds it: every seed value of that kernel point, each in every data
pattern of its operator, one block each. Every algorithm, operator, mode and seed runs, on 1-D, 2-D and 3-D blocks, a
lone thread, one warp, and the 65-thread blocks whose last warp holds one thread (raking's segments are uneven
there); the prefix callback's running prefix is carried across three tiles.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.scan"]
#: The family's kernel axes, and its kernels: (algorithm, dtype, block, items_per_thread, op, mode, seed)
AXES = ("op", "mode", "seed")
KERNELS = [
    ("raking", "int8", "65", 1, "sum", "inclusive", "prefix"),
    ("raking", "float32", "13x5", 2, "min", "exclusive", "initial"),
    ("raking", "uint16", "32", 4, "matmul", "exclusive", "prefix"),
    ("raking", "float64", "1", 7, "sum", "exclusive", "none"),
    ("raking_memoize", "int32", "8x4x2", 2, "max", "inclusive", "initial"),
    ("raking_memoize", "float16", "65", 1, "sum", "inclusive", "none"),
    ("raking_memoize", "uint64", "16x8", 1, "matmul", "inclusive", "none"),
    ("warp_scans", "int64", "65", 2, "matmul", "inclusive", "initial"),
    ("warp_scans", "float32", "16x8", 1, "max", "exclusive", "prefix"),
    ("warp_scans", "uint8", "1", 16, "min", "exclusive", "none"),
    ("warp_scans", "int16", "13x5", 4, "sum", "exclusive", "initial"),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(map(str, kernel)))
def test_scan(launches_right: Callable[..., None], kernel: tuple[str, str, str, int, str, str, str]) -> None:
    launches_right(CONTRACT, AXES, kernel)


def test_the_kernels_cover_every_algorithm_operator_mode_and_seed() -> None:
    assert {k[0] for k in KERNELS} == set(CONTRACT.axes["alg"])
    for position, axis in enumerate(AXES, start=4):
        assert {k[position] for k in KERNELS} == set(CONTRACT.axes[axis]), axis
