"""The contract kernels: one Load-only and one Store-only ``@cuda.jit`` kernel per specialization.

They implement the batched ABI of ``coopcheck.adapter`` (one block per case instance) around the
device functions of :mod:`coopcheck_numba.blockio`, and are named ``coopcheck.kernel_symbol(spec)`` so that
the mangled entry name, and so every sanitizer record, names its specialization.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from coopcheck import KernelSpec, kernel_symbol
from numba import cuda
from numba.cuda import types
from numba.cuda.np import numpy_support

from coopcheck_numba.blockio import build_load, build_store, rank, threads


class ContractKernel(NamedTuple):
    """A lazily compiled contract kernel and the one signature it is compiled for."""

    symbol: str
    dispatcher: Any
    signature: tuple[Any, ...]


def contract_kernel(spec: KernelSpec) -> ContractKernel:
    """The contract kernel for ``spec``, one per (operation, dtype, ipt, algorithm) whatever the
    block shape (a launch parameter); compiling it is left to the caller."""
    return _contract_kernel(spec.operation, spec.dtype, spec.items_per_thread, spec.algorithm)


@functools.cache
def _contract_kernel(operation: str, dtype: str, ipt: int, algorithm: str) -> ContractKernel:
    symbol = kernel_symbol(KernelSpec(operation, dtype, (1,), ipt, algorithm))
    if operation == "block.load":
        return load_kernel(build_load(dtype, ipt, algorithm), dtype, ipt, symbol)
    return store_kernel(build_store(dtype, ipt, algorithm), dtype, ipt, symbol)


def load_kernel(load: Callable[..., Any], dtype: str, ipt: int, symbol: str) -> ContractKernel:
    """The Load contract kernel around any device function with :func:`coopcheck_numba.block_load`'s
    signature, named ``symbol``."""
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
    return _named(kernel, symbol, (vector, vector, vector, i32s, i64s, i32s, vector, types.int64))


def store_kernel(store: Callable[..., Any], dtype: str, ipt: int, symbol: str) -> ContractKernel:
    """The Store contract kernel around any device function with :func:`coopcheck_numba.block_store`'s
    signature, named ``symbol``."""
    nbtype = numpy_support.from_dtype(np.dtype(dtype))

    def kernel(items_in, dst, valid, offset, region):
        b = np.int64(cuda.blockIdx.x)
        slot = (b * threads() + rank()) * ipt
        items = cuda.local.array(ipt, nbtype)
        for i in range(ipt):
            items[i] = items_in[slot + i]
        store(dst, items, valid[b], b * region + offset[b])

    vector, i32s, i64s = _arrays(nbtype)
    return _named(kernel, symbol, (vector, vector, i32s, i64s, types.int64))


def _arrays(nbtype: Any) -> tuple[Any, Any, Any]:
    return (types.Array(nbtype, 1, "C"), types.Array(types.int32, 1, "C"),
            types.Array(types.int64, 1, "C"))


def _named(function: Any, symbol: str, signature: tuple[Any, ...]) -> ContractKernel:
    # numba mangles the function's qualified name into the entry symbol.
    function.__name__ = function.__qualname__ = symbol
    return ContractKernel(symbol, cuda.jit(function), signature)
