"""The cutlass Warp Reduce kernels on a GPU, launched through the adapter as the harness launches them (every lanes
value of the kernel point, valid lanes or flags, each in every data pattern of its operator, one block each) and
judged by the family's oracle.

Every width, operator and mode runs, on 1-D and 2-D blocks, NVIDIA/cccl#858's 49 threads of width 7, a partial last
hardware warp, a block of fewer than 32 threads and the largest block; a second launch with another seed reuses the
first's compile.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["warp.reduce"]
#: The kernel points, each with its values of these axes.
AXES = ("width", "op", "mode", "dtype", "block")
KERNELS = [
    ("7", "sum", "reduce", "int32", "49"),
    ("7", "matmul", "head", "uint16", "49"),
    ("24", "first", "tail", "float32", "100"),
    ("8", "max", "reduce", "float64", "13x5"),
    ("16", "min", "head", "int8", "16x8"),
    ("32", "sum", "tail", "float16", "7"),
    ("4", "first", "reduce", "uint64", "32"),
    ("2", "matmul", "tail", "int64", "100"),
    ("1", "max", "head", "uint8", "1"),
    ("32", "sum", "reduce", "int16", "1024"),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(kernel))
@pytest.mark.parametrize("seed", [20261201, 7])
def test_the_kernel_matches_the_oracle(kernel: tuple[str, ...], seed: int, launches_right: Callable[..., None]) -> None:
    values = {**dict(zip(AXES, kernel, strict=True)), "ipt": 1, "alg": "any"}
    launches_right(CONTRACT, tuple((axis, values[axis]) for axis in CONTRACT.kernel_axes), seed)


def test_the_kernels_cover_every_width_operator_and_mode() -> None:
    for position, axis in enumerate(AXES[:3]):
        assert {k[position] for k in KERNELS} == set(CONTRACT.axes[axis]), axis
