"""Block Shuffle as numba-cuda device functions, callable from any ``@cuda.jit`` kernel: CUB's Offset, Rotate, Up
and Down, and Up / Down with their block item (the methods and rules are :mod:`coopcheck.shuffle`'s).

dtype, items_per_thread and the method are compile-time; the block shape and the distance are run-time values,
so one device function serves every block shape and distance. As CUB's BlockShuffle, every method stores one item
a thread in shared scratch of one item a thread (offset and rotate: the thread's item; up: its last; down: its
first), and after a block barrier reads its neighbour's; a second barrier lets the caller reuse the scratch as
soon as the call returns. Within a thread, up and down move the items against the shift's direction, so a call
in place reads every item before it overwrites it.

Example::

    shuffle = coopcheck_numba.block_shuffle("int32", 4, "up_suffix")

    @cuda.jit
    def kernel(...):
        items = cuda.local.array(4, numba.int32)
        suffix = cuda.local.array(1, numba.int32)
        ...
        shuffle(items, items, 0, suffix)    # in place; suffix[0] gets the block's last item

    kernel[grid, 128, 0, coopcheck_numba.shuffle_shared_bytes("int32", 128)](...)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from coopcheck import KernelSpec
from coopcheck.shuffle import BLOCK_ITEM, SCALAR, check_spec
from numba import cuda
from numba.cuda.np import numpy_support

from coopcheck_numba.blockio import rank, threads

DeviceFunction = Callable[..., Any]


def block_shuffle(dtype: str, items_per_thread: int, method: str) -> DeviceFunction:
    """A device function ``shuffle(items_in, items_out, distance, block_item)``.

    Every thread of the block calls it together, with the same ``distance`` (offset and rotate; up and down
    ignore it); ``items_out`` may be ``items_in`` itself (in place). ``block_item`` is a local array of one item
    that up_suffix and down_prefix write (CUB's block_suffix / block_prefix), the others leave it alone. Raises
    ``coopcheck.InvalidParameter`` for bad static parameters (the distance is checked by nobody: it is a run-time
    value, which must lie in the method's range).
    """
    check_spec(KernelSpec("block.shuffle", dtype, (1,), items_per_thread, method, variant=(("output", "inplace"),)))
    return build_shuffle(dtype, items_per_thread, method)


def shuffle_shared_bytes(dtype: str, threads: int) -> int:
    """Dynamic shared memory a launch of ``threads`` threads must provide: one item a thread.

    >>> shuffle_shared_bytes("float64", 128)
    1024
    """
    return threads * np.dtype(dtype).itemsize


def _scalar(nbtype: Any, method: str) -> DeviceFunction:
    """offset or rotate (one item a thread)."""
    rotate = method == "rotate"

    @cuda.jit(device=True)
    def shuffle(items_in, items_out, distance, block_item):
        scratch = cuda.shared.array(0, nbtype)
        me, n_threads = np.int32(rank()), np.int32(threads())
        scratch[me] = items_in[0]
        cuda.syncthreads()
        src = me + np.int32(distance)
        if rotate:
            if src >= n_threads:
                src -= n_threads
            items_out[0] = scratch[src]
        elif 0 <= src < n_threads:
            items_out[0] = scratch[src]
        cuda.syncthreads()  # the caller may reuse the scratch as soon as this returns

    return shuffle


def _shift(nbtype: Any, ipt: int, up: bool, with_item: bool) -> DeviceFunction:
    """up (and up_suffix): tile index t takes t - 1, thread 0's item 0 is left as it was; down (and
    down_prefix): t takes t + 1, the last thread's last item is left. A thread stores the item it hands on (up:
    its last, down: its first), moves its other items one step against the shift's direction, then takes the
    item at its other end from its neighbour (up: the thread before, down: the one after); the block item is
    the scratch entry of the thread at the far end (up_suffix: the last, down_prefix: thread 0)."""
    step = -1 if up else 1  # where an item comes from, in tile index
    # The item a thread stores and the one it takes; its others move from the one to the other (in place safe).
    handed, taken = (ipt - 1, 0) if up else (0, ipt - 1)

    @cuda.jit(device=True)
    def shuffle(items_in, items_out, distance, block_item):
        scratch = cuda.shared.array(0, nbtype)
        me, n_threads = np.int32(rank()), np.int32(threads())
        scratch[me] = items_in[handed]
        cuda.syncthreads()
        for i in range(handed, taken, step):
            items_out[i] = items_in[i + step]
        if me != (0 if up else n_threads - 1):  # the thread at the edge has no neighbour there
            items_out[taken] = scratch[me + step]
        if with_item:
            block_item[0] = scratch[n_threads - 1 if up else 0]
        cuda.syncthreads()

    return shuffle


@functools.cache
def build_shuffle(dtype: str, ipt: int, method: str) -> DeviceFunction:
    """The Shuffle device function, without the static checks of :func:`block_shuffle`."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))
    if method in SCALAR:
        return _scalar(nbtype, method)
    return _shift(nbtype, ipt, method in ("up", "up_suffix"), method in BLOCK_ITEM)
