"""The cutlass Scan kernels on a GPU, launched through the adapter as the harness launches them (every seed value of
the kernel point, each in every data pattern of its operator, one block each) and judged by the family's oracle.

Every algorithm runs with every operator, both modes and every seed (the prefix callback over three tiles), on 1-D,
2-D and 3-D blocks, a lone thread and a lone warp (raking's warp-synchronous path), a partial last warp (65 and
13x5: uneven raking segments) and 1024 threads (8-byte items, ipt 16: raking_memoize's register budget); a second
launch with another seed reuses the first's compile.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.scan"]
#: The kernel points, each with its values of these axes.
AXES = ("alg", "op", "mode", "seed", "dtype", "block", "ipt")
KERNELS = [
    ("raking", "sum", "inclusive", "none", "int8", "65", 7),
    ("raking", "min", "exclusive", "initial", "float32", "13x5", 2),
    ("raking", "max", "inclusive", "prefix", "uint16", "1", 16),
    ("raking", "matmul", "exclusive", "prefix", "uint32", "32", 4),
    ("raking_memoize", "sum", "exclusive", "prefix", "float64", "1024", 16),  # the heaviest float corner
    ("raking_memoize", "min", "inclusive", "none", "int16", "16x8", 1),
    ("raking_memoize", "max", "exclusive", "initial", "float16", "65", 2),
    ("raking_memoize", "matmul", "inclusive", "initial", "uint64", "13x5", 7),
    ("warp_scans", "sum", "exclusive", "none", "uint64", "8x4x2", 4),
    ("warp_scans", "min", "inclusive", "prefix", "uint8", "65", 1),
    ("warp_scans", "max", "exclusive", "none", "int32", "1", 1),
    ("warp_scans", "matmul", "exclusive", "initial", "int64", "1024", 16),  # the heaviest integer corner
    ("warp_scans", "sum", "inclusive", "initial", "float16", "32", 2),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(map(str, kernel)))
@pytest.mark.parametrize("seed", [20261201, 7])
def test_the_kernel_matches_the_oracle(kernel: tuple[str, str, str, str, str, str, int], seed: int,
                                       launches_right: Callable[..., None]) -> None:
    values = dict(zip(AXES, kernel, strict=True))
    launches_right(CONTRACT, tuple((axis, values[axis]) for axis in CONTRACT.kernel_axes), seed)


def test_the_kernels_cover_every_algorithm_with_every_operator_and_every_axis_value() -> None:
    assert {(k[0], k[1]) for k in KERNELS} == {(a, o) for a in CONTRACT.axes["alg"] for o in CONTRACT.axes["op"]}
    for position, axis in enumerate(AXES[2:], start=2):
        assert {k[position] for k in KERNELS} == set(CONTRACT.axes[axis]), axis
