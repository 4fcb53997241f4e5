"""The operators of the reducing families (Reduce, Scan): their data patterns, identities and extremes, and the
packed matrix product, shared by those families' oracles.

A pattern is chosen so that a known wrong implementation changes a result: full-range integers (sums wrap), values
of one sign (a wrong identity shows), -0.0 as the extreme and NaNs among the items (min and max of floats), sparse
non-zeros (first; matmul: sparse non-identities), invertible matrices (matmul: no running product collapses to the
zero matrix, after which operands taken in the wrong order would not show), finite floats (a sum judged within a
rounding bound derived from its inputs) and integral floats whose every partial sum is exact (a sum judged
bit-exactly). Every value is a function of a block's key and the element's index only (:func:`random_bits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import coopcheck
import numpy as np

from harness.cases import Case
from harness.oracles.launch import Launch, block_order
from harness.oracles.values import mix

#: Salts of the streams of random bits a launch draws per block (items, their shape, the invalid slots' fill, the
#: sentinel, a scan's initial value, a warp's segment flags, the lowest bits of an invalid slot's matrix): streams of
#: one block never coincide.
SALT = {"items": 0x11, "invalid": 0x22, "sentinel": 0x33, "shape": 0x44, "initial": 0x55, "flags": 0x66,
        "choice": 0x77}
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def is_float(spec: coopcheck.KernelSpec) -> bool:
    return np.dtype(spec.dtype).kind == "f"


def pattern_names(spec: coopcheck.KernelSpec) -> tuple[str, ...]:
    """The patterns a case of ``spec``'s operator and dtype runs (see the module docstring).

    >>> pattern_names(coopcheck.KernelSpec("block.reduce", "float32", (32,), 1, "raking", variant=(("op", "sum"),)))
    ('uniform', 'exact')
    """
    op = spec.static("op")
    if op == "sum":
        return ("uniform", "exact") if is_float(spec) else ("random", "small")
    if op in ("min", "max"):
        return ("finite", "zeros", "nan") if is_float(spec) else ("random", "positive", "negative")
    return ("invertible", "sparse")


@dataclass(frozen=True)
class PatternBlocks:
    """A launch's blocks, one per (case, pattern) in the launch's order, each with its key and items drawn."""

    seed: int  # the block-order seed
    case_of_block: np.ndarray
    pattern_of_block: np.ndarray
    names: tuple[str, ...]
    keys: np.ndarray  # uint64 a block: what every value of the block is drawn from
    items: np.ndarray  # (blocks, length): each block's items in its pattern

    def launch(self, spec: coopcheck.KernelSpec, cases: Sequence[Case], batch: Any) -> Launch:
        return Launch(spec, tuple(cases), batch, self.case_of_block, self.pattern_of_block, self.names, self.seed)


def pattern_blocks(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int, length: int
                   ) -> PatternBlocks:
    """One block per case and pattern of ``spec`` (:func:`pattern_names`), in a shuffled order, with ``length``
    items each: every value is drawn from its case's seed and pattern, never from the launch."""
    names = pattern_names(spec)
    seed, order = block_order(global_seed, cases, len(names))
    case_of_block, pattern_of_block = order // len(names), order % len(names)
    seeds = np.array([c.seed(global_seed) for c in cases], dtype=np.uint64)[case_of_block]
    with np.errstate(over="ignore"):
        keys = mix(seeds * np.uint64(8) + pattern_of_block.astype(np.uint64))
    items = np.empty((len(order), length), dtype=np.dtype(spec.dtype))
    r, r2 = random_bits(keys, length, "items"), random_bits(keys, length, "shape")
    for p, name in enumerate(names):
        rows = pattern_of_block == p
        items[rows] = pattern_values(spec, name, r[rows], r2[rows])
    return PatternBlocks(seed, case_of_block, pattern_of_block, names, keys, items)


def random_bits(keys: np.ndarray, n: int, salt: str) -> np.ndarray:
    """uint64 random bits per (block, element): a function of the block's key and the element index only."""
    code = np.arange(n, dtype=np.uint64) * GOLDEN ^ np.uint64(SALT[salt] << 56)
    with np.errstate(over="ignore"):
        return mix(keys[:, None] ^ code[None, :])


def of_bits(dtype: np.dtype[Any], bits64: np.ndarray) -> np.ndarray:
    """The top bits of uint64 values as ``dtype`` values (full range: every bit pattern)."""
    width = dtype.itemsize * 8
    return (bits64 >> np.uint64(64 - width)).astype(f"uint{width}").view(dtype)


#: The six invertible 2x2 matrices over GF(2), entry j at bit j: a matrix modulo 2**k is invertible iff its
#: determinant is odd, iff its entries' lowest bits are one of these.
UNITS_MOD_2 = (0b1001, 0b0110, 0b1011, 0b1101, 0b0111, 0b1110)


