"""Value patterns for oracle inputs: three disjoint ranges per dtype, so any stray value shows.

Source items, sentinels (payload slots and untouched outputs) and out-of-bounds defaults never
share a value, and neighbouring slots almost never share one, so an implementation that moves
another slot's value into an invalid slot cannot pass by luck.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Role = Literal["src", "sentinel", "oob"]
_ROLE_INDEX = {"src": 0, "sentinel": 1, "oob": 2}
#: Float ranges (start, count, fraction): integers + fraction are exact in the dtype.
_FLOAT_RANGES = {
    "float16": ((0.0, 1024, 0.0), (-1024.0, 1024, 0.0), (1024.0, 1024, 0.0)),
    "float32": ((0.0, 1 << 21, 0.5), (-(1 << 21), 1 << 21, 0.25), (1 << 22, 1 << 21, 0.75)),
    "float64": ((0.0, 1 << 40, 0.5), (-(1 << 40), 1 << 40, 0.25), (1 << 41, 1 << 40, 0.75)),
}


def pattern(dtype: str, n: int, role: Role, seed: int) -> np.ndarray:
    """``n`` values of ``dtype`` from the role's range, drawn from ``seed``.

    >>> bool(pattern("uint8", 4, "sentinel", 1).min() >= 64)
    True
    """
    rng = np.random.default_rng([seed, _ROLE_INDEX[role]])
    np_dtype = np.dtype(dtype)
    if np_dtype.kind == "f":
        start, count, frac = _FLOAT_RANGES[dtype][_ROLE_INDEX[role]]
        return (start + rng.integers(0, count, n).astype(np.float64) + frac).astype(np_dtype)
    bits = np_dtype.itemsize * 8
    quarter = 1 << (bits - 2)
    lo, span = {"src": (0, quarter), "sentinel": (quarter, quarter), "oob": (2 * quarter, 2 * quarter)}[role]
    raw = (lo + rng.integers(0, span, n, dtype=np.uint64)).astype(np.dtype(f"uint{bits}"))
    return raw.view(np_dtype)


def raw_view(values: np.ndarray) -> np.ndarray:
    """Bits as unsigned ints, so comparisons are bit-exact (no NaN or -0.0 surprises)."""
    return values.view(np.dtype(f"uint{values.dtype.itemsize * 8}"))
