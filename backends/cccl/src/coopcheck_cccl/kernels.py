"""The cccl contract kernels: one numba-cuda kernel per CUB specialization calling cuda.coop's primitive.

They implement the Load/Store ABI of :mod:`coopcheck.load_store` for what cuda.coop 1.1.1 binds, the full
tile without oob_default (``Load(ptr, items)``, ``Store(ptr, items)``): block ``b`` loads from or stores to
``b*region + offset[b]``, Load's payload starts from its ``init`` slots and goes to its ``dst`` rows. A
batch asking for fewer valid items or an oob_default is refused (the adapter declines such cases before).
The Exchange kernel implements :mod:`coopcheck.exchange`'s ABI around StripedToBlocked, which takes no ranks or
flags: the kernel has no such parameters and a launch copies neither to the device. The Reduce kernel implements
:mod:`coopcheck.reduce`'s ABI; with one item a thread it calls ``Reduce(item, op)`` for a full tile and
``Reduce(item, op, num_valid)`` for a partial one (both overloads, by a branch uniform per block), with more only
the full tile's ``Reduce(items, op)``: a batch asking for a partial tile there is refused. The Scan kernel implements
:mod:`coopcheck.scan`'s ABI with seed ``prefix`` (the one cuda.coop can give its outputs): each thread's prefix
callback state carries across the block's tiles, and the block meets at a barrier before it reuses the TempStorage.
The Warp Reduce kernel implements :mod:`coopcheck.warp_reduce`'s ABI in mode reduce with every lane valid, the one
cuda.coop binds (``Reduce(input, op)`` / ``Sum(input)``): a batch asking for fewer valid lanes is refused. The Warp
Scan kernel implements :mod:`coopcheck.warp_scan`'s ABI for the exclusive sum without seed or aggregate
(``ExclusiveSum(input, output)``). Each logical warp, a partial one too, calls its primitive as CUB's full-warp
overload, with a TempStorage of its own (numbered by :func:`coopcheck.warp_reduce.logical_warp_of`): the partial and
the non-power-of-two logical warps are left to the contract's judging (CUB promises neither: NVIDIA/cccl#858).
The primitive's TempStorage is dynamic shared memory from byte 0 (a warp primitive's, one slot per logical warp,
:func:`shared_bytes`); each kernel is named
``coopcheck.kernel_symbol(spec)``, which numba mangles into the entry name that sanitizer records show.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numba
import numpy as np
from coopcheck import (
    ExchangeBatch,
    KernelSpec,
    LoadBatch,
    ReduceBatch,
    ScanBatch,
    StoreBatch,
    WarpReduceBatch,
    WarpScanBatch,
    exchange,
    kernel_symbol,
    reduce,
    scan,
    warp_reduce,
    warp_scan,
)
from coopcheck.exchange import out_length
from coopcheck.grids import configured
from numba import cuda
from numba.cuda import types
from numba.cuda.np import numpy_support

from coopcheck_cccl import operators

#: Dynamic shared memory a launch gets without opting the kernel in (CUDA's default per-block limit).
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
#: The alignment of the TempStorage view of dynamic shared memory (any TempStorage of these types needs less).
TEMP_STORAGE_ALIGNMENT = 16


class Kernel(NamedTuple):
    """A contract kernel (numba dispatcher) and the one signature it is compiled for."""

    dispatcher: Any
    signature: tuple[Any, ...]


def contract_kernel(spec: KernelSpec, primitive: Any) -> Kernel:
    """The contract kernel of ``spec``'s family around ``primitive``, not compiled yet."""
    if spec.operation in reduce.OPERATIONS:
        return build_reduce(spec, primitive)
    if spec.operation in scan.OPERATIONS:
        return build_scan(spec, primitive)
    if spec.operation in warp_reduce.OPERATIONS | warp_scan.OPERATIONS:
        return build_warp(spec, primitive)
    return (build_exchange if spec.operation in exchange.OPERATIONS else build)(spec, primitive)


