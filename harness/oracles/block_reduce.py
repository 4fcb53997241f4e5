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
from coopcheck.reduce import COMMUTATIVE, OPERATORS, SELECTING, ReduceBatch, check_spec, out_length

from harness.cases import Case
from harness.oracles.folds import fold_judged, sum_bound, with_invalid
from harness.oracles.judging import Bools, Ints, Judging, Prediction, axes_lacking, canonical, matches, thread_ranks
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.operands import is_float, pattern_blocks, pattern_names
from harness.oracles.values import raw_view

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


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    drawn = pattern_blocks(spec, cases, global_seed, spec.tile)
    valid = np.array([c.valid_items() for c in cases], dtype=np.int32)[drawn.case_of_block]
    invalid = np.arange(spec.tile)[None, :] >= valid[:, None]
    items, sentinel = with_invalid(spec, drawn.items, invalid, drawn.keys)
    batch = ReduceBatch(items.reshape(-1), valid, sentinel, spec.tile)
    return drawn.launch(spec, cases, batch)


def snapshot(batch: ReduceBatch) -> ReduceBatch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


# -- expected result ---------------------------------------------------------------------------------------


def primitive_order(spec: coopcheck.KernelSpec, y_major: bool) -> Ints:
    """The ABI slot the primitive sees at each of its tile indices (its rank y-major or not)."""
    rank = thread_ranks(spec, y_major)
    prim = (rank[:, None] * spec.items_per_thread + np.arange(spec.items_per_thread)).reshape(-1)
    order: Ints = np.argsort(prim)
    return order


def compare(spec: coopcheck.KernelSpec, snap: ReduceBatch, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, Bools]:
    """(output, expected output, wrong) per block and element: thread 0's result and every seen flag are
    judged; the other threads' return values are unspecified (their expected value is what they hold)."""
    threads = spec.threads
    got = out.reshape(snap.n_blocks, -1)
    items = np.asarray(snap.items).reshape(snap.n_blocks, -1)
    want, wrong = got.copy(), np.zeros(got.shape, dtype=bool)
    want[:, 0], wrong[:, 0], _ = fold_judged(spec, items, np.asarray(snap.valid), got[:, 0])
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
            alt[:, 0] = fold_judged(spec, order, count, got[at, 0])[0]
            yield name, alt, defined, None
        if is_float(spec) and spec.static("op") in SELECTING:
            alt = got[at].copy()
            alt[:, 0] = canonical(fold_judged(spec, items, valid, got[at, 0])[0])
            yield "floats-canonicalized", alt, defined, None

    found = {b: list(names) for b, names in matches(got, wrong, bad, predict).items()}
    if threads > 1:  # the last thread's return value would pass as thread 0's (a reduction ending at the far end)
        at = np.flatnonzero(bad & wrong[:, 0] & ~wrong[:, 1:].any(axis=1))
        last_wrong = fold_judged(spec, items_all[at], valid_all[at], got[at, threads - 1])[1]
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
