"""Block Exchange as numba-cuda device functions, callable from any ``@cuda.jit`` kernel: CUB's eight methods,
with and without warp time-slicing (the arrangements and rules are :mod:`coopcheck.exchange`'s).

dtype, items_per_thread, the method and time-slicing are compile-time; the block shape is a run-time value,
so one device function serves every block shape. Every method is one store step (each item into shared
scratch at its tile index, or at its rank) and one load step (each output item from the scratch at its tile
index) across a barrier: a block barrier for the block methods, a warp barrier for the warp methods, which
exchange each warp's share of the tile on its own. Time-sliced, the tile passes through one warp's share of
scratch a slice at a time, into a temporary that becomes the output after the last slice, so an in-place call
reads every input item before it overwrites one. Stores are bounded by the scratch window, so the guarded and
flagged scatters are correct time-sliced too (CUB's read and write out of bounds there: NVIDIA/cccl#870).

Example::

    exchange = coopcheck_numba.block_exchange("int32", 4, "scatter_to_striped_guarded")

    @cuda.jit
    def kernel(...):
        items = cuda.local.array(4, numba.int32)
        ranks = cuda.local.array(4, numba.int32)
        ...
        exchange(items, items, ranks, ranks)    # in place; the flags argument is read by the flagged one only

    kernel[grid, 128, 0, coopcheck_numba.exchange_shared_bytes("int32", 4, False, 128)](...)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from coopcheck import KernelSpec
from coopcheck.exchange import WARP_METHODS, check_spec, warp_lanes
from numba import cuda
from numba.cuda import types
from numba.cuda.np import numpy_support

from coopcheck_numba.blockio import WARP_SIZE, rank, threads, warp_sync

DeviceFunction = Callable[..., Any]


def block_exchange(dtype: str, items_per_thread: int, method: str, *, warp_time_slicing: bool = False,
                   block: tuple[int, ...] | None = None) -> DeviceFunction:
    """A device function ``exchange(items_in, items_out, ranks, flags)``.

    Every thread of the block calls it together; ``items_out`` may be ``items_in`` itself (in place). The
    scatter methods read the local int32 arrays ``ranks`` (and ``flags``, the flagged one: nonzero scatters
    the item); the others ignore both. Raises ``coopcheck.InvalidParameter`` for bad static parameters;
    ``block``, when the caller declares it, lets the block-dependent rule be checked too (else a warp method's
    caller must launch whole warps, or one warp of fewer than 32 threads).
    """
    slicing = "on" if warp_time_slicing else "off"
    check_spec(KernelSpec("block.exchange", dtype, block or (WARP_SIZE,), items_per_thread, method,
                          variant=(("slicing", slicing), ("output", "inplace"))))
    return build_exchange(dtype, items_per_thread, method, warp_time_slicing)


def exchange_shared_bytes(dtype: str, items_per_thread: int, warp_time_slicing: bool, threads: int) -> int:
    """Dynamic shared memory a launch of ``threads`` threads must provide: the whole tile, or time-sliced one
    warp's share of it.

    >>> exchange_shared_bytes("float64", 4, False, 128), exchange_shared_bytes("float64", 4, True, 128)
    (4096, 1024)
    """
    lanes = warp_lanes(threads) if warp_time_slicing else threads
    return lanes * items_per_thread * np.dtype(dtype).itemsize


@functools.cache
def _positions(ipt: int) -> dict[str, DeviceFunction]:
    """``position(me, i, n_threads)``: the tile index that item ``i`` of rank ``me`` holds, per arrangement."""

    @cuda.jit(device=True)
    def blocked(me, i, n_threads):
        return np.int32(me * ipt + i)

    @cuda.jit(device=True)
    def striped(me, i, n_threads):
        return np.int32(me + i * n_threads)

    @cuda.jit(device=True)
    def warp_striped(me, i, n_threads):
        lanes = min(n_threads, WARP_SIZE)
        return np.int32((me // WARP_SIZE) * (WARP_SIZE * ipt) + i * lanes + me % WARP_SIZE)

    return {"blocked": blocked, "striped": striped, "warp-striped": warp_striped}


_SIDES = {
    "striped_to_blocked": ("striped", "blocked"),
    "blocked_to_striped": ("blocked", "striped"),
    "warp_striped_to_blocked": ("warp-striped", "blocked"),
    "blocked_to_warp_striped": ("blocked", "warp-striped"),
    "scatter_to_blocked": (None, "blocked"),
    "scatter_to_striped": (None, "striped"),
    "scatter_to_striped_guarded": (None, "striped"),
    "scatter_to_striped_flagged": (None, "striped"),
}


@functools.cache
def _store_step(method: str, ipt: int) -> DeviceFunction:
    """``store(scratch, items, keys, me, n_threads, lo, hi)``: every item whose tile index lies in [lo, hi) into
    ``scratch[index - lo]``; a scatter's index is its key (:func:`_key_step`), and a negative key is never inside
    the window: the items the guarded and flagged scatters skip."""
    source = _SIDES[method][0]
    if source is None:

        @cuda.jit(device=True)
        def store(scratch, items, keys, me, n_threads, lo, hi):
            for i in range(ipt):
                index = keys[i]
                if lo <= index < hi:
                    scratch[index - lo] = items[i]

        return store
    position = _positions(ipt)[source]

    @cuda.jit(device=True)
    def store(scratch, items, keys, me, n_threads, lo, hi):
        for i in range(ipt):
            index = position(me, i, n_threads)
            if lo <= index < hi:
                scratch[index - lo] = items[i]

    return store


@functools.cache
def _key_step(method: str, ipt: int) -> DeviceFunction:
    """``keys_of(ranks, flags, keys)``: where a scatter stores each item, once for every slice: its rank, or for
    the flagged scatter -1 where the flag is 0 (one register per item instead of two)."""

    if method == "scatter_to_striped_flagged":

        @cuda.jit(device=True)
        def keys_of(ranks, flags, keys):
            for i in range(ipt):
                keys[i] = ranks[i] if flags[i] != 0 else np.int32(-1)

    else:

        @cuda.jit(device=True)
        def keys_of(ranks, flags, keys):
            for i in range(ipt):
                keys[i] = ranks[i]

    return keys_of


@functools.cache
def _load_step(method: str, ipt: int) -> DeviceFunction:
    """``load(scratch, items, me, n_threads, lo, hi)``: every output item whose tile index lies in [lo, hi)
    from ``scratch[index - lo]``."""
    position = _positions(ipt)[_SIDES[method][1]]

    @cuda.jit(device=True)
    def load(scratch, items, me, n_threads, lo, hi):
        for i in range(ipt):
            index = position(me, i, n_threads)
            if lo <= index < hi:
                items[i] = scratch[index - lo]

    return load


@cuda.jit(device=True)
def _block_sync(me, n_threads):
    """A barrier of the whole block (what the block methods' store and load steps need between them)."""
    cuda.syncthreads()


@functools.cache
def build_exchange(dtype: str, ipt: int, method: str, warp_time_slicing: bool) -> DeviceFunction:
    """The Exchange device function, without the static checks of :func:`block_exchange`."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))
    store, load, keys_of = _store_step(method, ipt), _load_step(method, ipt), _key_step(method, ipt)

    if warp_time_slicing:

        @cuda.jit(device=True)
        def exchange(items_in, items_out, ranks, flags):
            scratch = cuda.shared.array(0, nbtype)
            me, n_threads = np.int32(rank()), np.int32(threads())
            window = np.int32(min(n_threads, WARP_SIZE) * ipt)
            gathered = cuda.local.array(ipt, nbtype)
            keys = cuda.local.array(ipt, types.int32)
            keys_of(ranks, flags, keys)
            for s in range((n_threads + WARP_SIZE - 1) // WARP_SIZE):
                lo = np.int32(s * window)
                cuda.syncthreads()  # every load of the slice before is done: the scratch is free again
                hi = np.int32(lo + window)
                store(scratch, items_in, keys, me, n_threads, lo, hi)
                cuda.syncthreads()
                load(scratch, gathered, me, n_threads, lo, hi)
            for i in range(ipt):
                items_out[i] = gathered[i]
            cuda.syncthreads()  # the caller may reuse the scratch as soon as this returns

    else:
        sync = warp_sync if method in WARP_METHODS else _block_sync

        @cuda.jit(device=True)
        def exchange(items_in, items_out, ranks, flags):
            scratch = cuda.shared.array(0, nbtype)
            me, n_threads = np.int32(rank()), np.int32(threads())
            tile = np.int32(n_threads * ipt)
            keys = cuda.local.array(ipt, types.int32)
            keys_of(ranks, flags, keys)
            store(scratch, items_in, keys, me, n_threads, 0, tile)
            sync(me, n_threads)
            load(scratch, items_out, me, n_threads, 0, tile)
            sync(me, n_threads)  # the caller may reuse the scratch as soon as this returns

    return exchange
