"""The Exchange contract kernels, launched through the adapter and judged by the family's oracle.

One launch per kernel, built as the harness builds it: every rank pattern the method takes, each in every data
pattern, one block each. Every method runs, time-sliced and not, in place and into a separate output, on 1-D,
2-D and 3-D blocks, a partial last warp and a block of fewer than 32 threads; one more kernel exchanges more than
the 48 KiB of dynamic shared memory a launch gets without opting in.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.exchange"]
#: The family's kernel axes, and its kernels: (method, dtype, block, items_per_thread, slicing, output)
AXES = ("slicing", "output")
KERNELS = [
    ("striped_to_blocked", "uint8", "100", 3, "on", "inplace"),
    ("striped_to_blocked", "float64", "5x3x2", 2, "off", "separate"),
    ("blocked_to_striped", "int16", "16x8", 7, "on", "separate"),
    ("warp_striped_to_blocked", "float32", "64", 4, "off", "inplace"),
    ("blocked_to_warp_striped", "uint64", "8x4x2", 3, "on", "inplace"),
    ("scatter_to_blocked", "int32", "10x5", 2, "on", "inplace"),
    ("scatter_to_striped", "float16", "32", 8, "off", "separate"),
    ("scatter_to_striped_guarded", "int8", "128", 2, "on", "separate"),
    ("scatter_to_striped_guarded", "uint32", "5x3x2", 4, "off", "inplace"),
    ("scatter_to_striped_flagged", "int64", "64", 3, "on", "inplace"),
    ("scatter_to_striped_flagged", "uint16", "100", 1, "off", "separate"),
]
#: 1024 threads x 8 items x 8 bytes: 64 KiB of scratch unsliced.
LARGE_SCRATCH = [("blocked_to_striped", "float64", "1024", 8, "off", "inplace")]


@pytest.mark.parametrize("kernel", KERNELS + LARGE_SCRATCH, ids=lambda kernel: "-".join(map(str, kernel)))
def test_exchange(launches_right: Callable[..., None], kernel: tuple[str, str, str, int, str, str]) -> None:
    launches_right(CONTRACT, AXES, kernel)


def test_the_kernels_cover_every_method_both_ways() -> None:
    assert {k[0] for k in KERNELS} == set(CONTRACT.axes["alg"])
    assert {(k[4], k[5]) for k in KERNELS} == {(s, o) for s in ("off", "on") for o in ("inplace", "separate")}
