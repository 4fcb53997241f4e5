"""The cutlass Reduce kernels on a GPU, launched through the adapter as the harness launches them (every valid_items
class of the kernel point, each in every data pattern of its operator, one block each) and judged by the family's
oracle.

Every algorithm runs with every operator it takes, on 1-D, 2-D and 3-D blocks, a partial last warp, the 65-thread
block of NVIDIA/cccl#1902, blocks of fewer than 32 threads and one of 1024 (8-byte items, ipt 16: the commutative
path and matmul); a second launch with another seed reuses the first's compile.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from coopcheck.reduce import COMMUTATIVE

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.reduce"]
#: The kernel points, each with its values of these axes.
AXES = ("alg", "op", "dtype", "block", "ipt")
KERNELS = [
    ("raking", "sum", "int8", "65", 3),
    ("raking", "min", "float32", "13x5", 2),
    ("raking", "max", "uint16", "1", 16),
    ("raking", "matmul", "uint32", "16x8", 4),
    ("raking", "first", "float16", "7", 7),
    ("raking_commutative_only", "sum", "float64", "1024", 16),  # the heaviest float corner
    ("raking_commutative_only", "min", "int16", "100", 2),  # a partial last warp: the raking fallback
    ("raking_commutative_only", "max", "float32", "16x8", 1),
    ("warp_reductions", "sum", "uint64", "8x4x2", 4),
    ("warp_reductions", "min", "uint8", "32", 3),
    ("warp_reductions", "max", "float16", "65", 1),
    ("warp_reductions", "matmul", "int64", "1024", 16),  # the heaviest integer corner
    ("warp_reductions", "first", "int32", "100", 7),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(map(str, kernel)))
@pytest.mark.parametrize("seed", [20261201, 7])
def test_the_kernel_matches_the_oracle(kernel: tuple[str, str, str, str, int], seed: int,
                                       launches_right: Callable[..., None]) -> None:
    values = dict(zip(AXES, kernel, strict=True))
    launches_right(CONTRACT, tuple((axis, values[axis]) for axis in CONTRACT.kernel_axes), seed)


def test_the_kernels_cover_every_algorithm_with_every_operator_it_takes_every_block_shape_and_dtype() -> None:
    assert {(k[0], k[1]) for k in KERNELS} == {(a, o) for a in CONTRACT.axes["alg"] for o in CONTRACT.axes["op"]
                                                if a != "raking_commutative_only" or o in COMMUTATIVE}
    assert {k[3] for k in KERNELS} == set(CONTRACT.axes["block"])
    assert {k[2] for k in KERNELS} == set(CONTRACT.axes["dtype"])
