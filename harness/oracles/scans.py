"""The prefix scan of a reducing operator over rows of tiles, and the judging of scanned outputs against it, shared
by the scanning families (Block Scan's tiles, Warp Scan's logical warps); and the seed values those families draw.

Exact operators scan by doubling (an associative operator applied in index order) and are judged bit for bit; float
sums in float64, judged within a rounding bound derived from the values each output covers (bit for bit where
those make every order exact); float min and max by what they select (the extreme value, bit for bit one of the
values covered; a zero of a sign that is among them). A scan's seed (an initial value, or a prefix callback's
running prefix carried from tile to tile) is left of every prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import coopcheck
import numpy as np

from harness.oracles.judging import Bools
from harness.oracles.operands import (
    extreme,
    identity,
    invertible,
    is_float,
    matmul,
    pattern_values,
    random_bits,
)
from harness.oracles.values import raw_view


def seed_identity(spec: coopcheck.KernelSpec) -> np.generic:
    """The operator's identity: 0, the highest value (min), the lowest (max), the identity matrix."""
    op = spec.static("op")
    if op in ("min", "max"):
        return extreme(spec, low=op == "max")
    return identity(spec) if op == "matmul" else np.dtype(spec.dtype).type(0)


def seed_values(spec: coopcheck.KernelSpec, inits: np.ndarray, keys: np.ndarray, pattern_of_block: np.ndarray,
                names: tuple[str, ...]) -> np.ndarray:
    """A seed value per block: the identity, or (init ``rand``) a value drawn from the block's key like its items
    (matmul's: any invertible matrix, not the pattern's mostly-identities)."""
    dtype = np.dtype(spec.dtype)
    drawn = np.empty(len(keys), dtype=dtype)
    first, first2 = random_bits(keys, 1, "initial"), random_bits(keys, 1, "invalid")
    for p, name in enumerate(names):
        rows = pattern_of_block == p
        drawn[rows] = (invertible(dtype, first[rows], first2[rows]) if spec.static("op") == "matmul"
                       else pattern_values(spec, name, first[rows], first2[rows]))[:, 0]
    return np.where(inits == "rand", drawn, seed_identity(spec)).astype(dtype)


def _exact_op(spec: coopcheck.KernelSpec) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The operator on arrays of items, for every operator judged bit for bit: integer sums (wrapping), min and
    max of integers, matmul. ``a`` holds the earlier operands."""
    op, dtype = spec.static("op"), np.dtype(spec.dtype)
    width = dtype.itemsize * 8
    unsigned = np.dtype(f"uint{width}")
    if op == "sum":
        def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            total = a.view(unsigned).astype(np.uint64) + b.view(unsigned).astype(np.uint64)
            return (total & np.uint64((1 << width) - 1)).astype(unsigned).view(dtype)
        return add
    if op in ("min", "max"):
        return np.minimum if op == "min" else np.maximum

    def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(a, b)  # a seed against a tile
        raw = matmul(a.view(unsigned).astype(np.uint64), b.view(unsigned).astype(np.uint64), width // 4)
        return raw.astype(unsigned).view(dtype)
    return product


def _doubling(values: np.ndarray, op: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Inclusive scan along the last axis, ``op(earlier, later)`` in index order, in log2(n) vectorized steps (the
    operator is associative)."""
    out, step = values.copy(), 1
    while step < out.shape[-1]:
        nxt = out.copy()
        nxt[..., step:] = op(out[..., :-step], out[..., step:])
        out, step = nxt, step * 2
    return out


@dataclass(frozen=True)
class Result:
    """What some outputs must be, with what judging them needs (any shape, one entry per output).

    ``value``: the exact result (float64 for float sums); ``defined``: where the contract says it. Float sums:
    the magnitude ``total`` and ``count`` of the values each covers, and whether all of them are integers. Float
    min and max: whether a -0.0 and a +0.0 are covered, and whether only NaNs are.
    """

    value: np.ndarray
    defined: Bools
    total: np.ndarray | None = None
    count: np.ndarray | None = None
    integral: Bools | None = None
    neg_zero: Bools | None = None
    pos_zero: Bools | None = None
    all_nan: Bools | None = None

    def map(self, fn: Callable[[np.ndarray], np.ndarray]) -> Result:
        """The result with ``fn`` applied to each of its arrays (a selection or a broadcast of its entries)."""
        mapped: dict[str, Any] = {f.name: None if (v := getattr(self, f.name)) is None else fn(v)
                                  for f in fields(self)}
        return Result(**mapped)


def _shifted(a: np.ndarray, first: np.ndarray) -> np.ndarray:
    """An exclusive scan from an inclusive one: every entry moves one index up, ``first`` at index 0."""
    out = np.empty_like(a)
    out[..., 1:], out[..., 0] = a[..., :-1], first
    return out


