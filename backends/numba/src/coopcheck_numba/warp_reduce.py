"""Warp Reduce as numba-cuda device functions, callable from any ``@cuda.jit`` kernel: CUB's WarpReduce (Reduce with
valid_items, HeadSegmentedReduce, TailSegmentedReduce) over logical warps of 1 to 32 lanes and the operators of
:mod:`coopcheck.reduce`.

dtype, the logical warp's width, the operator and the mode are compile-time; the block shape, valid_items and the
flags are run-time values. Logical warps cut each hardware warp from its lane 0 (:mod:`coopcheck.warp_reduce`), so
a hardware warp's barrier orders all its logical warps, whatever the width, a power of two or not (CUB's WarpMask
gives a non-power-of-two logical warp past a hardware warp's first a mask without its own lanes: NVIDIA/cccl#858).
Each lane finds where its segment ends (valid_items, or the next head or tail flag, through shared scratch), then
reduces down as CUB's shuffle path does, through shared scratch of one item a thread (numba's simulator has no
shuffles): at step ``s`` lane ``l`` takes lane ``l + s``'s partial when ``l + s`` is within its segment, so a lane
holds the fold of its segment from itself on, in lane order, and no operator meets a lane past the segment's end.
Every step is separated by a barrier of the hardware warp, never of the block (in the simulator, which has no warp
barrier, a block barrier that every thread calls alike).

Example::

    reduce = coopcheck_numba.warp_reduce("int32", 8, "sum", "head")

    @cuda.jit
    def kernel(...):
        state = cuda.local.array(2, numba.int32)   # [sentinel, seen]: only the operator first reads them
        ...
        total = reduce(item, head_flag, valid_items, state)  # defined in each segment's first lane

    kernel[grid, 128, 0, coopcheck_numba.warp_reduce_shared_bytes("int32", 128)](...)
"""

from __future__ import annotations

import functools

import numpy as np
from coopcheck import KernelSpec
from coopcheck.vocabulary import WARP_SIZE
from coopcheck.warp_reduce import check_spec
from numba import cuda, types
from numba.cuda.np import numpy_support

from coopcheck_numba.blockio import rank, threads, warp_sync
from coopcheck_numba.reduce import DeviceFunction, operator


def warp_reduce(dtype: str, width: int, op: str, mode: str) -> DeviceFunction:
    """A device function ``reduce(item, flag, valid_items, state) -> value``, defined in the first lane of each
    segment (mode ``reduce``: lane 0 of a logical warp with a valid lane).

    Every thread of the block calls it together, with the same ``valid_items`` (read in mode ``reduce``); ``flag``
    is the thread's head or tail flag (read in modes ``head`` and ``tail``); ``state`` is a local array of two
    items: the block's sentinel, and the seen flag that the operator first sets to 1 when an operand equals the
    sentinel. Raises ``coopcheck.InvalidParameter`` for bad static parameters.
    """
    check_spec(KernelSpec("warp.reduce", dtype, (1,), 1, "any",
                          variant=(("width", str(width)), ("op", op), ("mode", mode))))
    return build_warp_reduce(dtype, width, op, mode)


def warp_reduce_shared_bytes(dtype: str, threads: int) -> int:
    """Dynamic shared memory a launch of ``threads`` threads must provide: one item and one flag byte a thread.

    >>> warp_reduce_shared_bytes("float16", 65)
    195
    """
    return threads * (np.dtype(dtype).itemsize + 1)


@functools.cache
def _segment_end(width: int, mode: str) -> DeviceFunction:
    """``end(flags, me, n_threads, lane, present, flag, valid_items)``: the last lane of the calling lane's segment
    (-1 where it is in none); ``flags`` is the block's byte a thread of scratch."""
    steps = max(width - 1, 0)

    if mode == "reduce":

        @cuda.jit(device=True)
        def valid_end(flags, me, n_threads, lane, present, flag, valid_items):
            return min(max(valid_items, 0), present) - 1

        return valid_end
    head = mode == "head"

    @cuda.jit(device=True)
    def flagged_end(flags, me, n_threads, lane, present, flag, valid_items):
        flags[me] = 1 if flag != 0 else 0
        warp_sync(me, n_threads)
        end = present - 1
        found = not head and flag != 0  # a tail-flagged lane ends its own segment
        if found:
            end = lane
        for j in range(1, steps + 1):
            if not found and lane + j < present and flags[me + j] != 0:
                end = lane + j - 1 if head else lane + j
                found = True
        warp_sync(me, n_threads)  # the scratch is free again for the next call's flags
        return end

    return flagged_end


@functools.cache
def build_warp_reduce(dtype: str, width: int, op: str, mode: str) -> DeviceFunction:
    """The Warp Reduce device function, without the static checks of :func:`warp_reduce`."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))
    combine = operator(dtype, op)
    end_of = _segment_end(width, mode)
    steps = (width - 1).bit_length()  # 1, 2, 4, ... below width
    itemsize = np.dtype(dtype).itemsize

    @cuda.jit(device=True)
    def reduce(item, flag, valid_items, state):
        scratch = cuda.shared.array(0, nbtype)
        flags = cuda.shared.array(0, types.uint8)  # the same memory: the bytes past the items
        me, n_threads = np.int32(rank()), np.int32(threads())
        within = me % WARP_SIZE
        lane = within % width
        present = min(width, n_threads - (me - lane), WARP_SIZE - (within - lane))
        end = end_of(flags[n_threads * itemsize:], me, n_threads, lane, present, flag, valid_items)
        x = item
        for level in range(steps):
            step = np.int32(1) << level
            scratch[me] = x
            warp_sync(me, n_threads)
            if lane + step <= end:
                x = combine(x, scratch[me + step], state)
            warp_sync(me, n_threads)  # the partials are read before the next step overwrites them
        return x

    return reduce
