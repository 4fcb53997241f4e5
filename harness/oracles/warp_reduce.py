"""Oracle for Warp Reduce: builds one batched launch's inputs, its expected output, and judges it.

Each case runs once per data pattern of its operator and dtype (:func:`harness.oracles.operands.pattern_names`),
each one block of the launch. The oracle cuts each block into its logical warps (:func:`coopcheck.warp_reduce.
logical_warps`) and those into segments (reduce: a logical warp's valid lanes; head and tail: the runs the flags
make); each segment's items become one row of a fold judged as Block Reduce's thread 0 is
(:func:`harness.oracles.folds.fold_judged`: exact operators bit for bit, float sums within a bound derived from the
row, float min and max by what they select), against the return value of the segment's first lane. Invalid lanes
hold the value that most changes a result that takes them (the block's sentinel for first). A known wrong
implementation is named when the output passes the contract altered by it (another rank order, another geometry,
valid_items ignored, the result in the segment's last lane, the other flags, the operands swapped).

Worked example (head, sum, int8, width 4, 4 threads, items [100, 100, 100, -7], flags [0, 0, 1, 0]): lane 0 must
return -56 (200 wraps), lane 2 must return 93; lanes 1 and 3 are not judged; every seen flag must be 0.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import coopcheck
import numpy as np
from coopcheck.reduce import COMMUTATIVE, SELECTING
from coopcheck.warp_reduce import ALGORITHMS as ALGORITHMS
from coopcheck.warp_reduce import (
    MODES,
    OPERATORS,
    VALID_LANES,
    WIDTHS,
    WarpReduceBatch,
    check_spec,
    out_length,
    width,
)

from harness.cases import Case
from harness.oracles.folds import fold_judged, with_invalid
from harness.oracles.judging import Bools, Ints, Judging, Prediction, axes_lacking, canonical, matches, thread_ranks
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.operands import is_float, pattern_blocks, pattern_names, random_bits
from harness.oracles.values import raw_view
from harness.oracles.warps import STRADDLE, geometry, straddles

OPERATION = "warp.reduce"
#: The case axis: valid lanes of a logical warp (reduce: coopcheck.warp_reduce.VALID_LANES) or the flags a lane
#: (head, tail).
FLAGS = ("flags-rand", "flags-none", "flags-all")
AXES = {"width": tuple(map(str, WIDTHS)), "op": OPERATORS, "mode": MODES, "lanes": (*VALID_LANES, *FLAGS)}

RESULT, BOUND, RECORD, INPUTS, ABI = range(5)
CHECK_NAMES = {RESULT: "result", BOUND: "sum-bound", RECORD: "invalid-never-applied", INPUTS: "inputs-unmodified",
               ABI: "output-abi"}
CHECKS = frozenset(CHECK_NAMES.values())
OUTPUT_CHECKS = frozenset(CHECK_NAMES[c] for c in (RESULT, BOUND, RECORD))
WHY = {RESULT: "the segment's result, in its first lane", BOUND: "the segment's sum, within its rounding bound",
       RECORD: "seen flag: no operator applied to an invalid item"}
INPUT_FIELDS = ("items", "flags", "valid", "sentinel")
#: Hypothesis id -> what a detail line says when a failing output passes the contract altered by it.
DIAGNOSES = {
    "rank-y-major": "rank computed y-major",
    "warps-straddle": STRADDLE,
    "invalid-included": "the invalid lanes reduced too (valid_items ignored)",
    "result-at-segment-end": "each segment's result in its last lane, not its first",
    "flags-swapped": "head flags read as tail flags, or the other way round",
    "operands-reversed": "the operands of a non-commutative operator swapped (each segment reduced last to first)",
    "floats-canonicalized": "floats canonicalized",
}


def check_static(spec: coopcheck.KernelSpec) -> None:
    """The family's static rules (:mod:`coopcheck.warp_reduce`): what every backend refuses at compile time."""
    check_spec(spec)