def invertible(dtype: np.dtype[Any], bits64: np.ndarray, choice: np.ndarray) -> np.ndarray:
    """Packed 2x2 matrices invertible modulo 2**k (k = bits/4): the entries' lowest bits one of :data:`UNITS_MOD_2`
    (picked by ``choice``), every other bit the top bits of ``bits64``. Uniform over the invertible matrices: a
    product of them is invertible too (never the zero matrix), and they are far from commuting (GL(2, Z/2**k) is
    not abelian; already GL(2, 2) is the symmetric group on three things).

    >>> [int(v) for v in invertible(np.dtype("uint8"), np.zeros(2, np.uint64), np.arange(2, dtype=np.uint64))]
    [65, 20]
    """
    width = dtype.itemsize * 8
    k = width // 4
    spread = np.array([sum(((m >> j) & 1) << (j * k) for j in range(4)) for m in UNITS_MOD_2], dtype=np.uint64)
    lowest = np.uint64(sum(1 << (j * k) for j in range(4)))
    raw = (bits64 >> np.uint64(64 - width)) & ~lowest | spread[(choice % np.uint64(len(spread))).astype(np.int64)]
    return raw.astype(f"uint{width}").view(dtype)


def finite(dtype: np.dtype[Any], bits64: np.ndarray, spread: int) -> np.ndarray:
    """Finite floats in (-1, 1) times 2**-e, e in [0, spread): no overflow in any sum of a tile."""
    unit = (bits64 >> np.uint64(11)).astype(np.float64) / 2.0**53 * 2 - 1
    return (np.ldexp(unit, -(bits64 % np.uint64(spread)).astype(np.int64))).astype(dtype)


def pattern_values(spec: coopcheck.KernelSpec, name: str, r: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """The items of pattern ``name`` (before the invalid slots are filled), from random bits ``r`` and ``r2``."""
    dtype, op = np.dtype(spec.dtype), spec.static("op")
    width = dtype.itemsize * 8
    if name in ("random", "nan"):
        return of_bits(dtype, r)
    if name == "small":  # sums that do not wrap: -2..2 (unsigned 0..4)
        return ((r % np.uint64(5)).astype(np.int64) - (0 if dtype.kind == "u" else 2)).astype(dtype)
    if name in ("positive", "negative"):  # the top bit clear (set), and not zero
        raw = (r >> np.uint64(64 - width)) & np.uint64((1 << (width - 1)) - 1) | np.uint64(1)
        if name == "negative":
            raw |= np.uint64(1 << (width - 1))
        return raw.astype(f"uint{width}").view(dtype)
    if name in ("finite", "uniform"):
        return finite(dtype, r, 16 if name == "finite" else 4)
    if name == "zeros":  # -0.0 at every fourth slot, the others of one sign: the extreme is -0.0
        magnitude = np.abs(finite(dtype, r, 16)) + dtype.type(2.0**-8)
        values = magnitude if op == "min" else -magnitude
        zeros: np.ndarray = np.where(np.arange(values.shape[1]) % 4 == 3, dtype.type(-0.0), values)
        return zeros
    if name == "exact":  # integers whose sum of magnitudes is at most 2**digits: every partial sum is exact
        digits = np.finfo(dtype).nmant + 1
        m = max(1, (1 << digits) // spec.tile)
        values = ((r % np.uint64(2 * m + 1)).astype(np.int64) - m).astype(dtype)
        return np.where(np.arange(values.shape[1]) < (1 << digits), values, dtype.type(0))
    if name == "invertible":
        return invertible(dtype, r, r2)
    if name == "sparse":  # first: zeros but one slot in eight; matmul: identities but one invertible in eight
        some = r2 % np.uint64(8) == 0
        if op == "matmul":
            return np.where(some, invertible(dtype, r, r2 >> np.uint64(3)), identity(spec))
        return np.where(some, of_bits(dtype, r), dtype.type(0))
    raise ValueError(f"unknown pattern {name!r}")


def identity(spec: coopcheck.KernelSpec) -> np.generic:
    """matmul's identity matrix, packed: entries e0 and e3 are 1."""
    dtype = np.dtype(spec.dtype)
    k = dtype.itemsize * 2
    return np.array([1 | (1 << (3 * k))], dtype=f"uint{dtype.itemsize * 8}").view(dtype)[0]  # type: ignore[no-any-return]


def extreme(spec: coopcheck.KernelSpec, low: bool) -> np.generic:
    dtype = np.dtype(spec.dtype)
    if dtype.kind == "f":
        return dtype.type(-np.inf if low else np.inf)  # type: ignore[no-any-return]
    info = np.iinfo(dtype)
    return dtype.type(info.min if low else info.max)  # type: ignore[no-any-return]


def _unpack(raw: np.ndarray, k: int) -> list[np.ndarray]:
    mask = np.uint64((1 << k) - 1)
    return [(raw >> np.uint64(j * k)) & mask for j in range(4)]


def matmul(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """``a @ b`` of 2x2 matrices of ``k``-bit entries packed in uint64 values (entry 0 the lowest), mod 2**k.

    >>> int(matmul(np.array([1 | 1 << 2 | 1 << 6], np.uint64), np.array([1 | 1 << 4 | 1 << 6], np.uint64), 2)[0])
    86
    """
    x, y, mask = _unpack(a, k), _unpack(b, k), np.uint64((1 << k) - 1)
    entries = (x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2],
               x[2] * y[1] + x[3] * y[3])
    out = np.zeros_like(a)
    for j, e in enumerate(entries):
        out |= (e & mask) << np.uint64(j * k)
    return out
