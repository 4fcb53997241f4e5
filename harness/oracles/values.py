"""Value patterns for oracle inputs: three disjoint ranges per dtype, so any stray value shows.

Source items, sentinels (payload slots and untouched outputs) and out-of-bounds defaults never
share a value, and neighbouring slots almost never share one, so an implementation that moves
another slot's value into an invalid slot cannot pass by luck. Float sources also carry -0.0, a
signalling NaN with a payload and a subnormal, so a backend that moves floats through arithmetic
(canonicalizing them) fails the bit-exact rule.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Role = Literal["src", "sentinel", "oob"]
_ROLE_INDEX = {"src": 0, "sentinel": 1, "oob": 2}
#: Float ranges (start, count, fraction): integers + fraction are exact in the dtype.
#: Raw bits of -0.0, a signalling NaN with a payload, and the smallest subnormal, per float dtype.
_FLOAT_SPECIALS = {
    "float16": (0x8000, 0x7D01, 0x0001),
    "float32": (0x80000000, 0x7FA00001, 0x00000001),
    "float64": (0x8000000000000000, 0x7FF4000000000001, 0x0000000000000001),
}
#: Every SPECIAL_STRIDE-th source item (from a seeded phase) is one of the specials.
SPECIAL_STRIDE = 5
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
        values = (start + rng.integers(0, count, n).astype(np.float64) + frac).astype(np_dtype)
        if role == "src":
            raw = raw_view(values)
            specials = np.array(_FLOAT_SPECIALS[dtype], dtype=raw.dtype)
            where = np.arange(int(rng.integers(0, SPECIAL_STRIDE)), n, SPECIAL_STRIDE)
            raw[where] = specials[np.arange(where.size) % specials.size]
        return values
    bits = np_dtype.itemsize * 8
    quarter = 1 << (bits - 2)
    lo, span = {"src": (0, quarter), "sentinel": (quarter, quarter), "oob": (2 * quarter, 2 * quarter)}[role]
    raw = (lo + rng.integers(0, span, n, dtype=np.uint64)).astype(np.dtype(f"uint{bits}"))
    return raw.view(np_dtype)


def raw_view(values: np.ndarray) -> np.ndarray:
    """Bits as unsigned ints, so comparisons are bit-exact (no NaN or -0.0 surprises)."""
    return values.view(np.dtype(f"uint{values.dtype.itemsize * 8}"))