def _carried(first: np.ndarray, per_tile: np.ndarray, seed: str, fold: Callable[..., np.ndarray],
             carried: bool = True) -> np.ndarray:
    """(n, tiles) what prefixes each tile: ``first`` for every tile, or with the prefix callback (``carried``)
    ``first`` folded with the earlier tiles' ``per_tile``."""
    out = np.repeat(first[:, None], per_tile.shape[1], axis=1)
    if seed == "prefix" and carried:
        for k in range(1, per_tile.shape[1]):
            out[:, k] = fold(out[:, k - 1], per_tile[:, k - 1])
    return out


def scan_tiles(spec: coopcheck.KernelSpec, x: np.ndarray, initial: np.ndarray, mode: str, seed: str,
               how: str = "") -> Result:
    """The expected scan of rows of tiles ``x`` (n, tiles, tile) with seed values ``initial`` (n,) (with seed
    ``prefix`` carried from tile to tile), or (``how``) of a known wrong implementation: mode-swapped, seed-ignored,
    prefix-not-carried, operands-reversed."""
    if how == "mode-swapped":
        mode = "exclusive" if mode == "inclusive" else "inclusive"
    if how == "seed-ignored":
        seed = "none"
    if is_float(spec) and spec.static("op") == "sum":
        result = _float_sums(x, initial, mode, seed, how)
    elif is_float(spec):
        result = _float_extremes(spec, x, initial, mode, seed, how)
    else:
        result = _exact(spec, x, initial, mode, seed, how)
    if mode == "exclusive" and seed == "none" and spec.static("op") != "sum":
        result.defined[..., 0] = False  # no seed: item 0 of an exclusive scan is undefined (a sum's is 0)
    return result



def _exact(spec: coopcheck.KernelSpec, x: np.ndarray, initial: np.ndarray, mode: str, seed: str,
           how: str) -> Result:
    combine = _exact_op(spec)
    if how == "operands-reversed":
        forward = combine
        combine = lambda a, b: forward(b, a)  # noqa: E731 (the hypothesis: every operand pair swapped)
    inclusive = _doubling(x, combine)
    seeds = _carried(initial, inclusive[..., -1], seed, combine, how != "prefix-not-carried")
    seeded = inclusive if seed == "none" else combine(seeds[..., None], inclusive)
    if mode == "exclusive":
        first = seeds if seed != "none" else np.zeros(seeds.shape, x.dtype)
        unseeded = _shifted(inclusive, first)
        seeded = unseeded if seed == "none" else _shifted(combine(seeds[..., None], inclusive), seeds)
    return Result(seeded, np.ones(x.shape, dtype=bool))


def _float_sums(x: np.ndarray, initial: np.ndarray, mode: str, seed: str, how: str) -> Result:
    """Float sums in float64, with the magnitude, number and integrality of the values each covers."""
    with np.errstate(invalid="ignore", over="ignore"):
        wide, init = x.astype(np.float64), initial.astype(np.float64)
    integral = np.logical_and.accumulate(wide == np.round(wide), axis=-1)
    value, total = np.cumsum(wide, axis=-1), np.cumsum(np.abs(wide), axis=-1)
    count = np.broadcast_to(np.arange(1, x.shape[-1] + 1, dtype=np.float64), x.shape).copy()
    carried = how != "prefix-not-carried"
    if seed != "none":
        seeds = _carried(init, value[..., -1], seed, np.add, carried)
        seed_total = _carried(np.abs(init), total[..., -1], seed, np.add, carried)
        seed_count = _carried(np.ones(len(init)), count[..., -1], seed, np.add, carried)
        seed_integral = _carried(init == np.round(init), integral[..., -1], seed, np.logical_and, carried)
        value, total = value + seeds[..., None], total + seed_total[..., None]
        count, integral = count + seed_count[..., None], integral & seed_integral[..., None]
    else:
        seeds = seed_total = seed_count = np.zeros(x.shape[:2])
        seed_integral = np.ones(x.shape[:2], dtype=bool)
    if mode == "exclusive":
        value, total = _shifted(value, seeds), _shifted(total, seed_total)
        count, integral = _shifted(count, seed_count), _shifted(integral, seed_integral)
    return Result(value, np.ones(x.shape, dtype=bool), total, count, integral)


