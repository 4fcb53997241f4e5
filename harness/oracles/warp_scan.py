"""Oracle for Warp Scan: builds one batched launch's inputs, its expected output, and judges it.

Each case runs once per data pattern of its operator and dtype (:func:`harness.oracles.operands.pattern_names`),
each one block of the launch. The oracle cuts each block into its logical warps (:func:`harness.oracles.warps.
geometry`), gathers each logical warp's lanes into one row, and scans the rows as Block Scan scans a tile
(:func:`harness.oracles.scans.scan_tiles`: exact operators bit for bit, float sums within a bound derived from the
values each lane covers, float min and max by what they select); every lane's aggregate is its row's inclusive scan
without the seed at the logical warp's last lane. A known wrong implementation is named when the output passes the
contract altered by it (another rank order, another geometry, the other mode, the seed left out or taken into the
aggregate, the operands swapped, floats canonicalized).

Worked example (inclusive max, int8, seed initial -5, width 2, 3 threads, items [3, -9, 7], aggregate on): the
scanned items are [3, 3, 7] and the aggregates [3, 3, 7] (lane 2 is a logical warp of its own).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import coopcheck
import numpy as np
from coopcheck.warp_scan import (
    AGGREGATES,
    MODES,
    OPERATORS,
    SEEDS,
    WIDTHS,
    WarpScanBatch,
    aggregates,
    check_spec,
    out_length,
    width,
)
from coopcheck.warp_scan import ALGORITHMS as ALGORITHMS

from harness.cases import Case
from harness.oracles.judging import Bools, Ints, Judging, Prediction, axes_lacking, canonical, matches, thread_ranks
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.operands import is_float, pattern_blocks, pattern_names
from harness.oracles.scans import Result, judged, scan_tiles, seed_values
from harness.oracles.warps import STRADDLE, geometry, straddles

OPERATION = "warp.scan"
INITS = ("none", "identity", "rand")
AXES = {"width": tuple(map(str, WIDTHS)), "op": OPERATORS, "mode": MODES, "seed": SEEDS, "aggregate": AGGREGATES,
        "init": INITS}

SCANNED, BOUND, AGGREGATE, INPUTS, ABI = range(5)
CHECK_NAMES = {SCANNED: "scanned", BOUND: "sum-bound", AGGREGATE: "aggregate", INPUTS: "inputs-unmodified",
               ABI: "output-abi"}
CHECKS = frozenset(CHECK_NAMES.values())
OUTPUT_CHECKS = frozenset(CHECK_NAMES[c] for c in (SCANNED, BOUND, AGGREGATE))
WHY = {SCANNED: "scanned item", BOUND: "sum within its rounding bound", AGGREGATE: "the logical warp's aggregate"}
INPUT_FIELDS = ("items", "initial")
#: Hypothesis id -> what a detail line says when a failing output passes the contract altered by it.
DIAGNOSES = {
    "rank-y-major": "rank computed y-major",
    "warps-straddle": STRADDLE,
    "mode-swapped": "an inclusive scan where exclusive was asked, or the other way round",
    "seed-ignored": "the initial value not applied",
    "aggregate-with-seed": "the warp aggregate includes the initial value",
    "operands-reversed": "the operands of a non-commutative operator swapped (the scan taken last to first)",
    "floats-canonicalized": "floats canonicalized",
}


def check_static(spec: coopcheck.KernelSpec) -> None:
    """The family's static rules (:mod:`coopcheck.warp_scan`): what every backend refuses at compile time."""
    check_spec(spec)


