"""Block Scan as numba-cuda device functions, callable from any ``@cuda.jit`` kernel: CUB's raking, raking_memoize
and warp_scans, inclusive and exclusive, with no seed, an initial value or a block prefix callback, over the operators
of :mod:`coopcheck.scan`.

dtype, items_per_thread, the algorithm, the operator, the mode and the seed are compile-time; the block shape is a
run-time value, so one device function serves every block shape. A thread first folds its items in order; the block
then scans the threads' partials in rank order through shared scratch, every step across a block barrier (numba's
CUDA simulator has no ``syncwarp``, and a block barrier orders a warp's steps as well):

* warp_scans: each warp scans its lanes' partials (a doubling scan), and a thread's prefix is the aggregates of the
  warps before its own, folded in order, then its warp's lanes before it;
* raking and raking_memoize: at most a warp of raking threads each scan a segment of the partials in order, a
  doubling scan over the raking threads gives each segment its prefix, and the raking threads write each partial's
  prefix back; raking_memoize is the same here (CUB keeps a segment in registers, which takes a compile-time block
  shape: with a run-time one they would be local memory, which the contract forbids).

The seed goes first, left of every operand. With a prefix callback the threads of the first warp call it with the
block aggregate; thread 0's return value reaches every thread through the scratch. A last barrier lets the caller
reuse the scratch as soon as the call returns.

Example::

    scan = coopcheck_numba.block_scan("int32", 4, "warp_scans", "sum", "exclusive", "initial")

    @cuda.jit
    def kernel(...):
        items = cuda.local.array(4, numba.int32)
        out = cuda.local.array(4, numba.int32)
        state = cuda.local.array(2, numba.int32)  # [seed or running prefix, callback argument]
        calls = cuda.local.array(1, numba.int32)
        ...
        aggregate = scan(items, out, state, calls)

    kernel[grid, 128, 0, coopcheck_numba.scan_shared_bytes("int32", 128)](...)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from coopcheck import KernelSpec
from coopcheck.scan import check_spec
from coopcheck.vocabulary import WARP_SIZE
from numba import cuda
from numba.cuda.np import numpy_support

from coopcheck_numba.blockio import rank, threads
from coopcheck_numba.reduce import operator

DeviceFunction = Callable[..., Any]
#: The steps of a doubling scan over one warp's lanes: 1, 2, 4, 8, 16.
_STEPS = WARP_SIZE.bit_length() - 1


def block_scan(dtype: str, items_per_thread: int, algorithm: str, op: str, mode: str, seed: str) -> DeviceFunction:
    """A device function ``scan(items_in, items_out, state, calls) -> block aggregate``.

    Every thread of the block calls it together; ``items_out`` may be ``items_in`` itself. ``state`` is a local
    array of two items: the seed (``initial``: the initial value; ``prefix``: the callback's running prefix, which
    the call advances) and the argument of the thread's last callback call; ``calls`` a local int32 array of one,
    the thread's callback calls (the call adds its own).
    Raises ``coopcheck.InvalidParameter`` for bad static parameters.
    """
    check_spec(KernelSpec("block.scan", dtype, (1,), items_per_thread, algorithm,
                          variant=(("op", op), ("mode", mode), ("seed", seed))))
    return build_scan(dtype, items_per_thread, algorithm, op, mode, seed)


def scan_shared_bytes(dtype: str, threads: int) -> int:
    """Dynamic shared memory a launch of ``threads`` threads must provide: one item a thread, one a warp and the
    prefix every thread takes.

    >>> scan_shared_bytes("int16", 65)
    196
    """
    return (threads + WARP_SIZE + 1) * np.dtype(dtype).itemsize


@cuda.jit(device=True)
def _barrier():
    """A barrier of the whole block: every one the scan needs (one name, so a test can take them out)."""
    cuda.syncthreads()


@functools.cache
def _doubling(op: DeviceFunction, barrier: DeviceFunction) -> DeviceFunction:
    """``doubling(scratch, base, lane, count, x, active, state)``: an inclusive scan over the lanes l < ``count`` of
    one scratch segment from ``base`` (lane l takes lane l - s's value for s = 1, 2, 4, ..., in order); every thread
    calls it (the barriers), the lanes with ``active`` take part; it leaves each lane's result in the segment."""

    @cuda.jit(device=True)
    def doubling(scratch, base, lane, count, x, active, state):
        taking = active and lane < count
        if taking:
            scratch[base + lane] = x
        barrier()
        for level in range(_STEPS):
            step = np.int32(1) << level
            earlier = x
            if taking and lane >= step:
                earlier = scratch[base + lane - step]
            barrier()
            if taking and lane >= step:
                x = op(earlier, x, state)
                scratch[base + lane] = x
            barrier()
        return x

    return doubling


@functools.cache
def _warp_scans(op: DeviceFunction, barrier: DeviceFunction) -> DeviceFunction:
    """``prefixes(scratch, me, n_threads, partial, state) -> (exclusive prefix, block aggregate)``: each warp scans
    its partials; a thread's prefix is the earlier warps' aggregates, then its own warp's earlier lanes (thread 0 has
    none: its prefix is its own partial, unused)."""
    doubling = _doubling(op, barrier)

    @cuda.jit(device=True)
    def prefixes(scratch, me, n_threads, partial, state):
        warp, lane = me // WARP_SIZE, me % WARP_SIZE
        count = min(n_threads - warp * WARP_SIZE, WARP_SIZE)
        inclusive = doubling(scratch, warp * WARP_SIZE, lane, count, partial, True, state)
        if lane == count - 1:
            scratch[n_threads + warp] = inclusive
        barrier()
        prefix = partial
        if lane > 0:
            prefix = scratch[me - 1]
        aggregate = scratch[n_threads]
        for w in range(1, (n_threads + WARP_SIZE - 1) // WARP_SIZE):
            if w == warp:
                prefix = aggregate if lane == 0 else op(aggregate, prefix, state)
            aggregate = op(aggregate, scratch[n_threads + w], state)
        return prefix, aggregate

    return prefixes


@functools.cache
def _raking(op: DeviceFunction, barrier: DeviceFunction) -> DeviceFunction:
    """``prefixes(scratch, me, n_threads, partial, state) -> (exclusive prefix, block aggregate)``: raking thread t
    (of at most a warp) scans segment t of the partials in order, a doubling scan over the raking threads' totals
    gives each segment its prefix, and each raking thread writes its partials' prefixes back."""
    doubling = _doubling(op, barrier)

    @cuda.jit(device=True)
    def prefixes(scratch, me, n_threads, partial, state):
        # No run-time division: numba divides in 64 bits, a CALL in SASS. seg = ceil(threads / min(threads, 32));
        # the raking threads are the t < 32 with t * seg below the thread count.
        seg = (n_threads + WARP_SIZE - 1) >> _STEPS if n_threads > WARP_SIZE else 1
        rakers = np.int32(0)
        for t in range(WARP_SIZE):
            if t * seg < n_threads:
                rakers += 1
        raker = me < rakers
        first = me * seg
        scratch[me] = partial
        barrier()
        total = partial
        if raker:
            total = scratch[first]
            for i in range(1, seg):
                if first + i < n_threads:
                    total = op(total, scratch[first + i], state)
        doubling(scratch, n_threads, me, rakers, total, raker, state)  # each raking total scanned, in place
        aggregate = scratch[n_threads + rakers - 1]
        if raker:  # the segment's partials become their threads' exclusive prefixes
            running = scratch[n_threads + me - 1] if me > 0 else total
            for i in range(seg):
                if first + i < n_threads:
                    value = scratch[first + i]
                    if me > 0 or i > 0:
                        scratch[first + i] = running
                    running = value if me == 0 and i == 0 else op(running, value, state)
        barrier()
        return scratch[me], aggregate

    return prefixes


def _block(op: DeviceFunction, nbtype: Any, ipt: int, algorithm: str, inclusive: bool, seed: str) -> DeviceFunction:
    barrier = _barrier  # bound now, not looked up when numba compiles: mutants.py builds a scan without it
    prefixes = (_warp_scans if algorithm == "warp_scans" else _raking)(op, barrier)
    seeded, callback = seed != "none", seed == "prefix"

    @cuda.jit(device=True)
    def scan(items_in, items_out, state, calls):
        scratch = cuda.shared.array(0, items_in.dtype)
        me, n_threads = np.int32(rank()), np.int32(threads())
        partial = items_in[0]
        for i in range(1, ipt):
            partial = op(partial, items_in[i], state)
        prefix, aggregate = prefixes(scratch, me, n_threads, partial, state)
        barrier()  # every prefix is read: the scratch is free again
        lead = state[0]
        if callback:  # the first warp calls the callback; thread 0's return value prefixes the tile
            if me < WARP_SIZE:
                lead = state[0]
                state[0] = op(state[0], aggregate, state)
                state[1] = aggregate
                calls[0] += 1
            if me == 0:
                scratch[n_threads + WARP_SIZE] = lead
            barrier()
            lead = scratch[n_threads + WARP_SIZE]
        has_prefix = me > 0
        if seeded:
            prefix = op(lead, prefix, state) if has_prefix else lead
            has_prefix = True
        x = prefix
        for i in range(ipt):
            item = items_in[i]  # read before the write: items_out may be items_in
            if inclusive:
                x = op(x, item, state) if has_prefix or i > 0 else item
                items_out[i] = x
            else:
                items_out[i] = x if has_prefix or i > 0 else nbtype(0)
                x = op(x, item, state) if has_prefix or i > 0 else item
        barrier()  # the caller may reuse the scratch as soon as this returns
        return aggregate

    return scan


@functools.cache
def build_scan(dtype: str, ipt: int, algorithm: str, op: str, mode: str, seed: str) -> DeviceFunction:
    """The Scan device function, without the static checks of :func:`block_scan`."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))
    return _block(operator(dtype, op), nbtype, ipt, algorithm, mode == "inclusive", seed)
