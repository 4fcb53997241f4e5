"""Oracle for block Reduce: builds one batched launch's inputs, its expected output, and judges it.

Each case runs once per data pattern of its operator and dtype (:func:`pattern_names`), each one block of the
launch; a pattern is chosen so that a known wrong implementation changes thread 0's result: full-range integers
(sums wrap), values of one sign (a wrong identity shows), -0.0 as the extreme and NaNs among the items (min and
max of floats), sparse non-zeros (first), finite floats (a sum judged within a rounding bound derived from its
inputs) and integral floats whose every partial sum is exact (a sum judged bit-exactly). Invalid items hold the
value that most changes a result that takes them (the extreme for min and max, the block's sentinel for the
recording operator first). Only thread 0's result and every thread's seen flag are judged.

Worked example (sum, int8, 2 threads, ipt=2, valid 3, items [100, 100, 100, -7]): thread 0 must return 44
(300 wraps to 44); the other thread's return value is not judged; every seen flag must be 0.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import coopcheck
import numpy as np
from coopcheck.reduce import ALGORITHMS as ALGORITHMS
from coopcheck.reduce import COMMUTATIVE, OPERATORS, RECORDING, SELECTING, ReduceBatch, check_spec, out_length

from harness.cases import Case
from harness.oracles.judging import Bools, Ints, Judging, Prediction, axes_lacking, canonical, matches, thread_ranks
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.launch import block_order
from harness.oracles.operands import (
    extreme,
    identity,
    is_float,
    matmul,
    of_bits,
    pattern_names,
    pattern_values,
    random_bits,
)
from harness.oracles.values import mix, raw_view

OPERATION = "block.reduce"
AXES = {"op": OPERATORS}

RESULT, BOUND, RECORD, INPUTS, ABI = range(5)
CHECK_NAMES = {RESULT: "result", BOUND: "sum-bound", RECORD: "invalid-never-applied", INPUTS: "inputs-unmodified",
               ABI: "output-abi"}
CHECKS = frozenset(CHECK_NAMES.values())
OUTPUT_CHECKS = frozenset(CHECK_NAMES[c] for c in (RESULT, BOUND, RECORD))
WHY = {RESULT: "thread 0's result", BOUND: "thread 0's sum, within its rounding bound",
       RECORD: "seen flag: no operator applied to an invalid item"}
INPUT_FIELDS = ("items", "valid", "sentinel")
#: Hypothesis id -> what a detail line says when a failing result equals its result.
DIAGNOSES = {
    "rank-y-major": "rank computed y-major",
    "operands-reversed": "the operands of a non-commutative operator swapped (the valid items reduced last to first)",
    "invalid-included": "the invalid items reduced too (valid_items ignored)",
    "result-in-last-thread": "thread 0 lacks the result, the last thread holds it",
    "floats-canonicalized": "floats canonicalized",
}


def check_static(spec: coopcheck.KernelSpec) -> None:
    """The family's static rules (:mod:`coopcheck.reduce`): what every backend refuses at compile time."""
    check_spec(spec)


