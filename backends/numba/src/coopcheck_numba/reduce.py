"""Block Reduce as numba-cuda device functions, callable from any ``@cuda.jit`` kernel: CUB's raking,
raking_commutative_only and warp_reductions over the operators of :mod:`coopcheck.reduce`.

dtype, items_per_thread, the algorithm and the operator are compile-time; the block shape and valid_items are
run-time values, so one device function serves every block shape. A thread first reduces its valid items in
order; the block then reduces the partials of the threads that hold a valid item through shared scratch of one
item a thread, every step guarded so that no operator sees an invalid item (NVIDIA/cub#74). The steps within a
warp are separated by block barriers, not warp ones: numba's CUDA simulator has no ``syncwarp``, and a block
barrier orders them as well. A last barrier lets the caller reuse the scratch as soon as the call returns.

Example::

    reduce = coopcheck_numba.block_reduce("int32", 4, "raking", "sum")

    @cuda.jit
    def kernel(...):
        items = cuda.local.array(4, numba.int32)
        state = cuda.local.array(2, numba.int32)   # [sentinel, seen]: only the operator first reads them
        ...
        total = reduce(items, valid_items, state)  # defined in thread 0

    kernel[grid, 128, 0, coopcheck_numba.reduce_shared_bytes("int32", 128)](...)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from coopcheck import KernelSpec
from coopcheck.reduce import check_spec
from coopcheck.vocabulary import WARP_SIZE
from numba import cuda
from numba.cuda.np import numpy_support

from coopcheck_numba.blockio import SIMULATED, rank, threads

DeviceFunction = Callable[..., Any]
#: The steps of a tree over one warp's lanes: 1, 2, 4, 8, 16.
_TREE_STEPS = WARP_SIZE.bit_length() - 1


def block_reduce(dtype: str, items_per_thread: int, algorithm: str, op: str) -> DeviceFunction:
    """A device function ``reduce(items, valid_items, state) -> value`` (defined in thread 0).

    Every thread of the block calls it together, with the same ``valid_items``; ``state`` is a local array of two
    items: the block's sentinel, and the seen flag that the operator first sets to 1 when an operand equals the
    sentinel (the other operators leave it alone). Raises ``coopcheck.InvalidParameter`` for bad static
    parameters.
    """
    check_spec(KernelSpec("block.reduce", dtype, (1,), items_per_thread, algorithm, variant=(("op", op),)))
    return build_reduce(dtype, items_per_thread, algorithm, op)


def reduce_shared_bytes(dtype: str, threads: int) -> int:
    """Dynamic shared memory a launch of ``threads`` threads must provide: one item a thread, every algorithm.

    >>> reduce_shared_bytes("float16", 65)
    130
    """
    return threads * np.dtype(dtype).itemsize


@functools.cache
def operator(dtype_name: str, op: str) -> DeviceFunction:
    """The operator ``op(a, b, state)`` of :mod:`coopcheck.reduce` on ``dtype_name`` items (integers wrap): one device
    function per (dtype, operator) in a process, so numba types it once for every kernel that calls it."""
    dtype = np.dtype(dtype_name)
    nbtype = numpy_support.from_dtype(dtype)
    floating = dtype.kind == "f"
    # float16 is computed in float32 (numba's half arithmetic does not link here): a widened compare is exact, and
    # a float32 sum of two halves rounded once to half is the half sum (24 >= 2 * 11 + 2 bits).
    wide = numba.float32 if dtype == np.float16 else nbtype
    if op == "sum" and SIMULATED and not floating:

        @cuda.jit(device=True)
        def wrapping_plus(a, b, state):
            # The simulator adds numpy scalars, which wrap as the device does but warn on overflow.
            with np.errstate(over="ignore"):
                return nbtype(a + b)

        return wrapping_plus
    if op == "sum":

        @cuda.jit(device=True)
        def plus(a, b, state):
            return nbtype(wide(a) + wide(b))

        return plus
    if op in ("min", "max"):
        lesser = op == "min"

        @cuda.jit(device=True)
        def extreme(a, b, state):
            x, y = wide(a), wide(b)
            if floating and x != x:  # fmin / fmax: a NaN operand is ignored unless both are
                return b
            if floating and y != y:
                return a
            if lesser:
                return a if x < y else b
            return b if x < y else a

        return extreme
    if op == "first":

        @cuda.jit(device=True)
        def first(a, b, state):
            mark = wide(state[0])
            if wide(a) == mark or wide(b) == mark:
                state[1] = 1
            return b if wide(a) == 0 else a

        return first
    width = dtype.itemsize * 8
    k, mask, unsigned = np.uint64(width // 4), np.uint64((1 << (width // 4)) - 1), np.uint64((1 << width) - 1)

    @cuda.jit(device=True)
    def matmul(a, b, state):
        x, y = np.uint64(a) & unsigned, np.uint64(b) & unsigned
        x0, x1, x2, x3 = x & mask, (x >> k) & mask, (x >> (k + k)) & mask, (x >> (k + k + k)) & mask
        y0, y1, y2, y3 = y & mask, (y >> k) & mask, (y >> (k + k)) & mask, (y >> (k + k + k)) & mask
        c0, c1 = (x0 * y0 + x1 * y2) & mask, (x0 * y1 + x1 * y3) & mask
        c2, c3 = (x2 * y0 + x3 * y2) & mask, (x2 * y1 + x3 * y3) & mask
        return nbtype(c0 | (c1 << k) | (c2 << (k + k)) | (c3 << (k + k + k)))

    return matmul


@functools.cache
def _tree(op: DeviceFunction) -> DeviceFunction:
    """``tree(scratch, base, lane, scale, limit, x, active, state)``: an in-order tree over the lanes l of one
    segment of scratch from ``base`` with ``l * scale < limit`` (lane l takes lane l + s's value for s = 1, 2, 4,
    ...; a scale spares raking a run-time division); every thread of the block calls it (the barriers), the
    lanes with ``active`` take part, lane 0 ends with the aggregate."""

    @cuda.jit(device=True)
    def tree(scratch, base, lane, scale, limit, x, active, state):
        if active and lane * scale < limit:
            scratch[base + lane] = x
        cuda.syncthreads()
        for level in range(_TREE_STEPS):
            step = np.int32(1) << level
            if active and lane % (step + step) == 0 and (lane + step) * scale < limit:
                x = op(x, scratch[base + lane + step], state)
                scratch[base + lane] = x
            cuda.syncthreads()
        return x

    return tree


@functools.cache
def _raking(op: DeviceFunction) -> DeviceFunction:
    """CUB's raking: every partial to the grid; raking thread t (of at most a warp) reduces its segment's valid
    part in order, and, after a barrier (the grid's start is reused: NVIDIA/cccl#1902), a tree over the raking
    partials ends in thread 0."""
    tree = _tree(op)

    @cuda.jit(device=True)
    def raking(scratch, me, n_threads, num_valid, partial, state):
        # No run-time division: numba divides in 64 bits, a CALL in SASS. seg = ceil(threads / min(threads, 32));
        # the raking threads (and those of them with valid items) are the t < 32 with t * seg below the count.
        seg = (n_threads + WARP_SIZE - 1) >> _TREE_STEPS if n_threads > WARP_SIZE else 1
        raker = me < WARP_SIZE and me * seg < n_threads
        if me < num_valid:
            scratch[me] = partial
        cuda.syncthreads()
        x = partial
        if raker and me * seg < num_valid:
            x = scratch[me * seg]
            for i in range(1, seg):
                if me * seg + i < num_valid:
                    x = op(x, scratch[me * seg + i], state)
        cuda.syncthreads()
        return tree(scratch, 0, me, seg, num_valid, x, raker, state)

    return raking


def _block(op: DeviceFunction, ipt: int, algorithm: str) -> DeviceFunction:
    tree, raking = _tree(op), _raking(op)
    commutative = algorithm == "raking_commutative_only"
    warps = algorithm == "warp_reductions"

    @cuda.jit(device=True)
    def reduce(items, valid_items, state):
        scratch = cuda.shared.array(0, items.dtype)
        me, n_threads = np.int32(rank()), np.int32(threads())
        partial = items[0]
        for i in range(1, ipt):
            if me * ipt + i < valid_items:
                partial = op(partial, items[i], state)
        num_valid = min(max((valid_items + (ipt - 1)) // ipt, 0), n_threads)  # threads holding a valid item
        if warps:  # a tree per warp, then thread 0 folds in the aggregate of each warp with valid items
            warp, lane = me // WARP_SIZE, me % WARP_SIZE
            count = min(max(num_valid - warp * WARP_SIZE, 0), WARP_SIZE)
            x = tree(scratch, warp * WARP_SIZE, lane, 1, count, partial, True, state)
            if me == 0:
                for w in range(1, (n_threads + WARP_SIZE - 1) // WARP_SIZE):
                    if w * WARP_SIZE < num_valid:
                        x = op(x, scratch[w * WARP_SIZE], state)
        elif commutative and n_threads % WARP_SIZE == 0 and n_threads > WARP_SIZE and num_valid == n_threads:
            # the first warp folds segment t of the other threads' partials into its own, then a tree over it
            sharing = n_threads - WARP_SIZE
            seg = sharing // WARP_SIZE
            if me >= WARP_SIZE:
                scratch[me - WARP_SIZE] = partial
            cuda.syncthreads()
            x = partial
            if me < WARP_SIZE:
                for i in range(seg):
                    x = op(x, scratch[me * seg + i], state)
            x = tree(scratch, sharing, me, 1, WARP_SIZE, x, me < WARP_SIZE, state)
        else:  # raking, and raking_commutative_only's fallback (a partial tile, a partial warp, one warp)
            x = raking(scratch, me, n_threads, num_valid, partial, state)
        cuda.syncthreads()  # the caller may reuse the scratch as soon as this returns
        return x

    return reduce


@functools.cache
def build_reduce(dtype: str, ipt: int, algorithm: str, op: str) -> DeviceFunction:
    """The Reduce device function, without the static checks of :func:`block_reduce`."""
    return _block(operator(dtype, op), ipt, algorithm)