def _float_extremes(spec: coopcheck.KernelSpec, x: np.ndarray, initial: np.ndarray, mode: str, seed: str,
                    how: str) -> Result:
    """Float min or max (fmin, fmax): the extreme non-NaN value covered (a NaN where all are), and which zeros are
    covered."""
    is_max = spec.static("op") == "max"
    ignored = x.dtype.type(-np.inf if is_max else np.inf)
    fold: Any = np.maximum if is_max else np.minimum
    carried = how != "prefix-not-carried"
    negative = raw_view(np.array([x.dtype.type(-0.0)]))[0]

    def flags(values: np.ndarray) -> tuple[np.ndarray, Bools, Bools, Bools]:
        bits = raw_view(np.ascontiguousarray(values))
        return np.where(np.isnan(values), ignored, values), np.isnan(values), bits == negative, bits == 0

    number, nan, neg, pos = flags(x)
    value = fold.accumulate(number, axis=-1)
    all_nan = np.logical_and.accumulate(nan, axis=-1)
    neg_zero, pos_zero = np.logical_or.accumulate(neg, axis=-1), np.logical_or.accumulate(pos, axis=-1)
    first = flags(initial)
    if seed != "none":
        seeds = _carried(first[0], value[..., -1], seed, fold, carried)
        seed_nan = _carried(first[1], all_nan[..., -1], seed, np.logical_and, carried)
        seed_neg = _carried(first[2], neg_zero[..., -1], seed, np.logical_or, carried)
        seed_pos = _carried(first[3], pos_zero[..., -1], seed, np.logical_or, carried)
        value = fold(seeds[..., None], value)
        all_nan, neg_zero, pos_zero = all_nan & seed_nan[..., None], neg_zero | seed_neg[..., None], \
            pos_zero | seed_pos[..., None]
    else:
        seeds = np.full(x.shape[:2], ignored)
        seed_nan = np.ones(x.shape[:2], dtype=bool)
        seed_neg = seed_pos = np.zeros(x.shape[:2], dtype=bool)
    if mode == "exclusive":
        value, all_nan = _shifted(value, seeds), _shifted(all_nan, seed_nan)
        neg_zero, pos_zero = _shifted(neg_zero, seed_neg), _shifted(pos_zero, seed_pos)
    return Result(np.where(all_nan, x.dtype.type(np.nan), value), np.ones(x.shape, dtype=bool),
                  neg_zero=neg_zero, pos_zero=pos_zero, all_nan=all_nan)


# -- judging -----------------------------------------------------------------------------------------------


def sum_bound(dtype: np.dtype[Any], result: Result) -> tuple[np.ndarray, Bools]:
    """(bound, exact) of float sums: any order of n - 1 roundings to the dtype errs by at most
    S*((1 + u)**(n - 1) - 1), S the sum of the magnitudes and u the unit roundoff, plus the float64 reference's own
    S*((1 + 2**-53)**n - 1); exact where every value covered is an integer and S <= 2**digits."""
    assert result.total is not None and result.count is not None and result.integral is not None
    finfo, n = np.finfo(dtype), result.count
    u = float(finfo.eps) / 2
    bound = result.total * (np.expm1(np.maximum(n - 1, 0) * np.log1p(u)) + np.expm1(n * np.log1p(2.0**-53)))
    return bound, result.integral & (result.total <= 2.0 ** (finfo.nmant + 1))


def judged(spec: coopcheck.KernelSpec, got: np.ndarray, result: Result) -> tuple[np.ndarray, Bools, Bools]:
    """(what each output should be, wrong, judged by a bound) of outputs ``got`` against ``result``. Where a
    bounded sum passes, what it should be is the output itself (so a diagnosis predicting it matches it)."""
    dtype = got.dtype
    bounded = np.zeros(got.shape, dtype=bool)
    if result.total is not None:  # a float sum
        bound, exact = sum_bound(dtype, result)
        with np.errstate(invalid="ignore", over="ignore"):
            want = result.value.astype(dtype)
            within = np.abs(got.astype(np.float64) - result.value) <= bound
        wrong = np.where(exact, raw_view(np.ascontiguousarray(got)) != raw_view(want), ~within)
        bounded = ~exact
        want = np.where(bounded & within, got, want)
    elif result.all_nan is not None:  # a float min or max
        assert result.neg_zero is not None and result.pos_zero is not None
        want = result.value.astype(dtype)
        got_bits = raw_view(np.ascontiguousarray(got))
        zero = want == 0
        negative = raw_view(np.array([dtype.type(-0.0)]))[0]
        zero_ok = ((got_bits == negative) & result.neg_zero) | ((got_bits == 0) & result.pos_zero)
        with np.errstate(invalid="ignore"):
            wrong = np.where(result.all_nan, ~np.isnan(got), np.where(zero, ~zero_ok, got != want))
        want = np.where(zero & zero_ok, got, want)
    else:
        want = result.value
        wrong = raw_view(np.ascontiguousarray(got)) != raw_view(np.ascontiguousarray(want))
    return want, wrong & result.defined, bounded & result.defined
