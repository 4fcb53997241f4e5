"""The cutlass Exchange kernels on a GPU, launched through the adapter as the harness launches them (every rank
pattern the method takes, each in every data pattern, one block each) and judged by the family's oracle.

Every method runs, time-sliced and not, in place and into a separate output, on 1-D, 2-D and 3-D blocks, a
partial last warp (block methods) and a block of fewer than 32 threads (a warp method's warp barrier then waits
for 30 lanes); one kernel takes 64 KiB of scratch, past the 48 KiB a launch gets without opting in. A second
launch with another seed reuses the first's compile.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.exchange"]
#: (method, slicing, output, dtype, block, ipt)
KERNELS = [
    ("striped_to_blocked", "on", "separate", "int8", "100", 7),
    ("striped_to_blocked", "off", "inplace", "float32", "8x4x2", 3),
    ("blocked_to_striped", "on", "inplace", "uint64", "10x5", 2),
    ("blocked_to_striped", "off", "separate", "float16", "1024", 1),
    ("warp_striped_to_blocked", "off", "inplace", "int16", "5x3x2", 4),
    ("warp_striped_to_blocked", "on", "separate", "uint32", "16x8", 2),
    ("blocked_to_warp_striped", "off", "separate", "float64", "128", 3),
    ("blocked_to_warp_striped", "on", "inplace", "uint8", "32", 8),
    ("scatter_to_blocked", "off", "separate", "int32", "100", 4),
    ("scatter_to_striped", "on", "inplace", "int64", "5x3x2", 3),
    ("scatter_to_striped_guarded", "off", "inplace", "uint16", "64", 7),
    ("scatter_to_striped_guarded", "on", "separate", "float32", "10x5", 8),
    ("scatter_to_striped_flagged", "off", "separate", "uint8", "16x8", 1),
    ("scatter_to_striped_flagged", "on", "inplace", "float64", "1024", 2),
    ("blocked_to_striped", "off", "inplace", "float64", "1024", 8),  # 64 KiB of scratch
]


def _id(kernel: tuple[str, str, str, str, str, int]) -> str:
    return "-".join(map(str, kernel))


@pytest.mark.parametrize("seed", [20261201, 7])
@pytest.mark.parametrize("kernel", KERNELS, ids=_id)
def test_the_kernel_matches_the_oracle(kernel: tuple[str, str, str, str, str, int], seed: int,
                                       launches_right: Callable[..., None]) -> None:
    method, slicing, output, dtype, block, ipt = kernel
    point = (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", method), ("slicing", slicing),
             ("output", output))
    launches_right(CONTRACT, point, seed)


def test_the_kernels_cover_every_method_both_ways_and_every_block_shape() -> None:
    assert {k[0] for k in KERNELS} == set(CONTRACT.axes["alg"])
    assert {(k[1], k[2]) for k in KERNELS} == {(s, o) for s in ("off", "on") for o in ("inplace", "separate")}
    assert {k[4] for k in KERNELS} == set(CONTRACT.axes["block"])
    assert {k[3] for k in KERNELS} == set(CONTRACT.axes["dtype"])