def axes_problem(operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
    """A Warp Scan contract names the widths, operators, modes, seeds, aggregate outputs and seed values."""
    return axes_lacking("a Warp Scan contract", AXES, axes)


def blocks_per_case(spec: coopcheck.KernelSpec) -> int:
    return len(pattern_names(spec))


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    drawn = pattern_blocks(spec, cases, global_seed, spec.threads)
    inits = np.array([c["init"] for c in cases])[drawn.case_of_block]
    initial = seed_values(spec, inits, drawn.keys, drawn.pattern_of_block, drawn.names)
    return drawn.launch(spec, cases, WarpScanBatch(drawn.items.reshape(-1), initial, spec.threads))


def snapshot(batch: WarpScanBatch) -> WarpScanBatch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


# -- expected output ---------------------------------------------------------------------------------------


def scan_warps(spec: coopcheck.KernelSpec, items: np.ndarray, initial: np.ndarray, how: str = ""
               ) -> tuple[Result, Result]:
    """(scanned items, aggregates) of blocks of ``items`` (n, threads) in primitive rank order, each shaped
    (n, threads), by the contract or (``how``) a known wrong implementation."""
    threads, lanes = spec.threads, width(spec)
    warp, lane, present = geometry(threads, lanes, how == "warps-straddle")
    n, n_warps = len(items), int(warp.max()) + 1
    slot = np.zeros((n_warps, lanes), dtype=np.int64)  # a missing lane of a partial logical warp takes rank 0: it
    slot[warp, lane] = np.arange(threads)  # follows every lane there is, so no lane's prefix covers it
    rows = items[:, slot].reshape(n * n_warps, 1, lanes)
    seeds = np.repeat(initial, n_warps)
    seed = spec.static("seed")

    def at(lanes_of_rank: Ints) -> Any:
        return lambda a: a.reshape(n, n_warps, lanes)[:, warp, lanes_of_rank]

    scanned = scan_tiles(spec, rows, seeds, spec.static("mode"), seed, how).map(at(lane))
    total = scan_tiles(spec, rows, seeds, "inclusive", seed if how == "aggregate-with-seed" else "none",
                       how if how == "operands-reversed" else "")
    return scanned, total.map(at(present - 1))


def _judge(spec: coopcheck.KernelSpec, items: np.ndarray, initial: np.ndarray, got: np.ndarray, how: str = ""
           ) -> tuple[np.ndarray, Bools, Bools]:
    """(want, wrong, bounded) per block and element of ``got`` (n, out), under hypothesis ``how`` or the contract."""
    threads = spec.threads
    if how == "rank-y-major":  # the primitive's rank p of ABI rank r is prim[r]: judge in its order, put back
        prim = thread_ranks(spec, True)
        parts = got.shape[1] // threads
        inverse = np.concatenate([np.argsort(prim) + k * threads for k in range(parts)])
        back = np.concatenate([prim + k * threads for k in range(parts)])
        inner = _judge(spec, items[:, inverse[:threads]], initial, got[:, inverse])
        return inner[0][:, back], inner[1][:, back], inner[2][:, back]
    scanned, total = scan_warps(spec, items, initial, how)
    want, wrong, bounded = got.copy(), np.zeros(got.shape, dtype=bool), np.zeros(got.shape, dtype=bool)
    want[:, :threads], wrong[:, :threads], bounded[:, :threads] = judged(spec, got[:, :threads], scanned)
    if aggregates(spec):
        want[:, threads:], wrong[:, threads:], bounded[:, threads:] = judged(spec, got[:, threads:], total)
    want[:, :threads] = np.where(scanned.defined, want[:, :threads], got[:, :threads])  # an open output: what it holds
    return want, wrong, bounded


def _inputs(snap: WarpScanBatch) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(snap.items).reshape(snap.n_blocks, -1), np.asarray(snap.initial)


def compare(spec: coopcheck.KernelSpec, snap: WarpScanBatch, out: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, Bools]:
    """(output, expected output, wrong) per block and element: every lane's scanned item (but an undefined lane 0,
    whose expected value is what it holds) and its aggregate."""
    got = out.reshape(snap.n_blocks, out_length(spec))
    want, wrong, _ = _judge(spec, *_inputs(snap), got)
    return got, want, wrong


def check_ids(spec: coopcheck.KernelSpec, snap: WarpScanBatch, rows: Ints) -> Ints:
    """The check each element of blocks ``rows`` is judged by: the scanned items (their bound, where a float sum is
    not exact) and the aggregates."""
    items, initial = (a[rows] for a in _inputs(snap))
    got = np.zeros((len(rows), out_length(spec)), dtype=spec.dtype)
    ids = np.full(got.shape, SCANNED, dtype=np.int64)
    ids[:, spec.threads:] = AGGREGATE
    ids[_judge(spec, items, initial, got)[2]] = BOUND
    return ids


# -- diagnosis ---------------------------------------------------------------------------------------------


def _hypotheses(spec: coopcheck.KernelSpec) -> Iterator[str]:
    """The known wrong implementations that can differ from the contract at ``spec``."""
    if len(spec.block) > 1:
        yield "rank-y-major"
    if straddles(spec):
        yield "warps-straddle"
    yield "mode-swapped"
    if spec.static("seed") == "initial":
        yield "seed-ignored"
        if aggregates(spec):
            yield "aggregate-with-seed"
    if spec.static("op") == "matmul":
        yield "operands-reversed"


def explain(spec: coopcheck.KernelSpec, snap: WarpScanBatch, got: np.ndarray, wrong: Bools, launch: Launch,
            bad: Bools) -> dict[int, tuple[str, ...]]:
    """Block -> the hypotheses whose altered contract its output passes (only blocks with wrong output)."""
    items_all, initial_all = _inputs(snap)

    def predict(at: Ints) -> Iterator[Prediction]:
        for name in _hypotheses(spec):
            want, _, _ = _judge(spec, items_all[at], initial_all[at], got[at], name)
            yield name, want, np.ones(want.shape, dtype=bool), None
        if is_float(spec):  # every item and seed value through an arithmetic move (x + 0)
            want, _, _ = _judge(spec, canonical(items_all[at]), canonical(initial_all[at]), got[at])
            yield "floats-canonicalized", want, np.ones(want.shape, dtype=bool), None

    return matches(got, wrong, bad, predict)


JUDGING = Judging.of_fields(CHECK_NAMES, WHY, DIAGNOSES, input_fields=INPUT_FIELDS, inputs=INPUTS, abi=ABI,
                            out_length=out_length, compare=compare, check_ids=check_ids, explain=explain)
#: Every case's verdict (in case order) from the output and what the launch left in its inputs.
judge = JUDGING.judge


def block_failures(spec: coopcheck.KernelSpec, snap: WarpScanBatch, out: object) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot of
    its inputs taken before the launch; an output off the ABI is one line."""
    return JUDGING.block_failures(spec, snap, out, lambda b: f"seed value {np.asarray(snap.initial)[b]!r}")
