"""cuda.coop's block Load/Store, Exchange, Reduce and Scan primitives and its warp Reduce and Scan ones, made through
its factories (with the LTO-IR cache and NVRTC's precompiled headers).

``make_load`` / ``make_store`` / ``make_exchange`` / ``make_reduce`` / ``make_sum`` / ``make_inclusive_sum`` /
``make_exclusive_sum`` / ``make_inclusive_scan`` / ``make_exclusive_scan`` of ``cuda.coop._experimental.block``
compile a CUB ``BlockLoad`` / ``BlockStore`` / ``BlockExchange`` / ``BlockReduce`` / ``BlockScan`` specialization
(dtype, block shape, items per thread, algorithm, warp time-slicing, operator, mode, prefix callback) to LTO-IR for
the current device and return a primitive callable in numba kernels that link its ``files``.
1.1.1 binds only the full-tile Load/Store overloads (``Load(ptr, items)``, ``Store(ptr, items)``): no
valid_items, no oob_default, so the adapter declines every case that needs them; its exchange binds
StripedToBlocked, in place (``(items)``) and into a second array (``(items, out)``); its reduce binds
``Reduce(item, op)``, ``Reduce(item, op, num_valid)`` and ``Reduce(items[IPT], op)`` (and ``Sum`` alike):
num_valid with one item a thread only; its scans bind no block_aggregate output, so the Scan primitive is made for
the ABI's seed ``prefix`` only, with the callback of :func:`coopcheck_cccl.operators.prefix_callback`
(``Scan(item, op, callback)`` / ``Scan(items, items, op, callback)``, ``Sum`` without the op). The contract kernels
(:mod:`coopcheck_cccl.kernels`) pass the TempStorage explicitly, as dynamic shared memory from byte 0
(``temp_storage_bytes`` of it at launch, aligned for any TempStorage of these types): the primitive's
other form declares static shared memory, which stops at 48 KiB, and ends in a ``__syncthreads()`` the
contract kernels do not need. The warp factories ``warp.make_reduce`` / ``make_sum`` (``Reduce(input, op)`` /
``Sum(input)``, lane 0's result) and ``warp.make_exclusive_sum`` (``ExclusiveSum(input, output)``) take the logical
warp's width as ``threads_in_warp`` and bind only the form with an explicit TempStorage below 32 lanes
(``_types.py``: "sub hw warps require computing masks for syncwarp, which is not supported"), which the kernels
always pass, one a logical warp.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from coopcheck import KernelSpec, warp_reduce, warp_scan
from cuda.coop._experimental import _nvrtc, block, warp
from numba.cuda.np import numpy_support

from coopcheck_cccl import ALGORITHMS, EXCHANGE_METHODS, binds_warp_scan, cache, operators, pch
from coopcheck_cccl.kernels import TEMP_STORAGE_ALIGNMENT
from coopcheck_cccl.toolchain import versions


def threads_per_block(block_shape: tuple[int, ...]) -> int | tuple[int, ...]:
    """cuda.coop's ``threads_per_block``: an int for a 1-D block (it refuses a 1-tuple), else the tuple.

    >>> threads_per_block((128,)), threads_per_block((16, 8))
    (128, (16, 8))
    """
    return block_shape[0] if len(block_shape) == 1 else block_shape


def make(spec: KernelSpec, lto_cache: cache.LtoCache | None) -> Any:
    """The cuda.coop primitive for ``spec`` (needs a current CUDA device), its NVRTC compile served from
    ``lto_cache`` when it holds it; one whose TempStorage needs more than :data:`TEMP_STORAGE_ALIGNMENT` is
    refused. The dtype goes as a NumPy dtype: cuda.coop resolves a name on the numba module, which has no
    ``float16``."""
    dtype, threads = np.dtype(spec.dtype), threads_per_block(spec.block)
    with cache.serving(lto_cache, _nvrtc, versions()["cuda-cccl"]), pch.precompiled_headers(_nvrtc):
        if spec.operation == "block.exchange":
            primitive = block.make_exchange(block.BlockExchangeType[EXCHANGE_METHODS[spec.algorithm]], dtype, threads,
                                            spec.items_per_thread, warp_time_slicing=spec.static("slicing") == "on")
        elif spec.operation == "block.reduce" and spec.static("op") == "sum":
            primitive = block.make_sum(dtype, threads, spec.items_per_thread, spec.algorithm)
        elif spec.operation == "block.reduce":
            primitive = block.make_reduce(dtype, threads, operators.operator(spec.static("op"), dtype),
                                          spec.items_per_thread, spec.algorithm)
        elif spec.operation == "block.scan":
            primitive = _make_scan(spec, dtype, threads)
        elif spec.operation in warp_reduce.OPERATIONS | warp_scan.OPERATIONS:
            primitive = _make_warp(spec, dtype)
        else:
            factory = block.make_load if spec.operation == "block.load" else block.make_store
            primitive = factory(dtype, threads, spec.items_per_thread, ALGORITHMS[spec.algorithm])
    if primitive.temp_storage_alignment > TEMP_STORAGE_ALIGNMENT:
        raise RuntimeError(f"TempStorage needs {primitive.temp_storage_alignment}-byte alignment; the contract "
                           f"kernels align dynamic shared memory to {TEMP_STORAGE_ALIGNMENT}")
    return primitive


def _make_scan(spec: KernelSpec, dtype: np.dtype[Any], threads: int | tuple[int, ...]) -> Any:
    """The seed-prefix scan of ``spec``: CUB's sums for ``sum`` (they take no operator), its scans with the
    contract's operator for the others; the callback folds with the same operator."""
    op, inclusive = spec.static("op"), spec.static("mode") == "inclusive"
    if spec.static("seed") != "prefix":
        raise ValueError(f"seed {spec.static('seed')!r}: the Scan primitive is made for seed 'prefix' only (cuda.coop "
                         "binds no block_aggregate output)")
    callback = operators.prefix_callback(op, dtype)
    if op == "sum":
        sums = block.make_inclusive_sum if inclusive else block.make_exclusive_sum
        return sums(dtype, threads, spec.items_per_thread, prefix_op=callback, algorithm=spec.algorithm)
    scans = block.make_inclusive_scan if inclusive else block.make_exclusive_scan
    return scans(dtype, threads, operators.operator(op, dtype), spec.items_per_thread, prefix_op=callback,
                 algorithm=spec.algorithm)


def _make_warp(spec: KernelSpec, dtype: np.dtype[Any]) -> Any:
    """The warp primitive of ``spec``: Reduce's full-warp ``Sum`` for ``sum``, its ``Reduce`` with the contract's
    operator for the others; Scan's ``ExclusiveSum``, the one warp scan cuda.coop binds. The warp factories take the
    dtype as a numba type (unlike the block ones they do not normalize a NumPy dtype)."""
    item, lanes, op = numpy_support.from_dtype(dtype), warp_reduce.width(spec), spec.static("op")
    if spec.operation in warp_scan.OPERATIONS:
        if not binds_warp_scan(spec):
            raise ValueError(f"{spec.variant}: cuda.coop binds the warp exclusive sum without seed or aggregate only")
        return warp.make_exclusive_sum(item, threads_in_warp=lanes)
    if spec.static("mode") != "reduce":
        raise ValueError(f"mode {spec.static('mode')!r}: cuda.coop binds no segmented warp reduction")
    if op == "sum":
        return warp.make_sum(item, threads_in_warp=lanes)
    return warp.make_reduce(item, operators.operator(op, dtype), threads_in_warp=lanes)
