"""The Reduce operators of :mod:`coopcheck.reduce` as the binary operators cuda.coop's ``make_reduce`` takes.

cuda.coop compiles a Python operator with numba into LTO-IR that the CUB wrapper calls (``Op`` of
``BlockReduce::Reduce``), one function per (operator, dtype). ``sum`` needs none: ``make_sum`` is CUB's
``Sum``. ``first`` records an operand equal to the block's sentinel, so it is a ``StatefulFunction``: CUB hands
each call a pointer to the calling thread's own state, the kernel's local ``[sentinel, seen]`` pair (the
operator sets ``seen`` to 1), and the primitive takes that array as an argument of its call.

These are the contract's operators, not CUB's: floats' min and max are ``fmin`` / ``fmax`` (a NaN operand is
ignored unless both are), as the contract and ``cuda::minimum`` / ``cuda::maximum`` say, and every selecting
operator returns one of its operands bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from coopcheck.reduce import RECORDING


def operator(op: str, dtype: np.dtype[Any]) -> Any:
    """What ``make_reduce`` takes as ``binary_op`` for ``op`` on ``dtype`` items (``sum`` has none: make_sum)."""
    from cuda.coop._experimental import StatefulFunction
    from numba.cuda.np import numpy_support

    if op == "sum":
        raise ValueError("sum is make_sum's, which takes no operator")
    if op == RECORDING:
        return StatefulFunction(_first_recording(), numpy_support.from_dtype(dtype))
    return _extreme(op == "min", dtype.kind == "f") if op in ("min", "max") else _matmul(dtype)


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
