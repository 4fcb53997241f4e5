"""The cutlass Warp Scan kernels on a GPU, launched through the adapter as the harness launches them (every case of
the kernel point, each in every data pattern of its operator, one block each) and judged by the family's oracle.

Every width, operator, mode, seed and aggregate output runs, on 1-D and 2-D blocks, NVIDIA/cccl#858's 49 threads of
width 7, a partial last hardware warp, a block of fewer than 32 threads and the largest block; a second launch with
another seed reuses the first's compile.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["warp.scan"]
#: The kernel points, each with its values of these axes.
AXES = ("width", "op", "mode", "seed", "aggregate", "dtype", "block")
KERNELS = [
    ("7", "sum", "exclusive", "none", "on", "int32", "49"),
    ("7", "matmul", "inclusive", "initial", "on", "uint16", "49"),
    ("24", "max", "exclusive", "initial", "off", "float32", "100"),
    ("8", "min", "inclusive", "none", "off", "float64", "13x5"),
    ("16", "sum", "inclusive", "initial", "on", "int8", "16x8"),
    ("32", "max", "exclusive", "none", "on", "float16", "7"),
    ("4", "min", "exclusive", "initial", "on", "uint64", "32"),
    ("2", "matmul", "exclusive", "none", "off", "int64", "100"),
    ("1", "sum", "exclusive", "initial", "on", "uint8", "1"),
    ("32", "sum", "inclusive", "none", "on", "int16", "1024"),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(kernel))
@pytest.mark.parametrize("seed", [20261201, 7])
def test_the_kernel_matches_the_oracle(kernel: tuple[str, ...], seed: int, launches_right: Callable[..., None]) -> None:
    values = {**dict(zip(AXES, kernel, strict=True)), "ipt": 1, "alg": "any"}
    launches_right(CONTRACT, tuple((axis, values[axis]) for axis in CONTRACT.kernel_axes), seed)


def test_the_kernels_cover_every_width_operator_mode_seed_and_aggregate() -> None:
    for position, axis in enumerate(AXES[:5]):
        assert {k[position] for k in KERNELS} == set(CONTRACT.axes[axis]), axis
