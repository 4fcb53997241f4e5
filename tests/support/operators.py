"""The reducing families' operators on two items, as one thread applies them (each result rounded to the dtype),
for the sequential references of those families' ABIs that their oracles are tested against."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import coopcheck
import numpy as np

from harness.oracles.operands import matmul

Operator = Callable[[Any, Any], Any]


def scalar_operator(spec: coopcheck.KernelSpec) -> Operator:
    """The contract's operator ``spec.static("op")`` on two items: integers wrap, float min and max are fmin and fmax,
    first is the first non-zero operand."""
    op, dtype = spec.static("op"), np.dtype(spec.dtype)
    unsigned = np.dtype(f"uint{dtype.itemsize * 8}")

    def apply(a: Any, b: Any) -> Any:
        a, b = dtype.type(a), dtype.type(b)
        if op == "sum":
            with np.errstate(over="ignore", invalid="ignore"):
                return dtype.type(a + b)
        if op == "first":
            return b if a == 0 else a
        if op == "matmul":
            raw = matmul(np.array([a]).view(unsigned).astype(np.uint64),
                         np.array([b]).view(unsigned).astype(np.uint64), dtype.itemsize * 2)
            return raw.astype(unsigned).view(dtype)[0]
        if dtype.kind == "f" and (np.isnan(a) or np.isnan(b)):  # fmin / fmax
            return b if np.isnan(a) else a
        return (a if a <= b else b) if op == "min" else (a if a >= b else b)

    return apply
