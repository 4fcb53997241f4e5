"""The public device functions inside a user's own kernel: Load then Store through two algorithms
(the second reusing the first's scratch), several tiles in a loop, and the default arguments."""

from __future__ import annotations

import coopcheck
import coopcheck_numba
import numpy as np
import pytest
from numba import cuda, types

BLOCK = (16, 4)
THREADS, IPT, DTYPE = 64, 4, "float32"
TILE = THREADS * IPT


def _copy_kernel(load_algorithm: str, store_algorithm: str, tiles: int):
    load = coopcheck_numba.block_load(DTYPE, IPT, load_algorithm, block=BLOCK)
    store = coopcheck_numba.block_store(DTYPE, IPT, store_algorithm, block=BLOCK)

    @cuda.jit
    def copy(src, dst, valid_items):
        items = cuda.local.array(IPT, types.float32)
        for tile in range(tiles):
            load(src, items, valid_items, tile * TILE, -1.0)
            store(dst, items, valid_items, tile * TILE)

    shared = max(coopcheck_numba.shared_bytes(DTYPE, IPT, a, THREADS) for a in (load_algorithm, store_algorithm))
    return copy, shared


@pytest.mark.parametrize(
    ("load_algorithm", "store_algorithm"),
    [("transpose", "warp_transpose"), ("warp_transpose", "transpose"), ("vectorize", "transpose"),
     ("striped", "striped"), ("transpose", "transpose"), ("direct", "vectorize")],
)
@pytest.mark.parametrize("valid_items", [TILE, TILE - 37, 0])
def test_load_then_store_copies_the_valid_prefix_of_every_tile(
    adapter: coopcheck.Adapter, load_algorithm: str, store_algorithm: str, valid_items: int
) -> None:
    tiles = 3
    kernel, shared = _copy_kernel(load_algorithm, store_algorithm, tiles)
    src = np.arange(tiles * TILE, dtype=DTYPE)
    dst = cuda.to_device(np.full(tiles * TILE, np.nan, DTYPE))
    kernel[1, BLOCK, 0, shared](cuda.to_device(src), dst, np.int32(valid_items))
    got = dst.copy_to_host().reshape(tiles, TILE)
    want = np.where(np.arange(TILE) < valid_items, src.reshape(tiles, TILE), np.nan)
    np.testing.assert_array_equal(got, want)


def test_defaults_read_from_offset_zero_and_keep_invalid_slots(adapter: coopcheck.Adapter) -> None:
    load = coopcheck_numba.block_load("int16", 2, "transpose")

    @cuda.jit
    def kernel(src, dst, valid_items):
        items = cuda.local.array(2, types.int16)
        items[0], items[1] = 7, 8
        load(src, items, valid_items)  # keyword arguments compile too, but the simulator refuses them
        me = cuda.threadIdx.x
        dst[2 * me], dst[2 * me + 1] = items[0], items[1]

    src = np.arange(64, dtype=np.int16) + 100
    dst = cuda.to_device(np.zeros(64, np.int16))
    kernel[1, 32, 0, coopcheck_numba.shared_bytes("int16", 2, "transpose", 32)](cuda.to_device(src), dst, 41)
    np.testing.assert_array_equal(dst.copy_to_host(), np.where(np.arange(64) < 41, src, np.tile([7, 8], 32)))