def build(spec: KernelSpec, primitive: Any) -> Kernel:
    """The contract kernel of ``spec`` around ``primitive`` (a ``make_load`` / ``make_store`` result, whose
    ``files`` it links), not compiled yet.

    Load and Store call their primitive alike, ``primitive(temp_storage, tiles[base:], items)``, so one body
    serves both: ``tiles`` is Load's ``src`` or Store's ``dst``, ``payload`` the items each thread starts
    with (Load's ``init``, Store's ``items``), and only Load writes its payload back, to ``out``. CUB fixes
    the block shape, so the rank is spelled with it.
    """
    item = numpy_support.from_dtype(np.dtype(spec.dtype))
    ipt, tile, is_load = spec.items_per_thread, spec.tile, spec.operation == "block.load"
    bx, by = (*spec.block, 1)[:2]

    def kernel(tiles, payload, out, offset, region):
        b = np.int64(cuda.blockIdx.x)
        slot = b * tile + (cuda.threadIdx.x + bx * (cuda.threadIdx.y + by * cuda.threadIdx.z)) * ipt
        items = cuda.local.array(ipt, item)
        for i in range(ipt):
            items[i] = payload[slot + i]
        # alignment: TEMP_STORAGE_ALIGNMENT, written as the literal numba requires
        primitive(cuda.shared.array(0, numba.uint8, alignment=16), tiles[b * region + offset[b]:], items)
        if is_load:  # a constant: the Store kernel has no such branch
            for i in range(ipt):
                out[slot + i] = items[i]

    vector = types.Array(item, 1, "C")
    return _jit(kernel, spec, primitive, (vector, vector, vector, types.Array(types.int64, 1, "C"), types.int64))


def build_exchange(spec: KernelSpec, primitive: Any) -> Kernel:
    """The Exchange contract kernel of ``spec`` around ``primitive`` (a ``make_exchange`` result), not compiled
    yet: each thread's items go through ``primitive(temp_storage, items)`` in place or
    ``primitive(temp_storage, items, out)`` into a second array, whose input items are then written too."""
    item = numpy_support.from_dtype(np.dtype(spec.dtype))
    ipt, tile, inplace = spec.items_per_thread, spec.tile, spec.static("output") == "inplace"
    width = out_length(spec) // tile  # dst tiles per block
    bx, by = (*spec.block, 1)[:2]

    def kernel(items, dst):
        b = np.int64(cuda.blockIdx.x)
        me = np.int64(cuda.threadIdx.x + bx * (cuda.threadIdx.y + by * cuda.threadIdx.z))
        held = cuda.local.array(ipt, item)
        for i in range(ipt):
            held[i] = items[b * tile + me * ipt + i]
        first = width * b * tile + me * ipt
        # alignment: TEMP_STORAGE_ALIGNMENT, written as the literal numba requires
        scratch = cuda.shared.array(0, numba.uint8, alignment=16)
        if inplace:  # a constant: each kernel has one of the two calls
            primitive(scratch, held)
            for i in range(ipt):
                dst[first + i] = held[i]
        else:
            out = cuda.local.array(ipt, item)
            primitive(scratch, held, out)
            for i in range(ipt):
                dst[first + i] = out[i]
                dst[first + tile + i] = held[i]  # the input items, as the call left them

    vector = types.Array(item, 1, "C")
    return _jit(kernel, spec, primitive, (vector, vector))


def build_reduce(spec: KernelSpec, primitive: Any) -> Kernel:
    """The Reduce contract kernel of ``spec`` around ``primitive`` (a ``make_reduce`` / ``make_sum`` result), not
    compiled yet: every thread writes its return value and its seen flag (only the recording operator, whose
    primitive takes the thread's ``[sentinel, seen]`` pair as an argument, ever sets it)."""
    item = numpy_support.from_dtype(np.dtype(spec.dtype))
    ipt, threads, stateful = spec.items_per_thread, spec.threads, spec.static("op") == reduce.RECORDING
    bx, by = (*spec.block, 1)[:2]

    if ipt == 1 and stateful:

        def call(temp, held, state, valid):
            if valid == threads:
                return primitive(temp, held[0], state)
            return primitive(temp, held[0], state, valid)

    elif ipt == 1:

        def call(temp, held, state, valid):
            if valid == threads:
                return primitive(temp, held[0])
            return primitive(temp, held[0], valid)

    elif stateful:

        def call(temp, held, state, valid):
            return primitive(temp, held, state)

    else:

        def call(temp, held, state, valid):
            return primitive(temp, held)

    reduced = cuda.jit(device=True)(call)

    def kernel(items, valid, sentinel, dst):
        b = np.int64(cuda.blockIdx.x)
        me = np.int64(cuda.threadIdx.x + bx * (cuda.threadIdx.y + by * cuda.threadIdx.z))
        held = cuda.local.array(ipt, item)
        for i in range(ipt):
            held[i] = items[(b * threads + me) * ipt + i]
        state = cuda.local.array(2, item)  # [the block's sentinel, the seen flag]
        state[0] = sentinel[b]
        state[1] = 0
        # alignment: TEMP_STORAGE_ALIGNMENT, written as the literal numba requires
        result = reduced(cuda.shared.array(0, numba.uint8, alignment=16), held, state, valid[b])
        dst[2 * b * threads + me] = result
        dst[2 * b * threads + threads + me] = state[1]

    vector = types.Array(item, 1, "C")
    return _jit(kernel, spec, primitive, (vector, types.Array(types.int32, 1, "C"), vector, vector))


