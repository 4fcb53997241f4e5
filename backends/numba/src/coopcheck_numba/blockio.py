"""Block Load and Store as numba-cuda device functions, callable from any ``@cuda.jit`` kernel.

dtype, items_per_thread and algorithm are compile-time; the block shape, valid_items, offset and
oob_default are run-time values, so one device function serves every block shape. Every algorithm
is composed of three guarded copies (memory -> registers, registers -> memory, memory -> memory)
that touch only items whose tile index is below ``valid_items``: that is what keeps invalid
payload slots as they were, for the transposes too (CUB does not promise that).

Example::

    load = coopcheck_numba.block_load("int32", 4, "transpose")

    @cuda.jit
    def kernel(src, n):
        items = cuda.local.array(4, numba.int32)
        load(src, items, n, 0, -1)          # src, items, valid_items, offset, oob_default

    kernel[grid, (16, 8), 0, coopcheck_numba.shared_bytes("int32", 4, "transpose", 128)](src, n)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from coopcheck import TRANSPOSE_FAMILY, check_static
from numba import cuda
from numba.cuda.core import config
from numba.cuda.np import numpy_support

from coopcheck_numba import wide

WARP_SIZE = 32
#: numba.cuda is either the simulator or the real target, for the whole process.
SIMULATED = bool(config.ENABLE_CUDASIM)

DeviceFunction = Callable[..., Any]


def block_load(
    dtype: str, items_per_thread: int, algorithm: str = "direct", *, block: tuple[int, ...] | None = None
) -> DeviceFunction:
    """A device function ``load(src, items, valid_items, offset=0, oob_default=None)``.

    It reads the tile at ``src[offset:]`` into the local array ``items`` of every thread: items
    whose tile index is below ``valid_items`` are read; the other slots take ``oob_default`` when
    one is passed and otherwise keep their value. ``src`` and ``items`` are 1-D C-contiguous
    arrays of ``dtype``; all threads of the block call it together, with the same ``valid_items``,
    ``offset`` and ``oob_default``. Raises ``coopcheck.InvalidParameter`` for bad static parameters;
    ``block``, when the caller declares it, lets the block-dependent rules be checked too (else a
    ``warp_transpose`` caller must launch a multiple of 32 threads).
    """
    _check_statics("block.load", dtype, items_per_thread, algorithm, block)
    return build_load(dtype, items_per_thread, algorithm)


def block_store(
    dtype: str, items_per_thread: int, algorithm: str = "direct", *, block: tuple[int, ...] | None = None
) -> DeviceFunction:
    """A device function ``store(dst, items, valid_items, offset=0)`` that writes the items whose
    tile index is below ``valid_items`` to ``dst[offset:]`` and nothing else (see :func:`block_load`)."""
    _check_statics("block.store", dtype, items_per_thread, algorithm, block)
    return build_store(dtype, items_per_thread, algorithm)


def shared_bytes(dtype: str, items_per_thread: int, algorithm: str, threads: int) -> int:
    """Dynamic shared memory that a launch of ``threads`` threads must provide for this Load/Store.

    The transpose family exchanges one whole tile through dynamic shared memory from byte 0 (a
    kernel with dynamic shared memory of its own must place it elsewhere); the others use none.

    >>> shared_bytes("float64", 4, "transpose", 128), shared_bytes("float64", 4, "striped", 128)
    (4096, 0)
    """
    if algorithm not in TRANSPOSE_FAMILY:
        return 0
    return threads * items_per_thread * np.dtype(dtype).itemsize


def _check_statics(
    operation: str, dtype: str, items_per_thread: int, algorithm: str, block: tuple[int, ...] | None
) -> None:
    # Without a declared block the thread count is a launch-time value, so the block-dependent
    # rule (warp_multiple) becomes the caller's precondition: one warp stands in for the block.
    check_static(operation, block=block or (WARP_SIZE,), items_per_thread=items_per_thread,
                 algorithm=algorithm, dtype=dtype)


@cuda.jit(device=True)
def rank():
    """The thread's rank in its block, x fastest."""
    return cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)