def axes_problem(operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
    """A Reduce contract names the operators."""
    return axes_lacking("a Reduce contract", AXES, axes)


def blocks_per_case(spec: coopcheck.KernelSpec) -> int:
    return len(pattern_names(spec))


# -- inputs ------------------------------------------------------------------------------------------------


def _sentinels(dtype: np.dtype[Any], bits64: np.ndarray) -> np.ndarray:
    """One sentinel a block: random bits, made finite and non-zero (first compares its operands to it)."""
    values = of_bits(dtype, bits64)
    if dtype.kind == "f":
        return np.where(np.isfinite(values) & (values != 0), values, dtype.type(-1.75))
    return np.where(values != 0, values, dtype.type(1))


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    names = pattern_names(spec)
    seed, order = block_order(global_seed, cases, len(names))
    case_of_block, pattern_of_block = order // len(names), order % len(names)
    seeds = np.array([c.seed(global_seed) for c in cases], dtype=np.uint64)[case_of_block]
    valid = np.array([c.valid_items() for c in cases], dtype=np.int32)[case_of_block]
    with np.errstate(over="ignore"):
        keys = mix(seeds * np.uint64(8) + pattern_of_block.astype(np.uint64))
    tile, dtype, op = spec.tile, np.dtype(spec.dtype), spec.static("op")
    items = np.empty((len(order), tile), dtype=dtype)
    r, r2 = random_bits(keys, tile, "items"), random_bits(keys, tile, "shape")
    for p, name in enumerate(names):
        rows = pattern_of_block == p
        items[rows] = pattern_values(spec, name, r[rows], r2[rows])
    sentinel = _sentinels(dtype, random_bits(keys, 1, "sentinel")[:, 0])
    invalid = np.arange(tile)[None, :] >= valid[:, None]
    if op == RECORDING:
        clash = ~invalid & (raw_view(items) == raw_view(sentinel)[:, None])
        items[clash] = (raw_view(items) ^ 1).view(dtype)[clash]  # no valid item equals the sentinel
        fill = np.broadcast_to(sentinel[:, None], items.shape)
    elif op in ("min", "max"):
        fill = np.full(items.shape, extreme(spec, low=op == "min"), dtype=dtype)
    else:
        fill = of_bits(dtype, random_bits(keys, tile, "invalid"))
    items = np.where(invalid, fill, items)
    batch = ReduceBatch(items.reshape(-1), valid, sentinel, tile)
    return Launch(spec, tuple(cases), batch, case_of_block, pattern_of_block, names, seed)


def snapshot(batch: ReduceBatch) -> ReduceBatch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


# -- expected result ---------------------------------------------------------------------------------------


def reference(spec: coopcheck.KernelSpec, items: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row, the operator over the items whose index is below the row's ``valid``, in index order (float
    sums in float64, to be judged against a bound)."""
    op, dtype = spec.static("op"), items.dtype
    mask = np.arange(items.shape[1])[None, :] < valid[:, None]
    width = dtype.itemsize * 8
    rows = np.arange(len(items))
    if op == "sum" and dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # signalling NaNs of the invalid slots quieten in the cast
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
    with np.errstate(invalid="ignore"):  # signalling NaNs of the invalid slots quieten in the cast
        wide = np.where(mask, items.astype(np.float64), 0.0)
    magnitude = np.abs(wide).sum(axis=1)
    n = valid.astype(np.float64)
    u = float(finfo.eps) / 2
    bound = magnitude * (np.expm1(np.maximum(n - 1, 0) * np.log1p(u)) + np.expm1(n * np.log1p(2.0**-53)))
    exact = (wide == np.round(wide)).all(axis=1) & (magnitude <= 2.0 ** (finfo.nmant + 1))
    return bound, exact


def primitive_order(spec: coopcheck.KernelSpec, y_major: bool) -> Ints:
    """The ABI slot the primitive sees at each of its tile indices (its rank y-major or not)."""
    rank = thread_ranks(spec, y_major)
    prim = (rank[:, None] * spec.items_per_thread + np.arange(spec.items_per_thread)).reshape(-1)
    order: Ints = np.argsort(prim)
    return order


def _result_wrong(spec: coopcheck.KernelSpec, items: np.ndarray, valid: np.ndarray, got0: np.ndarray
                  ) -> tuple[np.ndarray, Bools, Bools]:
    """(expected result for display, wrong, judged by the bound) of thread 0's results ``got0``."""
    op, dtype = spec.static("op"), items.dtype
    ref = reference(spec, items, valid)
    bounded = np.zeros(len(items), dtype=bool)
    if op == "sum" and dtype.kind == "f":
        bound, exact = sum_bound(spec, items, valid)
        want = ref.astype(dtype)
        with np.errstate(invalid="ignore"):
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


def compare(spec: coopcheck.KernelSpec, snap: ReduceBatch, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, Bools]:
    """(output, expected output, wrong) per block and element: thread 0's result and every seen flag are
    judged; the other threads' return values are unspecified (their expected value is what they hold)."""
    threads = spec.threads
    got = out.reshape(snap.n_blocks, -1)
    items = np.asarray(snap.items).reshape(snap.n_blocks, -1)
    want, wrong = got.copy(), np.zeros(got.shape, dtype=bool)
    want[:, 0], wrong[:, 0], _ = _result_wrong(spec, items, np.asarray(snap.valid), got[:, 0])
    want[:, threads:] = 0
    wrong[:, threads:] = raw_view(np.ascontiguousarray(got[:, threads:])) != 0
    return got, want, wrong


def check_ids(spec: coopcheck.KernelSpec, snap: ReduceBatch, rows: Ints) -> Ints:
    """The check each element of blocks ``rows`` is judged by: thread 0's result (or its bound), the flags."""
    items = np.asarray(snap.items).reshape(snap.n_blocks, -1)[rows]
    valid = np.asarray(snap.valid)[rows]
    ids = np.full((len(rows), out_length(spec)), RESULT, dtype=np.int64)
    ids[:, spec.threads:] = RECORD
    if spec.static("op") == "sum" and is_float(spec):
        ids[:, 0] = np.where(sum_bound(spec, items, valid)[1], RESULT, BOUND)
    return ids


# -- diagnosis ---------------------------------------------------------------------------------------------


def _variants(spec: coopcheck.KernelSpec, items: np.ndarray, valid: np.ndarray
              ) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(diagnosis, the items in the order it reduces them, the valid count it uses) per hypothesis."""
    if len(spec.block) > 1:  # a y-major rank takes other threads' items as valid, and reorders them
        yield "rank-y-major", items[:, primitive_order(spec, True)], valid
    if spec.static("op") not in COMMUTATIVE:
        t = np.arange(items.shape[1])[None, :]
        backwards = np.where(t < valid[:, None], valid[:, None] - 1 - t, t)
        yield "operands-reversed", np.take_along_axis(items, backwards, axis=1), valid
    yield "invalid-included", items, np.full_like(valid, spec.tile)


def explain(spec: coopcheck.KernelSpec, snap: ReduceBatch, got: np.ndarray, wrong: Bools, launch: Launch,
            bad: Bools) -> dict[int, tuple[str, ...]]:
    """Block -> the hypotheses whose result its thread 0's result equals (only blocks with wrong output)."""
    items_all = np.asarray(snap.items).reshape(snap.n_blocks, -1)
    valid_all = np.asarray(snap.valid)
    threads = spec.threads

    def predict(at: Ints) -> Iterator[Prediction]:
        items, valid = items_all[at], valid_all[at]
        defined = np.zeros((len(at), got.shape[1]), dtype=bool)
        defined[:, 0] = True
        for name, order, count in _variants(spec, items, valid):
            alt = got[at].copy()
            alt[:, 0] = _result_wrong(spec, order, count, got[at, 0])[0]
            yield name, alt, defined, None
        if is_float(spec) and spec.static("op") in SELECTING:
            alt = got[at].copy()
            alt[:, 0] = canonical(_result_wrong(spec, items, valid, got[at, 0])[0])
            yield "floats-canonicalized", alt, defined, None

    found = {b: list(names) for b, names in matches(got, wrong, bad, predict).items()}
    if threads > 1:  # the last thread's return value would pass as thread 0's (a reduction ending at the far end)
        at = np.flatnonzero(bad & wrong[:, 0] & ~wrong[:, 1:].any(axis=1))
        last_wrong = _result_wrong(spec, items_all[at], valid_all[at], got[at, threads - 1])[1]
        for b in at[~last_wrong]:
            found.setdefault(int(b), []).append("result-in-last-thread")
    return {b: tuple(names) for b, names in found.items()}


JUDGING = Judging.of_fields(CHECK_NAMES, WHY, DIAGNOSES, input_fields=INPUT_FIELDS, inputs=INPUTS, abi=ABI,
                            out_length=out_length, compare=compare, check_ids=check_ids, explain=explain)
#: Every case's verdict (in case order) from the output and what the launch left in its inputs.
judge = JUDGING.judge


def block_failures(spec: coopcheck.KernelSpec, snap: ReduceBatch, out: object) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot of
    its inputs taken before the launch; an output off the ABI is one line."""
    return JUDGING.block_failures(spec, snap, out, lambda b: f"valid_items {int(np.asarray(snap.valid)[b])}")