def build_scan(spec: KernelSpec, primitive: Any) -> Kernel:
    """The Scan contract kernel of ``spec`` (seed ``prefix``) around ``primitive`` (a scan made with
    :func:`coopcheck_cccl.operators.prefix_callback`), not compiled yet: block ``b`` scans its
    :func:`coopcheck.scan.tiles` tiles in turn, in place, each thread's callback state ``[running prefix, last
    argument, calls]`` starting from ``initial[b]`` and carried across them; after each tile a thread writes its
    scanned items and its callback's last argument, after the last its calls."""
    item = numpy_support.from_dtype(np.dtype(spec.dtype))
    ipt, threads, tile, n_tiles = spec.items_per_thread, spec.threads, spec.tile, scan.tiles(spec)
    width, bx, by = scan.out_length(spec), *(*spec.block, 1)[:2]
    running, argument, calls = operators.RUNNING, operators.ARGUMENT, operators.CALLS

    if ipt == 1:

        def call(temp, held, state):
            held[0] = primitive(temp, held[0], state)

    else:

        def call(temp, held, state):
            primitive(temp, held, held, state)

    scanned = cuda.jit(device=True)(call)

    def kernel(items, initial, dst):
        b = np.int64(cuda.blockIdx.x)
        me = np.int64(cuda.threadIdx.x + bx * (cuda.threadIdx.y + by * cuda.threadIdx.z))
        held = cuda.local.array(ipt, item)
        state = cuda.local.array(3, item)  # the callback's [running prefix, last argument, calls]
        state[running] = initial[b]
        state[argument] = 0
        state[calls] = 0
        # alignment: TEMP_STORAGE_ALIGNMENT, written as the literal numba requires
        temp = cuda.shared.array(0, numba.uint8, alignment=16)
        for k in range(n_tiles):
            for i in range(ipt):
                held[i] = items[(b * n_tiles + k) * tile + me * ipt + i]
            scanned(temp, held, state)
            cuda.syncthreads()  # the next tile's scan reuses the TempStorage (CUB asks a barrier before)
            for i in range(ipt):
                dst[b * width + k * tile + me * ipt + i] = held[i]
            dst[b * width + n_tiles * tile + k * threads + me] = state[argument]
        dst[b * width + n_tiles * (tile + threads) + me] = state[calls]

    vector = types.Array(item, 1, "C")
    return _jit(kernel, spec, primitive, (vector, vector, vector))


def logical_warps_in_block(spec: KernelSpec) -> int:
    """How many logical warps a block of ``spec`` holds, each with a TempStorage of its own (CUB asks one a logical
    warp)."""
    return warp_reduce.logical_warp_of(spec.threads - 1, warp_reduce.width(spec)) + 1


def shared_bytes(spec: KernelSpec, temp_storage_bytes: int) -> int:
    """Dynamic shared memory a launch of ``spec`` takes: the primitive's TempStorage, or for a warp family one
    TempStorage a logical warp, each :data:`TEMP_STORAGE_ALIGNMENT`-aligned.

    >>> shared_bytes(KernelSpec("warp.scan", "int32", (49,), 1, "any", variant=(("width", "7"),)), 20)
    256
    """
    if spec.operation not in warp_reduce.OPERATIONS | warp_scan.OPERATIONS:
        return temp_storage_bytes
    return logical_warps_in_block(spec) * _warp_storage_stride(temp_storage_bytes)


