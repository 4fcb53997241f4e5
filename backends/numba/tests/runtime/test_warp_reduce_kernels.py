"""The Warp Reduce contract kernels, launched through the adapter and judged by the family's oracle.

One launch per kernel, built as the harness builds it: every lanes value of that kernel point (valid lanes, or
flags), each in every data pattern of its operator, one block each. Every width, operator and mode runs, on 1-D and
2-D blocks, NVIDIA/cccl#858's 49 threads of width 7, a partial last hardware warp, a block of fewer than 32
threads and the largest block.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["warp.reduce"]
#: The family's kernel axes, and its kernels: (algorithm, dtype, block, items_per_thread, width, op, mode)
AXES = ("width", "op", "mode")
KERNELS = [
    ("any", "int32", "49", 1, "7", "sum", "reduce"),
    ("any", "uint16", "49", 1, "7", "matmul", "head"),
    ("any", "float32", "100", 1, "24", "first", "tail"),
    ("any", "float64", "13x5", 1, "8", "max", "reduce"),
    ("any", "int8", "16x8", 1, "16", "min", "head"),
    ("any", "float16", "7", 1, "32", "sum", "tail"),
    ("any", "uint64", "32", 1, "4", "first", "reduce"),
    ("any", "int64", "100", 1, "2", "matmul", "tail"),
    ("any", "uint8", "1", 1, "1", "max", "head"),
    ("any", "int16", "1024", 1, "32", "sum", "reduce"),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(map(str, kernel)))
def test_warp_reduce(launches_right: Callable[..., None], kernel: tuple[str, str, str, int, str, str, str]) -> None:
    launches_right(CONTRACT, AXES, kernel)


def test_the_kernels_cover_every_width_operator_and_mode() -> None:
    assert {k[4] for k in KERNELS} == set(CONTRACT.axes["width"])
    assert {k[5] for k in KERNELS} == set(CONTRACT.axes["op"])
    assert {k[6] for k in KERNELS} == set(CONTRACT.axes["mode"])
