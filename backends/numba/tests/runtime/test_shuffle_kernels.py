"""The Shuffle contract kernels, launched through the adapter and judged by the family's oracle.

One launch per kernel, built as the harness builds it: every distance the method takes at that kernel point, each
in every data pattern, one block each. Every method runs, in place and into a separate output, on 1-D, 2-D and
3-D blocks, a partial last warp, a block of fewer than 32 threads and one of 1024.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.shuffle"]
#: The family's kernel axes, and its kernels: (method, dtype, block, items_per_thread, output)
AXES = ("output",)
KERNELS = [
    ("offset", "int32", "100", 1, "inplace"),
    ("offset", "float16", "5x3x2", 1, "separate"),
    ("rotate", "uint8", "16x8", 1, "inplace"),
    ("rotate", "float64", "7", 1, "separate"),
    ("up", "int16", "10x5", 3, "inplace"),
    ("up", "uint64", "32", 1, "separate"),
    ("down", "float32", "8x4x2", 4, "separate"),
    ("down", "int8", "100", 2, "inplace"),
    ("up_suffix", "uint32", "1024", 2, "inplace"),
    ("up_suffix", "int64", "5x3x2", 7, "separate"),
    ("down_prefix", "uint16", "16x8", 8, "inplace"),
    ("down_prefix", "float64", "10x5", 3, "separate"),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: "-".join(map(str, kernel)))
def test_shuffle(launches_right: Callable[..., None], kernel: tuple[str, str, str, int, str]) -> None:
    launches_right(CONTRACT, AXES, kernel)


def test_the_kernels_cover_every_method_both_ways() -> None:
    assert {k[0] for k in KERNELS} == set(CONTRACT.axes["alg"])
    for method in CONTRACT.axes["alg"]:
        assert {k[4] for k in KERNELS if k[0] == method} == {"inplace", "separate"}
