"""Warp Scan as numba-cuda device functions, callable from any ``@cuda.jit`` kernel: CUB's WarpScan (InclusiveScan,
ExclusiveScan, with or without an initial value, with the warp aggregate) over logical warps of 1 to 32 lanes and
the operators of :mod:`coopcheck.scan`.

dtype, the logical warp's width, the operator, the mode and the seed are compile-time; the block shape and the
initial value are run-time values. Logical warps cut each hardware warp from its lane 0 (:mod:`coopcheck.warp_scan`),
so a hardware warp's barrier orders all its logical warps, whatever the width, a power of two or not (CUB's
WarpScanSmem gives a non-power-of-two logical warp past a hardware warp's first a WarpMask without its own lanes:
NVIDIA/cccl#858). Each lane scans up as CUB's shuffle path does (WarpScanShfl::InclusiveScan), through shared
scratch of one item a thread (numba's simulator has no shuffles): at step ``s`` lane ``l >= s`` takes
``op(lane l - s's partial, its own)``, so lane ``l`` holds the inclusive scan of lanes 0 to ``l`` in lane order.
One more exchange gives each lane its left neighbour's scan (exclusive) and its logical warp's last lane's (the
aggregate, without the seed). Every step is separated by a barrier of the hardware warp, never of the block (in the
simulator, which has no warp barrier, a block barrier that every thread calls alike).

Example::

    scan = coopcheck_numba.warp_scan("int32", 8, "sum", "exclusive", "initial")

    @cuda.jit
    def kernel(...):
        ...
        scanned, aggregate = scan(item, initial_value)   # every lane: its scan and its logical warp's aggregate

    kernel[grid, 128, 0, coopcheck_numba.warp_scan_shared_bytes("int32", 128)](...)
"""

from __future__ import annotations

import functools

import numpy as np
from coopcheck import KernelSpec
from coopcheck.vocabulary import WARP_SIZE
from coopcheck.warp_scan import check_spec
from numba import cuda
from numba.cuda.np import numpy_support

from coopcheck_numba.blockio import rank, threads, warp_sync
from coopcheck_numba.reduce import DeviceFunction, operator


def warp_scan(dtype: str, width: int, op: str, mode: str, seed: str) -> DeviceFunction:
    """A device function ``scan(item, initial) -> (scanned, aggregate)``: the lane's inclusive or exclusive scan
    over its logical warp (seed ``initial``: prefixed by ``initial``; exclusive without a seed: lane 0's is 0) and
    its logical warp's aggregate (the seed not in it).

    Every thread of the block calls it together. Raises ``coopcheck.InvalidParameter`` for bad static parameters.
    """
    check_spec(KernelSpec("warp.scan", dtype, (1,), 1, "any", variant=(
        ("width", str(width)), ("op", op), ("mode", mode), ("seed", seed), ("aggregate", "on"))))
    return build_warp_scan(dtype, width, op, mode, seed)


def warp_scan_shared_bytes(dtype: str, threads: int) -> int:
    """Dynamic shared memory a launch of ``threads`` threads must provide: one item a thread.

    >>> warp_scan_shared_bytes("float64", 65)
    520
    """
    return threads * np.dtype(dtype).itemsize


@functools.cache
def build_warp_scan(dtype: str, width: int, op: str, mode: str, seed: str) -> DeviceFunction:
    """The Warp Scan device function, without the static checks of :func:`warp_scan`."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))
    combine = operator(dtype, op)
    steps = (width - 1).bit_length()  # 1, 2, 4, ... below width
    inclusive, seeded = mode == "inclusive", seed == "initial"

    @cuda.jit(device=True)
    def scan(item, initial):
        scratch = cuda.shared.array(0, nbtype)
        me, n_threads = np.int32(rank()), np.int32(threads())
        within = me % WARP_SIZE
        lane = within % width
        present = min(width, n_threads - (me - lane), WARP_SIZE - (within - lane))
        x = item
        for level in range(steps):
            step = np.int32(1) << level
            scratch[me] = x
            warp_sync(me, n_threads)
            if lane >= step:
                x = combine(scratch[me - step], x, 0)
            warp_sync(me, n_threads)  # the partials are read before the next step overwrites them
        scratch[me] = x
        warp_sync(me, n_threads)
        aggregate = scratch[me - lane + present - 1]
        left = scratch[me - 1] if lane > 0 else nbtype(0)
        warp_sync(me, n_threads)  # the scratch is free again for the caller's next scan
        if inclusive:
            return (combine(initial, x, 0) if seeded else x), aggregate
        if lane == 0:
            return (initial if seeded else nbtype(0)), aggregate
        return (combine(initial, left, 0) if seeded else left), aggregate

    return scan