@cuda.jit(device=True)
def threads():
    """Threads in the block."""
    return cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z


@cuda.jit(device=True)
def _warp_barrier():
    if SIMULATED:
        # The simulator has no warp barrier; the block barrier is stronger, and every thread of
        # the block makes the same calls.
        cuda.syncthreads()
    else:
        cuda.syncwarp()


@cuda.jit(device=True)
def warp_sync(me, n_threads):
    """A barrier of the thread's own hardware warp: its lanes that exist (the block's last warp may have fewer)."""
    if SIMULATED:
        # The simulator has no warp barrier; the block barrier is stronger, and every thread calls it.
        cuda.syncthreads()
    else:
        lanes = min(n_threads - me // WARP_SIZE * WARP_SIZE, WARP_SIZE)
        cuda.syncwarp(np.uint32(0xFFFFFFFF) if lanes == WARP_SIZE else np.uint32((1 << lanes) - 1))


class _Copies(NamedTuple):
    """The guarded copies of ``ipt`` items that every algorithm is composed of.

    Each visits tile indices ``t = start + i*step`` for ``i < ipt`` and touches only ``t < valid``.
    """

    #: ``gather(src, base, items, start, step, valid, oob)``: ``items[i] = src[base + t]``, else
    #: ``oob`` when it is not None, else the slot is left alone.
    gather: DeviceFunction
    #: ``scatter(dst, base, items, start, step, valid)``: ``dst[base + t] = items[i]``.
    scatter: DeviceFunction
    #: ``move(src, src_base, dst, dst_base, start, step, valid)``: ``dst[dst_base + t] = src[src_base + t]``.
    move: DeviceFunction


@functools.cache
def _copies(ipt: int) -> _Copies:
    @cuda.jit(device=True)
    def gather(src, base, items, start, step, valid_items, oob_default):
        for i in range(ipt):
            t = start + i * step
            if t < valid_items:
                items[i] = src[base + t]
            elif oob_default is not None:
                items[i] = oob_default

    @cuda.jit(device=True)
    def scatter(dst, base, items, start, step, valid_items):
        for i in range(ipt):
            t = start + i * step
            if t < valid_items:
                dst[base + t] = items[i]

    @cuda.jit(device=True)
    def move(src, src_base, dst, dst_base, start, step, valid_items):
        for i in range(ipt):
            t = start + i * step
            if t < valid_items:
                dst[dst_base + t] = src[src_base + t]

    return _Copies(gather, scatter, move)


class _Operands(NamedTuple):
    """What one (operation, dtype, ipt, algorithm) needs besides the copies."""

    nbtype: Any
    check: DeviceFunction
    width: int  # items per wide access (vectorize)
    wide_bytes: int
    wide: wide.WideOps


def _operands(operation: str, dtype: str, ipt: int, algorithm: str) -> _Operands:
    itemsize = np.dtype(dtype).itemsize
    nbtype = numpy_support.from_dtype(np.dtype(dtype))
    label = f"coopcheck_numba.{operation}({dtype}, ipt={ipt}, {algorithm})"
    width = wide.vector_width(itemsize, ipt)
    return _Operands(nbtype, wide.operand_check(nbtype, label, SIMULATED), width, width * itemsize,
                     wide.for_target(width, SIMULATED))


@functools.cache
def build_load(dtype: str, ipt: int, algorithm: str) -> DeviceFunction:
    """The Load device function, without the static checks of :func:`block_load`."""
    ops = _operands("block_load", dtype, ipt, algorithm)
    check, nbtype, width, wide_bytes = ops.check, ops.nbtype, ops.width, ops.wide_bytes
    wide_load, address = ops.wide.load, ops.wide.address
    gather, _, move = _copies(ipt)

    if algorithm == "direct":

        @cuda.jit(device=True)
        def load(src, items, valid_items, offset=0, oob_default=None):
            check(src, items)
            gather(src, offset, items, rank() * ipt, 1, valid_items, oob_default)

    elif algorithm == "striped":

        @cuda.jit(device=True)
        def load(src, items, valid_items, offset=0, oob_default=None):
            check(src, items)
            gather(src, offset, items, rank(), threads(), valid_items, oob_default)

    elif algorithm == "vectorize":

        @cuda.jit(device=True)
        def load(src, items, valid_items, offset=0, oob_default=None):
            check(src, items)
            first = rank() * ipt
            # Block-uniform alignment test: each thread's first item lies a multiple of ``width``
            # items past the tile's first item.
            if width > 1 and first + ipt <= valid_items and address(src, offset) % wide_bytes == 0:
                for v in range(ipt // width):
                    wide_load(src, offset + first + v * width, items, v * width)
            else:
                gather(src, offset, items, first, 1, valid_items, oob_default)

    elif algorithm == "transpose":

        @cuda.jit(device=True)
        def load(src, items, valid_items, offset=0, oob_default=None):
            check(src, items)
            scratch = cuda.shared.array(0, nbtype)
            me = rank()
            move(src, offset, scratch, 0, me, threads(), valid_items)  # coalesced: striped
            cuda.syncthreads()
            gather(scratch, 0, items, me * ipt, 1, valid_items, oob_default)
            cuda.syncthreads()  # the caller may reuse the scratch as soon as this returns

    else:  # warp_transpose: each warp exchanges its own 32*ipt items

        @cuda.jit(device=True)
        def load(src, items, valid_items, offset=0, oob_default=None):
            check(src, items)
            scratch = cuda.shared.array(0, nbtype)
            me = rank()
            lane = me & (WARP_SIZE - 1)
            move(src, offset, scratch, 0, (me - lane) * ipt + lane, WARP_SIZE, valid_items)
            _warp_barrier()
            gather(scratch, 0, items, me * ipt, 1, valid_items, oob_default)
            _warp_barrier()

    return load


@functools.cache
def build_store(dtype: str, ipt: int, algorithm: str) -> DeviceFunction:
    """The Store device function, without the static checks of :func:`block_store`."""
    ops = _operands("block_store", dtype, ipt, algorithm)
    check, nbtype, width, wide_bytes = ops.check, ops.nbtype, ops.width, ops.wide_bytes
    wide_store, address = ops.wide.store, ops.wide.address
    _, scatter, move = _copies(ipt)

    if algorithm == "direct":

        @cuda.jit(device=True)
        def store(dst, items, valid_items, offset=0):
            check(dst, items)
            scatter(dst, offset, items, rank() * ipt, 1, valid_items)

    elif algorithm == "striped":

        @cuda.jit(device=True)
        def store(dst, items, valid_items, offset=0):
            check(dst, items)
            scatter(dst, offset, items, rank(), threads(), valid_items)

    elif algorithm == "vectorize":

        @cuda.jit(device=True)
        def store(dst, items, valid_items, offset=0):
            check(dst, items)
            first = rank() * ipt
            if width > 1 and first + ipt <= valid_items and address(dst, offset) % wide_bytes == 0:
                for v in range(ipt // width):
                    wide_store(dst, offset + first + v * width, items, v * width)
            else:
                scatter(dst, offset, items, first, 1, valid_items)

    elif algorithm == "transpose":

        @cuda.jit(device=True)
        def store(dst, items, valid_items, offset=0):
            check(dst, items)
            scratch = cuda.shared.array(0, nbtype)
            me = rank()
            scatter(scratch, 0, items, me * ipt, 1, valid_items)
            cuda.syncthreads()
            move(scratch, 0, dst, offset, me, threads(), valid_items)  # coalesced: striped
            cuda.syncthreads()

    else:  # warp_transpose

        @cuda.jit(device=True)
        def store(dst, items, valid_items, offset=0):
            check(dst, items)
            scratch = cuda.shared.array(0, nbtype)
            me = rank()
            lane = me & (WARP_SIZE - 1)
            scatter(scratch, 0, items, me * ipt, 1, valid_items)
            _warp_barrier()
            move(scratch, 0, dst, offset, (me - lane) * ipt + lane, WARP_SIZE, valid_items)
            _warp_barrier()

    return store