def axes_problem(operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
    """A Warp Reduce contract names the widths, operators, modes and lanes."""
    return axes_lacking("a Warp Reduce contract", AXES, axes)


def blocks_per_case(spec: coopcheck.KernelSpec) -> int:
    return len(pattern_names(spec))


# -- inputs ------------------------------------------------------------------------------------------------


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    threads, lanes = spec.threads, width(spec)
    drawn = pattern_blocks(spec, cases, global_seed, threads)
    names = np.array([c["lanes"] for c in cases])[drawn.case_of_block]
    valid = np.array([VALID_LANES.get(str(n), VALID_LANES["full"])(lanes) for n in names], dtype=np.int32)
    _, lane, present = geometry(threads, lanes, False)
    if spec.static("mode") == "reduce":
        invalid = lane[None, :] >= np.minimum(valid[:, None], present[None, :])
    else:
        invalid = np.zeros((len(names), threads), dtype=bool)
    items, sentinel = with_invalid(spec, drawn.items, invalid, drawn.keys)
    drawn_flags = random_bits(drawn.keys, threads, "flags") % np.uint64(4) == 0
    flags = np.where((names == "flags-all")[:, None] | ((names == "flags-rand")[:, None] & drawn_flags), 1, 0)
    batch = WarpReduceBatch(items.reshape(-1), flags.astype(np.uint8).reshape(-1), valid, sentinel, threads)
    return drawn.launch(spec, cases, batch)


def snapshot(batch: WarpReduceBatch) -> WarpReduceBatch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


# -- expected output ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """What the return values (n, threads) must be: ``want`` (the output itself where the contract leaves a value
    open or the value passes), ``wrong``, ``defined`` (a segment's first lane), ``bounded`` (judged by a bound)."""

    want: np.ndarray
    wrong: Bools
    defined: Bools
    bounded: Bools


def _segments(spec: coopcheck.KernelSpec, flags: np.ndarray, valid: np.ndarray, how: str) -> tuple[Bools, Bools]:
    """(first lane of a segment, lane in a segment) per block and primitive rank, under hypothesis ``how``."""
    _, lane, present = geometry(spec.threads, width(spec), how == "warps-straddle")
    mode = spec.static("mode")
    if how == "flags-swapped":
        mode = {"head": "tail", "tail": "head"}.get(mode, mode)
    if mode == "reduce":
        count = present[None, :] if how == "invalid-included" else np.minimum(valid[:, None], present[None, :])
        member = np.broadcast_to(lane[None, :] < count, flags.shape)
        return member & (lane == 0)[None, :], member
    flagged = flags.astype(bool)
    if mode == "tail":  # the lane after a tail starts a segment (a logical warp's lane 0 starts one anyway)
        flagged = np.hstack([np.zeros((len(flags), 1), dtype=bool), flagged[:, :-1]])
    return flagged | (lane == 0)[None, :], np.ones(flags.shape, dtype=bool)


def expected(spec: coopcheck.KernelSpec, items: np.ndarray, flags: np.ndarray, valid: np.ndarray, got: np.ndarray,
             how: str = "") -> Expected:
    """The return values ``got`` (n, threads) of blocks of ``items`` and ``flags`` (n, threads) judged by the
    contract, or by the contract altered by hypothesis ``how`` (see :data:`DIAGNOSES`)."""
    if how == "rank-y-major":  # the primitive's rank p of ABI rank r is prim[r]: judge in its order, put back
        prim = thread_ranks(spec, True)
        inverse = np.argsort(prim)
        inner = expected(spec, items[:, inverse], flags[:, inverse], valid, got[:, inverse])
        return Expected(*(a[:, prim] for a in (inner.want, inner.wrong, inner.defined, inner.bounded)))
    start, member = _segments(spec, flags, valid, how)
    threads, lanes = spec.threads, width(spec)
    block, first = np.nonzero(start)
    segment = np.cumsum(start, axis=1) - 1
    length = np.bincount((np.arange(len(items))[:, None] * threads + segment)[member],
                         minlength=len(items) * threads).reshape(len(items), threads)[block, segment[block, first]]
    k = np.arange(lanes)[None, :]
    at = first[:, None] + (length[:, None] - 1 - k if how == "operands-reversed" else k)
    rows = items[block[:, None], np.clip(at, 0, threads - 1)]
    lane_of_result = first + length - 1 if how == "result-at-segment-end" else first
    want, wrong, bounded = got.copy(), np.zeros(got.shape, dtype=bool), np.zeros(got.shape, dtype=bool)
    defined = np.zeros(got.shape, dtype=bool)
    results = got[block, lane_of_result]
    with np.errstate(invalid="ignore", over="ignore"):  # a hypothesis may fold invalid lanes' NaNs and infinities
        w, x, b = fold_judged(spec, rows, length, results)
    if how == "floats-canonicalized":
        w, x = canonical(w), raw_view(canonical(w)) != raw_view(results)
    want[block, lane_of_result] = np.where(x, w, results)  # a result that passes: what it is
    wrong[block, lane_of_result], bounded[block, lane_of_result], defined[block, lane_of_result] = x, b, True
    return Expected(want, wrong, defined, bounded)


def _inputs(snap: WarpReduceBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = snap.n_blocks
    return (np.asarray(snap.items).reshape(n, -1), np.asarray(snap.flags).reshape(n, -1),
            np.asarray(snap.valid).astype(np.int64))


def compare(spec: coopcheck.KernelSpec, snap: WarpReduceBatch, out: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, Bools]:
    """(output, expected output, wrong) per block and element: every segment's first lane and every seen flag
    are judged; the other lanes' return values are unspecified (their expected value is what they hold)."""
    threads = spec.threads
    got = out.reshape(snap.n_blocks, out_length(spec))
    items, flags, valid = _inputs(snap)
    result = expected(spec, items, flags, valid, got[:, :threads])
    want, wrong = got.copy(), np.zeros(got.shape, dtype=bool)
    want[:, :threads], wrong[:, :threads] = result.want, result.wrong
    want[:, threads:] = 0
    wrong[:, threads:] = raw_view(np.ascontiguousarray(got[:, threads:])) != 0
    return got, want, wrong


def check_ids(spec: coopcheck.KernelSpec, snap: WarpReduceBatch, rows: Ints) -> Ints:
    """The check each element of blocks ``rows`` is judged by: a segment's result (or its bound), the flags."""
    items, flags, valid = (a[rows] for a in _inputs(snap))
    threads = spec.threads
    ids = np.full((len(rows), out_length(spec)), RESULT, dtype=np.int64)
    ids[:, threads:] = RECORD
    bounded = expected(spec, items, flags, valid, np.zeros(items.shape, dtype=items.dtype)).bounded
    ids[:, :threads][bounded] = BOUND
    return ids


# -- diagnosis ---------------------------------------------------------------------------------------------


def _hypotheses(spec: coopcheck.KernelSpec) -> Iterator[str]:
    """The known wrong implementations that can differ from the contract at ``spec``."""
    if len(spec.block) > 1:
        yield "rank-y-major"
    if straddles(spec):
        yield "warps-straddle"
    if spec.static("mode") == "reduce":
        yield "invalid-included"
    else:
        yield "flags-swapped"
    if width(spec) > 1:
        yield "result-at-segment-end"
    if spec.static("op") not in COMMUTATIVE:
        yield "operands-reversed"
    if is_float(spec) and spec.static("op") in SELECTING:
        yield "floats-canonicalized"


def explain(spec: coopcheck.KernelSpec, snap: WarpReduceBatch, got: np.ndarray, wrong: Bools, launch: Launch,
            bad: Bools) -> dict[int, tuple[str, ...]]:
    """Block -> the hypotheses whose altered contract its return values pass (only blocks with wrong output): a
    hypothesis predicts every return value (where it leaves one open, what the output holds) and no seen flag, and
    must predict the lanes it defines."""
    items_all, flags_all, valid_all = _inputs(snap)
    threads = spec.threads

    def predict(at: Ints) -> Iterator[Prediction]:
        for name in _hypotheses(spec):
            result = expected(spec, items_all[at], flags_all[at], valid_all[at], got[at, :threads], name)
            alt, returns = got[at].copy(), np.zeros(got[at].shape, dtype=bool)
            strict = returns.copy()
            alt[:, :threads], returns[:, :threads], strict[:, :threads] = result.want, True, result.defined
            yield name, alt, returns, strict

    return matches(got, wrong, bad, predict)


JUDGING = Judging.of_fields(CHECK_NAMES, WHY, DIAGNOSES, input_fields=INPUT_FIELDS, inputs=INPUTS, abi=ABI,
                            out_length=out_length, compare=compare, check_ids=check_ids, explain=explain)
#: Every case's verdict (in case order) from the output and what the launch left in its inputs.
judge = JUDGING.judge


def block_failures(spec: coopcheck.KernelSpec, snap: WarpReduceBatch, out: object) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot of
    its inputs taken before the launch; an output off the ABI is one line."""
    flags, valid = np.asarray(snap.flags).reshape(snap.n_blocks, -1), np.asarray(snap.valid)
    return JUDGING.block_failures(spec, snap, out,
                                  lambda b: f"valid lanes {int(valid[b])}, {int(flags[b].sum())} flags")
