"""The cutlass Shuffle kernels on a GPU, launched through the adapter as the harness launches them (every distance
the method takes at that kernel point, each in every data pattern, one block each) and judged by the family's
oracle.

Every method runs in place and into a separate output, on 1-D, 2-D and 3-D blocks, a partial last warp, a block of
fewer than 32 threads and one of 1024 (8-byte items, the largest ipt); a second launch with another seed reuses the
first's compile.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.shuffle"]
#: (method, output, dtype, block, ipt)
KERNELS = [
    ("offset", "inplace", "int32", "100", 1),
    ("offset", "separate", "float16", "5x3x2", 1),
    ("rotate", "inplace", "uint8", "16x8", 1),
    ("rotate", "separate", "float64", "7", 1),
    ("up", "inplace", "int16", "10x5", 3),
    ("up", "separate", "uint64", "32", 1),
    ("down", "separate", "float32", "8x4x2", 4),
    ("down", "inplace", "int8", "100", 2),
    ("up_suffix", "inplace", "uint32", "1024", 2),
    ("up_suffix", "separate", "int64", "5x3x2", 7),
    ("down_prefix", "inplace", "uint16", "16x8", 8),
    ("down_prefix", "separate", "float64", "1024", 8),  # the heaviest corner
]


def _id(kernel: tuple[str, str, str, str, int]) -> str:
    return "-".join(map(str, kernel))


@pytest.mark.parametrize("seed", [20261201, 7])
@pytest.mark.parametrize("kernel", KERNELS, ids=_id)
def test_the_kernel_matches_the_oracle(kernel: tuple[str, str, str, str, int], seed: int,
                                       launches_right: Callable[..., None]) -> None:
    method, output, dtype, block, ipt = kernel
    launches_right(CONTRACT, (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", method),
                                      ("output", output)), seed)


def test_the_kernels_cover_every_method_both_ways_and_every_block_shape() -> None:
    assert {(k[0], k[1]) for k in KERNELS} == {(m, o) for m in CONTRACT.axes["alg"] for o in CONTRACT.axes["output"]}
    assert {k[3] for k in KERNELS} == set(CONTRACT.axes["block"])
    assert {k[2] for k in KERNELS} == set(CONTRACT.axes["dtype"])
