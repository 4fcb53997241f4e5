"""The Warp Scan contract kernels, launched through the adapter and judged by the family's oracle.

One launch per kernel, built as the harness builds it: every seed value of that kernel point, each in every data
pattern of its operator, one block each. Every width, operator, mode, seed and aggregate output runs, on 1-D and 2-D
blocks, NVIDIA/cccl#858's 49 threads of width 7, a partial last hardware warp, a block of fewer than 32 threads and
the largest block.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["warp.scan"]
#: The family's kernel axes, and its kernels: (algorithm, dtype, block, items_per_thread, width, op, mode, seed,
#: aggregate)
AXES = ("width", "op", "mode", "seed", "aggregate")
KERNELS = [
    ("any", "int32", "49", 1, "7", "sum", "exclusive", "none", "on"),
    ("any", "uint16", "49", 1, "7", "matmul", "inclusive", "initial", "on"),
    ("any", "float32", "100", 1, "24", "sum", "inclusive", "initial", "off"),
    ("any", "float64", "13x5", 1, "8", "max", "exclusive", "initial", "on"),
    ("any", "int8", "16x8", 1, "16", "min", "inclusive", "none", "on"),
    ("any", "float16", "7", 1, "32", "min", "exclusive", "none", "off"),
    ("any", "uint64", "32", 1, "4", "max", "inclusive", "none", "off"),
    ("any", "int64", "100", 1, "2", "matmul", "exclusive", "initial", "off"),
    ("any", "uint8", "1", 1, "1", "sum", "exclusive", "initial", "on"),
    ("any", "int16", "1024", 1, "32", "sum", "inclusive", "initial", "on"),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(map(str, kernel)))
def test_warp_scan(launches_right: Callable[..., None], kernel: tuple[str, ...]) -> None:
    launches_right(CONTRACT, AXES, kernel)


def test_the_kernels_cover_every_width_operator_mode_seed_and_aggregate() -> None:
    for k, axis in enumerate(AXES, start=4):
        assert {kernel[k] for kernel in KERNELS} == set(CONTRACT.axes[axis]), axis
