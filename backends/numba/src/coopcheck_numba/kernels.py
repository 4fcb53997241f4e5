"""The contract kernels: one Load-only, one Store-only, one Exchange, one Shuffle, one Reduce, one Scan, one Warp
Reduce and one Warp Scan ``@cuda.jit`` kernel per specialization.

They implement the batched ABIs of ``coopcheck.load_store``, ``coopcheck.exchange``, ``coopcheck.shuffle``,
``coopcheck.reduce``, ``coopcheck.scan``, ``coopcheck.warp_reduce`` and ``coopcheck.warp_scan`` (one block per case
instance) around the device functions of :mod:`coopcheck_numba.blockio`, :mod:`coopcheck_numba.exchange`,
:mod:`coopcheck_numba.shuffle`, :mod:`coopcheck_numba.reduce`, :mod:`coopcheck_numba.scan`,
:mod:`coopcheck_numba.warp_reduce` and :mod:`coopcheck_numba.warp_scan` (or any device functions of the same
signature, with the files they link), and are named ``coopcheck.kernel_symbol(spec)`` so that the mangled entry
name, and so every sanitizer record, names its specialization.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, NamedTuple

import numpy as np
from coopcheck import (
    ExchangeBatch,
    KernelSpec,
    LoadBatch,
    ReduceBatch,
    ScanBatch,
    ShuffleBatch,
    StoreBatch,
    WarpReduceBatch,
    WarpScanBatch,
    kernel_symbol,
    scan,
    warp_reduce,
    warp_scan,
)
from coopcheck.exchange import OPERATIONS as EXCHANGE
from coopcheck.exchange import out_length
from coopcheck.grids import configured
from coopcheck.reduce import OPERATIONS as REDUCE
from coopcheck.shuffle import BLOCK_ITEM
from coopcheck.shuffle import OPERATIONS as SHUFFLE
from coopcheck.shuffle import out_length as shuffle_out_length
from numba import cuda
from numba.cuda import types
from numba.cuda.np import numpy_support

from coopcheck_numba.blockio import SIMULATED, build_load, build_store, rank, threads
from coopcheck_numba.exchange import build_exchange
from coopcheck_numba.reduce import build_reduce
from coopcheck_numba.scan import build_scan
from coopcheck_numba.shuffle import build_shuffle
from coopcheck_numba.warp_reduce import build_warp_reduce
from coopcheck_numba.warp_scan import build_warp_scan

#: Dynamic shared memory a launch may take without opting in (CUDA's default per-block limit).
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
#: CPython's thread switch interval while numba's simulator runs a launch (CPython's default: 5 ms). The simulator
#: runs a Python thread per CUDA thread, and the launching thread polls them all for their barriers, holding the GIL
#: a whole interval at a time while threads a barrier released wait for it.
SIMULATOR_SWITCH_SECONDS = 0.001


class ContractKernel(NamedTuple):
    """A lazily compiled contract kernel and the one signature it is compiled for."""

    symbol: str
    dispatcher: Any
    signature: tuple[Any, ...]


def contract_kernel(spec: KernelSpec) -> ContractKernel:
    """The contract kernel for ``spec``, one per (operation, dtype, ipt, algorithm, variant) whatever the
    block shape (a launch parameter); compiling it is left to the caller."""
    if spec.operation in EXCHANGE:
        return _exchange_contract_kernel(spec.dtype, spec.items_per_thread, spec.algorithm, spec.static("slicing"),
                                         spec.static("output"))
    if spec.operation in SHUFFLE:
        return _shuffle_contract_kernel(spec.dtype, spec.items_per_thread, spec.algorithm, spec.static("output"))
    if spec.operation in REDUCE:
        return _reduce_contract_kernel(spec.dtype, spec.items_per_thread, spec.algorithm, spec.static("op"))
    if spec.operation in warp_reduce.OPERATIONS:
        return _warp_reduce_contract_kernel(spec.dtype, warp_reduce.width(spec), spec.static("op"), spec.static("mode"))
    if spec.operation in warp_scan.OPERATIONS:
        return _warp_scan_contract_kernel(spec.dtype, warp_scan.width(spec), spec.static("op"), spec.static("mode"),
                                          spec.static("seed"), warp_scan.aggregates(spec))
    if spec.operation in scan.OPERATIONS:
        return _scan_contract_kernel(spec.dtype, spec.items_per_thread, spec.algorithm, spec.static("op"),
                                     spec.static("mode"), spec.static("seed"))
    return _contract_kernel(spec.operation, spec.dtype, spec.items_per_thread, spec.algorithm)


@functools.cache
def _contract_kernel(operation: str, dtype: str, ipt: int, algorithm: str) -> ContractKernel:
    symbol = kernel_symbol(KernelSpec(operation, dtype, (1,), ipt, algorithm))
    if operation == "block.load":
        return load_kernel(build_load(dtype, ipt, algorithm), dtype, ipt, symbol)
    return store_kernel(build_store(dtype, ipt, algorithm), dtype, ipt, symbol)


def load_kernel(load: Callable[..., Any], dtype: str, ipt: int, symbol: str,
                link: Sequence[str] = ()) -> ContractKernel:
    """The Load contract kernel around any device function with :func:`coopcheck_numba.block_load`'s
    signature, named ``symbol``, linked with the files ``link`` names (the device function's code)."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))

    def kernel(src, init, dst, valid, offset, has_oob, oob, region):
        b = np.int64(cuda.blockIdx.x)
        slot = (b * threads() + rank()) * ipt
        items = cuda.local.array(ipt, nbtype)
        for i in range(ipt):
            items[i] = init[slot + i]
        base = b * region + offset[b]
        if has_oob[b] != 0:
            load(src, items, valid[b], base, oob[b])
        else:
            load(src, items, valid[b], base)
        for i in range(ipt):
            dst[slot + i] = items[i]

    vector, i32s, i64s = _arrays(nbtype)
    return _named(kernel, symbol, (vector, vector, vector, i32s, i64s, i32s, vector, types.int64), link)


def store_kernel(store: Callable[..., Any], dtype: str, ipt: int, symbol: str,
                 link: Sequence[str] = ()) -> ContractKernel:
    """The Store contract kernel around any device function with :func:`coopcheck_numba.block_store`'s
    signature, named ``symbol``, linked with the files ``link`` names."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))

    def kernel(items_in, dst, valid, offset, region):
        b = np.int64(cuda.blockIdx.x)
        slot = (b * threads() + rank()) * ipt
        items = cuda.local.array(ipt, nbtype)
        for i in range(ipt):
            items[i] = items_in[slot + i]
        store(dst, items, valid[b], b * region + offset[b])

    vector, i32s, i64s = _arrays(nbtype)
    return _named(kernel, symbol, (vector, vector, i32s, i64s, types.int64), link)


@functools.cache
def _exchange_contract_kernel(dtype: str, ipt: int, method: str, slicing: str, output: str) -> ContractKernel:
    symbol = kernel_symbol(KernelSpec("block.exchange", dtype, (1,), ipt, method,
                                      variant=(("slicing", slicing), ("output", output))))
    return exchange_kernel(build_exchange(dtype, ipt, method, slicing == "on"), dtype, ipt, output == "inplace",
                           symbol)


def exchange_kernel(exchange: Callable[..., Any], dtype: str, ipt: int, inplace: bool, symbol: str,
                    link: Sequence[str] = ()) -> ContractKernel:
    """The Exchange contract kernel around any device function with :func:`coopcheck_numba.block_exchange`'s
    signature, in place or into a second array (then also writing the input items after the call), named
    ``symbol``, linked with the files ``link`` names."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))

    def _load(items, ranks, flags, slot, held, held_ranks, held_flags):
        for i in range(ipt):
            held[i] = items[slot + i]
            held_ranks[i] = ranks[slot + i]
            held_flags[i] = flags[slot + i]

    load = cuda.jit(device=True)(_load)
    width = 1 if inplace else 2  # dst elements per block, in tiles
    write_back = _write_back(ipt, inplace)

    if inplace:

        @cuda.jit(device=True)
        def call(held, out, held_ranks, held_flags):
            exchange(held, held, held_ranks, held_flags)

    else:

        @cuda.jit(device=True)
        def call(held, out, held_ranks, held_flags):
            exchange(held, out, held_ranks, held_flags)

    def kernel(items, ranks, flags, dst):
        b, me = np.int64(cuda.blockIdx.x), np.int64(rank())
        tile = np.int64(threads()) * ipt
        held = cuda.local.array(ipt, nbtype)
        held_ranks = cuda.local.array(ipt, types.int32)
        held_flags = cuda.local.array(ipt, types.int32)
        out = cuda.local.array(ipt, nbtype)
        load(items, ranks, flags, b * tile + me * ipt, held, held_ranks, held_flags)
        call(held, out, held_ranks, held_flags)
        write_back(dst, width * b * tile + me * ipt, tile, held, out)

    vector, i32s, _ = _arrays(nbtype)
    return _named(kernel, symbol, (vector, i32s, i32s, vector), link)


@functools.cache
def _shuffle_contract_kernel(dtype: str, ipt: int, method: str, output: str) -> ContractKernel:
    symbol = kernel_symbol(KernelSpec("block.shuffle", dtype, (1,), ipt, method, variant=(("output", output),)))
    return shuffle_kernel(build_shuffle(dtype, ipt, method), dtype, ipt, method, output == "inplace", symbol)


def shuffle_kernel(shuffle: Callable[..., Any], dtype: str, ipt: int, method: str, inplace: bool, symbol: str,
                   link: Sequence[str] = ()) -> ContractKernel:
    """The Shuffle contract kernel around any device function with :func:`coopcheck_numba.block_shuffle`'s
    signature, in place or into a second array that starts as its ``prior`` values (then also writing the input
    items after the call), named ``symbol``, linked with the files ``link`` names."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))
    tiles = 1 if inplace else 2  # dst elements per block before the block items, in tiles
    with_item = method in BLOCK_ITEM
    write_back = _write_back(ipt, inplace)

    if inplace:

        @cuda.jit(device=True)
        def call(held, out, prior, first, distance, item):
            shuffle(held, held, distance, item)

    else:

        @cuda.jit(device=True)
        def call(held, out, prior, first, distance, item):
            for i in range(ipt):
                out[i] = prior[first + i]
            shuffle(held, out, distance, item)

    def kernel(items, prior, distance, dst):
        b, me = np.int64(cuda.blockIdx.x), np.int64(rank())
        n_threads = np.int64(threads())
        tile = n_threads * ipt
        width = tiles * tile + (n_threads if with_item else 0)
        held = cuda.local.array(ipt, nbtype)
        out = cuda.local.array(ipt, nbtype)
        item = cuda.local.array(1, nbtype)
        for i in range(ipt):
            held[i] = items[b * tile + me * ipt + i]
        first_prior = b * (tile + n_threads)
        item[0] = prior[first_prior + tile + me]
        call(held, out, prior, first_prior + me * ipt, distance[b], item)
        write_back(dst, b * width + me * ipt, tile, held, out)
        if with_item:
            dst[b * width + width - n_threads + me] = item[0]

    vector, i32s, _ = _arrays(nbtype)
    return _named(kernel, symbol, (vector, vector, i32s, vector), link)


@functools.cache
def _reduce_contract_kernel(dtype: str, ipt: int, algorithm: str, op: str) -> ContractKernel:
    symbol = kernel_symbol(KernelSpec("block.reduce", dtype, (1,), ipt, algorithm, variant=(("op", op),)))
    return reduce_kernel(build_reduce(dtype, ipt, algorithm, op), dtype, ipt, symbol)


def reduce_kernel(reduce: Callable[..., Any], dtype: str, ipt: int, symbol: str,
                  link: Sequence[str] = ()) -> ContractKernel:
    """The Reduce contract kernel around any device function with :func:`coopcheck_numba.block_reduce`'s
    signature: every thread writes its return value and its seen flag; named ``symbol``, linked with the files
    ``link`` names."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))

    def kernel(items, valid, sentinel, dst):
        b, me = np.int64(cuda.blockIdx.x), np.int64(rank())
        n_threads = np.int64(threads())
        held = cuda.local.array(ipt, nbtype)
        for i in range(ipt):
            held[i] = items[(b * n_threads + me) * ipt + i]
        state = cuda.local.array(2, nbtype)  # [the block's sentinel, the seen flag]
        state[0] = sentinel[b]
        state[1] = 0
        result = reduce(held, valid[b], state)
        dst[2 * b * n_threads + me] = result
        dst[2 * b * n_threads + n_threads + me] = state[1]

    vector, i32s, _ = _arrays(nbtype)
    return _named(kernel, symbol, (vector, i32s, vector, vector), link)


@functools.cache
def _scan_contract_kernel(dtype: str, ipt: int, algorithm: str, op: str, mode: str, seed: str) -> ContractKernel:
    spec = KernelSpec("block.scan", dtype, (1,), ipt, algorithm, variant=(("op", op), ("mode", mode), ("seed", seed)))
    return scan_kernel(build_scan(dtype, ipt, algorithm, op, mode, seed), dtype, ipt, scan.tiles(spec),
                       seed == "prefix", kernel_symbol(spec))


def scan_kernel(device_scan: Callable[..., Any], dtype: str, ipt: int, n_tiles: int, callback: bool, symbol: str,
                link: Sequence[str] = ()) -> ContractKernel:
    """The Scan contract kernel around any device function with :func:`coopcheck_numba.block_scan`'s signature: a
    block scans ``n_tiles`` tiles in turn, each thread's state (its seed, or with a ``callback`` its running
    prefix) carried across them; named ``symbol``, linked with the files ``link`` names."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))

    def kernel(items, initial, dst):
        # 32-bit index arithmetic (a launch's dst stays far below 2**31 elements): with 64-bit indices an 8-byte
        # kernel of 16 items a thread took more than the 64 registers a thread of a 1024-thread block has
        b, me = np.int32(cuda.blockIdx.x), np.int32(rank())
        n_threads = np.int32(threads())
        tile = n_threads * np.int32(ipt)
        width = np.int32(n_tiles) * (tile + n_threads) + n_threads
        state = cuda.local.array(2, nbtype)  # [the seed or running prefix, the callback's last argument]
        calls = cuda.local.array(1, types.int32)
        state[0] = initial[b]
        state[1] = 0
        calls[0] = 0
        for k in range(np.int32(n_tiles)):
            first = (b * np.int32(n_tiles) + k) * tile + me * np.int32(ipt)
            out = b * width + k * tile + me * np.int32(ipt)
            # the thread's items in and out straight through global memory: the scan reads them before and after its
            # block-wide step, and 16 of them held in registers across it took more than the 64 a thread that a
            # 1024-thread block has
            aggregate = device_scan(items[first:first + ipt], dst[out:out + ipt], state, calls)
            dst[b * width + n_tiles * tile + k * n_threads + me] = state[1] if callback else aggregate
        dst[b * width + n_tiles * (tile + n_threads) + me] = nbtype(np.float32(calls[0]))

    vector, _, _ = _arrays(nbtype)
    return _named(kernel, symbol, (vector, vector, vector), link)


@functools.cache
def _warp_reduce_contract_kernel(dtype: str, width: int, op: str, mode: str) -> ContractKernel:
    spec = KernelSpec("warp.reduce", dtype, (1,), 1, "any", variant=(("width", str(width)), ("op", op), ("mode", mode)))
    return warp_reduce_kernel(build_warp_reduce(dtype, width, op, mode), dtype, kernel_symbol(spec))


def warp_reduce_kernel(device_reduce: Callable[..., Any], dtype: str, symbol: str,
                       link: Sequence[str] = ()) -> ContractKernel:
    """The Warp Reduce contract kernel around any device function with :func:`coopcheck_numba.warp_reduce`'s
    signature: every thread writes its return value and its seen flag; named ``symbol``, linked with the files
    ``link`` names."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))

    def kernel(items, flags, valid, sentinel, dst):
        b, me = np.int32(cuda.blockIdx.x), np.int32(rank())
        n_threads = np.int32(threads())
        state = cuda.local.array(2, nbtype)  # [the block's sentinel, the seen flag]
        state[0] = sentinel[b]
        state[1] = 0
        result = device_reduce(items[b * n_threads + me], flags[b * n_threads + me], valid[b], state)
        dst[2 * b * n_threads + me] = result
        dst[2 * b * n_threads + n_threads + me] = state[1]

    vector, i32s, _ = _arrays(nbtype)
    return _named(kernel, symbol, (vector, types.Array(types.uint8, 1, "C"), i32s, vector, vector), link)


@functools.cache
def _warp_scan_contract_kernel(dtype: str, width: int, op: str, mode: str, seed: str,
                               aggregate: bool) -> ContractKernel:
    spec = KernelSpec("warp.scan", dtype, (1,), 1, "any", variant=(
        ("width", str(width)), ("op", op), ("mode", mode), ("seed", seed), ("aggregate", "on" if aggregate else "off")))
    return warp_scan_kernel(build_warp_scan(dtype, width, op, mode, seed), dtype, aggregate, kernel_symbol(spec))


def warp_scan_kernel(device_scan: Callable[..., Any], dtype: str, aggregate: bool, symbol: str,
                     link: Sequence[str] = ()) -> ContractKernel:
    """The Warp Scan contract kernel around any device function with :func:`coopcheck_numba.warp_scan`'s
    signature: every thread writes its scanned item and (``aggregate``) its logical warp's aggregate; named
    ``symbol``, linked with the files ``link`` names."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))
    parts = np.int32(2 if aggregate else 1)

    def kernel(items, initial, dst):
        b, me = np.int32(cuda.blockIdx.x), np.int32(rank())
        n_threads = np.int32(threads())
        scanned, total = device_scan(items[b * n_threads + me], initial[b])
        dst[parts * b * n_threads + me] = scanned
        if aggregate:
            dst[parts * b * n_threads + n_threads + me] = total

    vector, _, _ = _arrays(nbtype)
    return _named(kernel, symbol, (vector, vector, vector), link)


@functools.cache
def _write_back(ipt: int, inplace: bool) -> Callable[..., Any]:
    """The device function ``write_back(dst, first, tile, held, out)`` of a kernel whose call works in place
    (``held``) or into a second array (``out``, then also writing the input items ``held`` a tile later)."""
    if inplace:

        @cuda.jit(device=True)
        def write_back(dst, first, tile, held, out):
            for i in range(ipt):
                dst[first + i] = held[i]

        return write_back

    @cuda.jit(device=True)
    def write_back_separate(dst, first, tile, held, out):
        for i in range(ipt):
            dst[first + i] = out[i]
            dst[first + tile + i] = held[i]  # the input items, as the call left them

    return write_back_separate


def _arrays(nbtype: Any) -> tuple[Any, Any, Any]:
    return (types.Array(nbtype, 1, "C"), types.Array(types.int32, 1, "C"),
            types.Array(types.int64, 1, "C"))


def _named(function: Any, symbol: str, signature: tuple[Any, ...], link: Sequence[str]) -> ContractKernel:
    # numba mangles the function's qualified name into the entry symbol.
    function.__name__ = function.__qualname__ = symbol
    options = {"link": list(link)} if link else {}  # numba's simulator refuses any link argument, even []
    return ContractKernel(symbol, cuda.jit(function, **options), signature)


def launch(kernel: ContractKernel, spec: KernelSpec,
           batch: LoadBatch | StoreBatch | ExchangeBatch | ShuffleBatch | ReduceBatch | ScanBatch | WarpReduceBatch
           | WarpScanBatch, shared: int) -> Any:
    """One batched launch of a contract kernel (see ``coopcheck.adapter``) with ``shared`` bytes of dynamic
    shared memory; returns the host copy of ``dst``."""
    with _simulator_switching() if SIMULATED else nullcontext():
        return _launch(kernel, spec, batch, shared)


@contextmanager
def _simulator_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(SIMULATOR_SWITCH_SECONDS)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _launch(kernel: ContractKernel, spec: KernelSpec,
            batch: LoadBatch | StoreBatch | ExchangeBatch | ShuffleBatch | ReduceBatch | ScanBatch | WarpReduceBatch
            | WarpScanBatch, shared: int) -> Any:
    dtype = np.dtype(spec.dtype)
    if shared > DEFAULT_DYNAMIC_SHARED_LIMIT and not SIMULATED:
        _allow_dynamic_shared(kernel, shared)
    launcher = configured(kernel.dispatcher, batch.n_blocks, spec.block, shared)
    if isinstance(batch, ExchangeBatch):
        dst = cuda.device_array(batch.n_blocks * out_length(spec), dtype=dtype)
        launcher(_device(batch.items, dtype), _device(batch.ranks, np.int32), _device(batch.flags, np.int32), dst)
        return dst.copy_to_host()
    if isinstance(batch, ShuffleBatch):
        dst = cuda.device_array(batch.n_blocks * shuffle_out_length(spec), dtype=dtype)
        launcher(_device(batch.items, dtype), _device(batch.prior, dtype), _device(batch.distance, np.int32), dst)
        return dst.copy_to_host()
    if isinstance(batch, ScanBatch):
        dst = cuda.device_array(batch.n_blocks * scan.out_length(spec), dtype=dtype)
        launcher(_device(batch.items, dtype), _device(batch.initial, dtype), dst)
        return dst.copy_to_host()
    if isinstance(batch, WarpScanBatch):
        dst = cuda.device_array(batch.n_blocks * warp_scan.out_length(spec), dtype=dtype)
        launcher(_device(batch.items, dtype), _device(batch.initial, dtype), dst)
        return dst.copy_to_host()
    if isinstance(batch, WarpReduceBatch):
        dst = cuda.device_array(batch.n_blocks * warp_reduce.out_length(spec), dtype=dtype)
        launcher(_device(batch.items, dtype), _device(batch.flags, np.uint8), _device(batch.valid, np.int32),
                 _device(batch.sentinel, dtype), dst)
        return dst.copy_to_host()
    if isinstance(batch, ReduceBatch):
        dst = cuda.device_array(batch.n_blocks * 2 * spec.threads, dtype=dtype)
        launcher(_device(batch.items, dtype), _device(batch.valid, np.int32), _device(batch.sentinel, dtype), dst)
        return dst.copy_to_host()
    valid = cuda.to_device(np.ascontiguousarray(batch.valid, dtype=np.int32))
    offset = cuda.to_device(np.ascontiguousarray(batch.offset, dtype=np.int64))
    region = np.int64(batch.region)
    if isinstance(batch, LoadBatch):
        dst = cuda.device_array(batch.n_blocks * spec.tile, dtype=dtype)
        launcher(
            _device(batch.src, dtype), _device(batch.init, dtype), dst, valid, offset,
            _device(batch.has_oob, np.int32), _device(batch.oob, dtype), region,
        )
    else:
        dst = _device(batch.dst, dtype)
        launcher(_device(batch.items, dtype), dst, valid, offset, region)
    return dst.copy_to_host()


def _device(array: Any, dtype: np.dtype[Any] | type) -> Any:
    return cuda.to_device(np.ascontiguousarray(array, dtype=dtype))


def _allow_dynamic_shared(kernel: ContractKernel, nbytes: int) -> None:
    """Opt the compiled kernel into ``nbytes`` of dynamic shared memory (needed past 48 KiB)."""
    from numba.cuda.cudadrv.driver import binding, driver

    # The compiled kernel for the current GPU (numba's cache: compiled already unless the build
    # was for another arch); numba exposes no setter for this attribute.
    function = kernel.dispatcher.compile(kernel.signature)._codelibrary.get_cufunc()
    attribute = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    driver.cuKernelSetAttribute(attribute, nbytes, function.handle, function.device.id)
