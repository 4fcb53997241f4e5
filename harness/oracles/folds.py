"""The fold of a reducing operator over rows of items, each over its first ``valid`` items in index order, and the
judging of a result against it, shared by the reducing families whose results are folds (Block Reduce's thread 0,
Warp Reduce's first lane of a segment); and the inputs those families give an operator that must not see them.

A row's invalid items hold the value that most changes a result that takes them: the extreme for min and max, the
block's sentinel for the recording operator first (a finite non-zero value no valid item has), random bits else.
"""

from __future__ import annotations

from typing import Any

import coopcheck
import numpy as np
from coopcheck.reduce import RECORDING

from harness.oracles.judging import Bools
from harness.oracles.operands import extreme, identity, invertible, matmul, of_bits, random_bits
from harness.oracles.values import raw_view


def sentinels(dtype: np.dtype[Any], bits64: np.ndarray) -> np.ndarray:
    """One sentinel a block: random bits, made finite and non-zero (first compares its operands to it)."""
    values = of_bits(dtype, bits64)
    if dtype.kind == "f":
        return np.where(np.isfinite(values) & (values != 0), values, dtype.type(-1.75))
    return np.where(values != 0, values, dtype.type(1))


def with_invalid(spec: coopcheck.KernelSpec, items: np.ndarray, invalid: Bools, keys: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(items, sentinel a row): ``items`` with its ``invalid`` slots filled (see the module docstring), and no valid
    item equal to its row's sentinel."""
    dtype, op = items.dtype, spec.static("op")
    sentinel = sentinels(dtype, random_bits(keys, 1, "sentinel")[:, 0])
    if op == RECORDING:
        clash = ~invalid & (raw_view(items) == raw_view(sentinel)[:, None])
        items = np.where(clash, (raw_view(items) ^ 1).view(dtype), items)  # no valid item equals the sentinel
        fill = np.broadcast_to(sentinel[:, None], items.shape)
    elif op in ("min", "max"):
        fill = np.full(items.shape, extreme(spec, low=op == "min"), dtype=dtype)
    elif op == "matmul":  # invertible: taken, it changes any product but as the identity
        width = items.shape[1]
        fill = invertible(dtype, random_bits(keys, width, "invalid"), random_bits(keys, width, "choice"))
    else:
        fill = of_bits(dtype, random_bits(keys, items.shape[1], "invalid"))
    return np.where(invalid, fill, items), sentinel


def reference(spec: coopcheck.KernelSpec, items: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row, the operator over the items whose index is below the row's ``valid``, in index order (float
    sums in float64, to be judged against a bound)."""
    op, dtype = spec.static("op"), items.dtype
    mask = np.arange(items.shape[1])[None, :] < valid[:, None]
    width = dtype.itemsize * 8
    rows = np.arange(len(items))
    if op == "sum" and dtype.kind == "f":
        # random bits hold NaNs (signalling ones too) and infinities, and float64 items may sum past its range:
        # the IEEE results (a NaN, an infinity) are what is meant here
        with np.errstate(invalid="ignore", over="ignore"):
            wide: np.ndarray = np.where(mask, items.astype(np.float64), 0.0).sum(axis=1)
        return wide
    if op == "sum":
        total = np.where(mask, raw_view(items).astype(np.uint64), np.uint64(0)).sum(axis=1, dtype=np.uint64)
        wrapped: np.ndarray = (total & np.uint64((1 << width) - 1)).astype(f"uint{width}").view(dtype)
        return wrapped
    if op in ("min", "max") and dtype.kind == "f":
        # NaN-ignoring, as CUB's cuda::minimum / maximum (CUDA's fminf / fmaxf), a signalling NaN too: np.fmin /
        # np.fmax return NaN for one (IEEE 754-2008's minNum / maxNum), so the NaNs are masked out instead.
        numbers = mask & ~np.isnan(items)
        is_max = op == "max"
        candidates = np.where(numbers, items, -np.inf if is_max else np.inf)
        folded = candidates.max(axis=1) if is_max else candidates.min(axis=1)
        return np.where(numbers.any(axis=1), folded, np.nan).astype(dtype)
    if op in ("min", "max"):
        padded = np.where(mask, items, extreme(spec, low=op == "max"))
        return padded.min(axis=1) if op == "min" else padded.max(axis=1)  # type: ignore[no-any-return]
    if op == "first":
        nonzero = mask & (items != 0)
        at = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), np.maximum(valid - 1, 0))
        return items[rows, at]  # type: ignore[no-any-return]
    k = width // 4
    raw = np.where(mask, raw_view(items).astype(np.uint64), raw_view(np.array([identity(spec)]))[0])
    while raw.shape[1] > 1:  # a tree of in-order products: matmul is associative
        if raw.shape[1] % 2:
            raw = np.hstack([raw, np.full((len(raw), 1), raw_view(np.array([identity(spec)]))[0], np.uint64)])
        raw = matmul(raw[:, 0::2], raw[:, 1::2], k)
    product: np.ndarray = raw[:, 0].astype(f"uint{width}").view(dtype)
    return product


def sum_bound(spec: coopcheck.KernelSpec, items: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, Bools]:
    """(bound, exact) per row of a float sum: any order of n - 1 roundings to the dtype errs by at most
    S*((1 + u)**(n - 1) - 1), S the sum of the magnitudes and u the dtype's unit roundoff, plus the float64
    reference's own S*((1 + 2**-53)**n - 1); exact where every item is an integer and S <= 2**digits, so that
    every partial sum of any order is representable (then the result must be the sum bit for bit)."""
    finfo = np.finfo(items.dtype)
    mask = np.arange(items.shape[1])[None, :] < valid[:, None]
    n = valid.astype(np.float64)
    u = float(finfo.eps) / 2
    with np.errstate(invalid="ignore", over="ignore"):  # NaNs and infinities, as in reference
        wide = np.where(mask, items.astype(np.float64), 0.0)
        magnitude = np.abs(wide).sum(axis=1)
        bound = magnitude * (np.expm1(np.maximum(n - 1, 0) * np.log1p(u)) + np.expm1(n * np.log1p(2.0**-53)))
        exact = (wide == np.round(wide)).all(axis=1) & (magnitude <= 2.0 ** (finfo.nmant + 1))
    return bound, exact


def fold_judged(spec: coopcheck.KernelSpec, items: np.ndarray, valid: np.ndarray, got0: np.ndarray
                  ) -> tuple[np.ndarray, Bools, Bools]:
    """(expected result for display, wrong, judged by the bound) of results ``got0``, one a row: the fold of the row's
    first ``valid`` items (a row with no valid item is never wrong)."""
    op, dtype = spec.static("op"), items.dtype
    ref = reference(spec, items, valid)
    bounded = np.zeros(len(items), dtype=bool)
    if op == "sum" and dtype.kind == "f":
        bound, exact = sum_bound(spec, items, valid)
        # a float64 sum beyond the dtype's range rounds to its infinity, as the device's sum does
        with np.errstate(invalid="ignore", over="ignore"):
            want = ref.astype(dtype)
            within = np.abs(got0.astype(np.float64) - ref) <= bound
        wrong = np.where(exact, raw_view(got0) != raw_view(want), ~within)
        bounded = ~exact
    elif op in ("min", "max") and dtype.kind == "f":
        # One of the valid items bit for bit, equal to the extreme of the non-NaN ones (a NaN when all are).
        mask = np.arange(items.shape[1])[None, :] < valid[:, None]
        member = (mask & (raw_view(items) == raw_view(got0)[:, None])).any(axis=1)
        with np.errstate(invalid="ignore"):
            at_extreme = np.where(np.isnan(ref), np.isnan(got0), got0 == ref)
        wrong = ~(member & at_extreme)
        first_equal = (mask & (raw_view(items) == raw_view(ref)[:, None])).argmax(axis=1)
        want = np.where(np.isnan(ref), ref, items[np.arange(len(items)), first_equal])
    else:
        want = ref
        wrong = raw_view(got0) != raw_view(want)
    return want, wrong & (valid >= 1), bounded