def _warp_storage_stride(temp_storage_bytes: int) -> int:
    """Bytes between two logical warps' TempStorage: the size rounded up to the alignment (an empty one takes one)."""
    return -(-max(temp_storage_bytes, 1) // TEMP_STORAGE_ALIGNMENT) * TEMP_STORAGE_ALIGNMENT


def build_warp(spec: KernelSpec, primitive: Any) -> Kernel:
    """The Warp Reduce or Warp Scan contract kernel of ``spec`` around ``primitive`` (a warp ``make_reduce`` /
    ``make_sum`` / ``make_exclusive_sum`` result), not compiled yet: thread ``r`` of logical warp ``w``
    (:func:`coopcheck.warp_reduce.logical_warps`, numbered in rank order) calls ``primitive(temp_storage[w], item)``
    (Reduce with ``first`` also the thread's ``[sentinel, seen]`` state) and writes what it returns; Warp Reduce also
    its seen flag. Every thread of the block calls, whole logical warp or not."""
    item = numpy_support.from_dtype(np.dtype(spec.dtype))
    threads, lanes, stride = spec.threads, warp_reduce.width(spec), _warp_storage_stride(primitive.temp_storage_bytes)
    bx, by = (*spec.block, 1)[:2]
    vector = types.Array(item, 1, "C")
    warp_of = cuda.jit(device=True)(warp_reduce.logical_warp_of)

    def storage_offset(me):
        """Where the TempStorage of thread ``me``'s logical warp starts in dynamic shared memory."""
        return warp_of(me, lanes) * stride

    offset = cuda.jit(device=True)(storage_offset)

    if spec.operation in warp_scan.OPERATIONS:

        def scan_kernel(items, dst):
            me = np.int64(cuda.threadIdx.x + bx * (cuda.threadIdx.y + by * cuda.threadIdx.z))
            slot = np.int64(cuda.blockIdx.x) * threads + me
            # alignment: TEMP_STORAGE_ALIGNMENT, written as the literal numba requires
            temp = cuda.shared.array(0, numba.uint8, alignment=16)
            dst[slot] = primitive(temp[offset(me):], items[slot])

        return _jit(scan_kernel, spec, primitive, (vector, vector))

    if spec.static("op") == reduce.RECORDING:

        def call(temp, held, state):
            return primitive(temp, held, state)

    else:

        def call(temp, held, state):
            return primitive(temp, held)

    reduced = cuda.jit(device=True)(call)

    def reduce_kernel(items, sentinel, dst):
        b = np.int64(cuda.blockIdx.x)
        me = np.int64(cuda.threadIdx.x + bx * (cuda.threadIdx.y + by * cuda.threadIdx.z))
        state = cuda.local.array(2, item)  # [the block's sentinel, the seen flag]
        state[0] = sentinel[b]
        state[1] = 0
        # alignment: TEMP_STORAGE_ALIGNMENT, written as the literal numba requires
        temp = cuda.shared.array(0, numba.uint8, alignment=16)
        dst[2 * b * threads + me] = reduced(temp[offset(me):], items[b * threads + me], state)
        dst[2 * b * threads + threads + me] = state[1]

    return _jit(reduce_kernel, spec, primitive, (vector, vector, vector))


def _jit(kernel: Callable[..., None], spec: KernelSpec, primitive: Any, signature: tuple[Any, ...]) -> Kernel:
    """``kernel`` as ``spec``'s contract kernel: named ``coopcheck.kernel_symbol(spec)`` (numba mangles the qualified
    name), linked with the primitive's LTO-IR, and bounded to the block's threads, so ptxas fits the registers such a
    block may take. Unbounded, a 1024-thread float64 Reduce (raking_commutative_only, min or max) failed every launch
    on the H200 with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, and a Scan of 16 float64 items a thread took 126 registers."""
    kernel.__name__ = kernel.__qualname__ = kernel_symbol(spec)
    return Kernel(cuda.jit(kernel, link=list(primitive.files), launch_bounds=spec.threads), signature)


def full_tiles_only(spec: KernelSpec, batch: LoadBatch | StoreBatch | ReduceBatch) -> None:
    """Refuse a batch these kernels cannot honour: a block with fewer valid items than the tile (Reduce: with
    more than one item a thread), or (Load) with an oob_default. Running it would charge the adapter's own slip
    to cuda.coop as a Fail."""
    if isinstance(batch, ReduceBatch) and spec.items_per_thread == 1:
        return
    partial = np.flatnonzero(np.asarray(batch.valid) != spec.tile)
    if partial.size:
        raise ValueError(f"block {partial[0]} asks for {batch.valid[partial[0]]} valid items: the cccl kernels "
                         f"take full tiles ({spec.tile}) only")
    if isinstance(batch, LoadBatch) and np.any(batch.has_oob):
        raise ValueError("a block asks for an oob_default: the cccl kernels take none")


def every_lane_valid(spec: KernelSpec, batch: WarpReduceBatch) -> None:
    """Refuse a Warp Reduce batch with a block of fewer valid lanes than the width: cuda.coop binds no valid_items,
    so running it would charge the adapter's own slip to cuda.coop as a Fail."""
    short = np.flatnonzero(np.asarray(batch.valid) != warp_reduce.width(spec))
    if short.size:
        raise ValueError(f"block {short[0]} asks for {batch.valid[short[0]]} valid lanes: the cccl Warp Reduce kernels "
                         f"take every lane of the width ({warp_reduce.width(spec)}) only")


def launch(kernel: Kernel, spec: KernelSpec, batch: LoadBatch | StoreBatch | ExchangeBatch | ReduceBatch | ScanBatch
           | WarpReduceBatch | WarpScanBatch, shared: int) -> Any:
    """One batched launch (grid ``n_blocks``, block ``spec.block``) with ``shared`` bytes of dynamic shared
    memory (past 48 KiB the kernel was opted in when it was built: :func:`allow_dynamic_shared`); returns the
    host copy of ``dst``. Every device array is allocated at its exact size, so memcheck sees any access past one."""
    if isinstance(batch, WarpReduceBatch):
        every_lane_valid(spec, batch)
    elif not isinstance(batch, ExchangeBatch | ScanBatch | WarpScanBatch):
        full_tiles_only(spec, batch)
    dtype = np.dtype(spec.dtype)
    run = configured(kernel.dispatcher, batch.n_blocks, spec.block, shared)
    if isinstance(batch, WarpScanBatch):
        dst = cuda.device_array(batch.n_blocks * warp_scan.out_length(spec), dtype)
        run(cuda.to_device(np.ascontiguousarray(batch.items, dtype)), dst)
        return dst.copy_to_host()
    if isinstance(batch, WarpReduceBatch):
        dst = cuda.device_array(batch.n_blocks * warp_reduce.out_length(spec), dtype)
        run(cuda.to_device(np.ascontiguousarray(batch.items, dtype)),
            cuda.to_device(np.ascontiguousarray(batch.sentinel, dtype)), dst)
        return dst.copy_to_host()
    if isinstance(batch, ScanBatch):
        dst = cuda.device_array(batch.n_blocks * scan.out_length(spec), dtype)
        run(cuda.to_device(np.ascontiguousarray(batch.items, dtype)),
            cuda.to_device(np.ascontiguousarray(batch.initial, dtype)), dst)
        return dst.copy_to_host()
    if isinstance(batch, ExchangeBatch):
        dst = cuda.device_array(batch.n_blocks * out_length(spec), dtype)
        run(cuda.to_device(np.ascontiguousarray(batch.items, dtype)), dst)
        return dst.copy_to_host()
    if isinstance(batch, ReduceBatch):
        dst = cuda.device_array(batch.n_blocks * reduce.out_length(spec), dtype)
        run(cuda.to_device(np.ascontiguousarray(batch.items, dtype)),
            cuda.to_device(np.ascontiguousarray(batch.valid, np.int32)),
            cuda.to_device(np.ascontiguousarray(batch.sentinel, dtype)), dst)
        return dst.copy_to_host()
    offset, region = cuda.to_device(np.ascontiguousarray(batch.offset, np.int64)), np.int64(batch.region)
    if isinstance(batch, LoadBatch):
        dst = cuda.device_array(batch.n_blocks * spec.tile, dtype)
        run(cuda.to_device(np.ascontiguousarray(batch.src, dtype)),
            cuda.to_device(np.ascontiguousarray(batch.init, dtype)), dst, offset, region)
    else:
        dst, items = (cuda.to_device(np.ascontiguousarray(a, dtype)) for a in (batch.dst, batch.items))
        run(dst, items, items, offset, region)  # Store writes no payload back: ``out`` is never touched
    return dst.copy_to_host()


def allow_dynamic_shared(kernel: Kernel, nbytes: int) -> None:
    """Let the compiled kernel take ``nbytes`` of dynamic shared memory, once, when past CUDA's default 48 KiB
    (numba has no setter for it)."""
    if nbytes <= DEFAULT_DYNAMIC_SHARED_LIMIT:
        return
    from numba.cuda.cudadrv.driver import binding, driver

    function = kernel.dispatcher.compile(kernel.signature)._codelibrary.get_cufunc()
    driver.cuKernelSetAttribute(binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                nbytes, function.handle, function.device.id)
