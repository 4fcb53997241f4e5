"""The contract's operators as cuda.coop takes them: ``make_reduce``'s ``binary_op``, ``make_scan``'s ``scan_op`` and
the Scan ABI's block prefix callback.

cuda.coop compiles a Python operator with numba into LTO-IR that the CUB wrapper calls (``Op`` of
``BlockReduce::Reduce``, ``ScanOp`` of ``BlockScan``), one function per (operator, dtype). ``sum`` needs none:
``make_sum`` is CUB's ``Sum``, ``make_inclusive_sum`` / ``make_exclusive_sum`` its ``InclusiveSum`` /
``ExclusiveSum``. ``first`` records an operand equal to the block's sentinel, and the prefix callback carries a
running prefix, so both are ``StatefulFunction``s: CUB hands each call a pointer to the calling thread's own state
(a local array of the kernel's), and the primitive takes that array as an argument of its call.

These are the contract's operators, not CUB's: floats' min and max are ``fmin`` / ``fmax`` (a NaN operand is
ignored unless both are), as the contract and ``cuda::minimum`` / ``cuda::maximum`` say, and every selecting
operator returns one of its operands bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from coopcheck.reduce import RECORDING

#: The Scan prefix callback's state, a local array of the item dtype a thread: slots by meaning.
RUNNING, ARGUMENT, CALLS = range(3)


def operator(op: str, dtype: np.dtype[Any]) -> Any:
    """What ``make_reduce`` takes as ``binary_op`` and ``make_scan`` as ``scan_op`` for ``op`` on ``dtype`` items
    (``sum`` has none: make_sum, make_inclusive_sum and make_exclusive_sum are CUB's sums)."""
    from cuda.coop._experimental import StatefulFunction
    from numba.cuda.np import numpy_support

    if op == "sum":
        raise ValueError("sum is make_sum's and make_*_sum's, which take no operator")
    if op == RECORDING:
        return StatefulFunction(_first_recording(), numpy_support.from_dtype(dtype))
    return binary(op, dtype)


def binary(op: str, dtype: np.dtype[Any]) -> Callable[[Any, Any], Any]:
    """``op`` on two ``dtype`` items as a plain function (numba compiles it as it is): sum (wrapping), min, max,
    matmul."""
    if op == "sum":
        return _plus(dtype)
    if op in ("min", "max"):
        return _extreme(op == "min", dtype.kind == "f")
    if op == "matmul":
        return _matmul(dtype)
    raise ValueError(f"{op!r} is not a binary operator of the contract")


def prefix_callback(op: str, dtype: np.dtype[Any]) -> Any:
    """The Scan ABI's block prefix callback for ``make_scan``'s ``block_prefix_callback_op``: a ``StatefulFunction``
    whose state is the calling thread's ``[running prefix, last argument, calls]`` (:data:`RUNNING`,
    :data:`ARGUMENT`, :data:`CALLS`, all ``dtype`` items). Called with a tile's block aggregate, it returns the
    running prefix, folds the aggregate into it with ``op``, keeps the aggregate and counts the call."""
    from cuda.coop._experimental import StatefulFunction
    from numba import cuda
    from numba.cuda.np import numpy_support

    return StatefulFunction(_running_prefix(cuda.jit(device=True)(binary(op, dtype))),
                            numpy_support.from_dtype(dtype))


def _extreme(lesser: bool, floating: bool) -> Callable[[Any, Any], Any]:
    """min or max; for floats fmin / fmax: a NaN operand is ignored unless both are (then the first is)."""
    def minimum(a, b):
        if floating and b != b:
            return a
        if floating and a != a:
            return b
        return a if a <= b else b

    def maximum(a, b):
        if floating and b != b:
            return a
        if floating and a != a:
            return b
        return a if a >= b else b

    return minimum if lesser else maximum


def _plus(dtype: np.dtype[Any]) -> Callable[[Any, Any], Any]:
    """``a + b`` in ``dtype``: integers wrap in two's complement (numba widens small ones; the cast narrows)."""
    item = dtype.type

    def plus(a, b):
        return item(a + b)

    return plus


def _matmul(dtype: np.dtype[Any]) -> Callable[[Any, Any], Any]:
    """``a @ b`` of the 2x2 matrices packed in the items' bits: entry e (row e // 2, column e % 2) is the e-th
    group of ``bits / 4`` bits from the lowest, products and sums taken modulo ``2**(bits / 4)``."""
    bits = dtype.itemsize * 8
    k, mask, whole = np.uint64(bits // 4), np.uint64((1 << (bits // 4)) - 1), np.uint64((1 << bits) - 1)
    item = dtype.type

    def matmul(a, b):
        x, y = np.uint64(a) & whole, np.uint64(b) & whole
        product = np.uint64(0)
        for row in range(2):
            for col in range(2):
                left = (x >> (k * np.uint64(2 * row))) & mask, (x >> (k * np.uint64(2 * row + 1))) & mask
                right = (y >> (k * np.uint64(col))) & mask, (y >> (k * np.uint64(2 + col))) & mask
                entry = (left[0] * right[0] + left[1] * right[1]) & mask
                product |= entry << (k * np.uint64(2 * row + col))
        return item(product)

    return matmul


def _first_recording() -> type:
    """``first`` (``b if a == 0 else a``: -0.0 is zero, NaN is not) that sets ``state[1]`` when an operand equals
    ``state[0]``, the block's sentinel. cuda.coop compiles the class's ``__call__`` with the state pointer as its
    first argument; each class is a new operator (numba caches a compiled function by its Python object)."""

    class FirstRecording:
        def __call__(state, a, b):  # cuda.coop passes the state pointer where self would be
            if a == state[0] or b == state[0]:
                state[1] = 1
            return b if a == 0 else a

    return FirstRecording


def _running_prefix(fold: Callable[[Any, Any], Any]) -> type:
    """The prefix callback over ``fold`` (a device function): state ``[running prefix, last argument, calls]``.
    A new class each time, as for :func:`_first_recording`."""

    class RunningPrefix:
        def __call__(state, aggregate):  # cuda.coop passes the state pointer where self would be
            prefix = state[RUNNING]
            state[RUNNING] = fold(prefix, aggregate)
            state[ARGUMENT] = aggregate
            state[CALLS] = state[CALLS] + 1
            return prefix

    return RunningPrefix
