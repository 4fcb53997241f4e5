"""Oracle for block Scan: builds one batched launch's inputs, its expected output, and judges it.

Each case runs once per data pattern of its operator and dtype (:func:`harness.oracles.operands.pattern_names`),
each one block of the launch. A block scans :func:`coopcheck.scan.tiles` tiles; its seed value (the initial value,
or the prefix callback's first running prefix) is the operator's identity or a value drawn like its items. The
expected output is computed for the whole launch at once, by tile index, and judged as
:mod:`harness.oracles.scans` scans and judges.

Worked example (exclusive max, int8, seed initial -5, 2 threads, ipt=2, items [3, -9, 7, 1]): the scanned items
are [-5, 3, 3, 7] and every thread's aggregate is 7 (the seed not among the values it covers).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import coopcheck
import numpy as np
from coopcheck.scan import ALGORITHMS as ALGORITHMS
from coopcheck.scan import MODES, OPERATORS, SEEDS, ScanBatch, check_spec, out_length, tiles
from coopcheck.vocabulary import WARP_SIZE

from harness.cases import Case
from harness.oracles.judging import Bools, Ints, Judging, Prediction, axes_lacking, canonical, matches, thread_ranks
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.operands import is_float, pattern_blocks, pattern_names
from harness.oracles.scans import Result, judged, scan_tiles, seed_values

OPERATION = "block.scan"
INITS = ("none", "identity", "rand")
AXES = {"op": OPERATORS, "mode": MODES, "seed": SEEDS, "init": INITS}

SCANNED, BOUND, AGGREGATE, CALLBACK, INPUTS, ABI = range(6)
CHECK_NAMES = {SCANNED: "scanned", BOUND: "sum-bound", AGGREGATE: "aggregate", CALLBACK: "prefix-callback",
               INPUTS: "inputs-unmodified", ABI: "output-abi"}
CHECKS = frozenset(CHECK_NAMES.values())
OUTPUT_CHECKS = frozenset(CHECK_NAMES[c] for c in (SCANNED, BOUND, AGGREGATE, CALLBACK))
WHY = {SCANNED: "scanned item", BOUND: "sum within its rounding bound", AGGREGATE: "the tile's block aggregate",
       CALLBACK: "the prefix callback's argument or its number of calls"}
INPUT_FIELDS = ("items", "initial")
#: Hypothesis id -> what a detail line says when a failing output equals its output.
DIAGNOSES = {
    "rank-y-major": "rank computed y-major",
    "mode-swapped": "an inclusive scan where exclusive was asked, or the other way round",
    "seed-ignored": "the seed (initial value or the callback's prefix) not applied",
    "prefix-not-carried": "every tile seeded with the initial value: the callback's running prefix not carried",
    "operands-reversed": "the operands of a non-commutative operator swapped (the scan taken last to first)",
    "aggregate-with-seed": "the block aggregate includes the seed",
    "floats-canonicalized": "floats canonicalized",
}


def check_static(spec: coopcheck.KernelSpec) -> None:
    """The family's static rules (:mod:`coopcheck.scan`): what every backend refuses at compile time."""
    check_spec(spec)


def axes_problem(operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
    """A Scan contract names its operators, modes, seeds and seed values."""
    return axes_lacking("a Scan contract", AXES, axes)


def blocks_per_case(spec: coopcheck.KernelSpec) -> int:
    return len(pattern_names(spec))


# -- inputs ------------------------------------------------------------------------------------------------


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    drawn = pattern_blocks(spec, cases, global_seed, tiles(spec) * spec.tile)
    inits = np.array([c["init"] for c in cases])[drawn.case_of_block]
    initial = seed_values(spec, inits, drawn.keys, drawn.pattern_of_block, drawn.names)
    batch = ScanBatch(drawn.items.reshape(-1), initial, spec.tile, tiles(spec))
    return drawn.launch(spec, cases, batch)


def snapshot(batch: ScanBatch) -> ScanBatch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


# -- expected output ---------------------------------------------------------------------------------------


def scan(spec: coopcheck.KernelSpec, items: np.ndarray, initial: np.ndarray, how: str = "",
         mode: str | None = None, seed: str | None = None) -> Result:
    """The expected scanned items of blocks of ``items`` (n, tiles*tile) and seed values ``initial`` (n,), shaped
    (n, tiles, tile); ``mode`` and ``seed`` other than the spec's, and ``how`` a diagnosis to predict instead
    (mode-swapped, seed-ignored, prefix-not-carried, operands-reversed)."""
    x = items.reshape(len(items), tiles(spec), spec.tile)
    return scan_tiles(spec, x, initial, mode or spec.static("mode"), seed or spec.static("seed"), how)

@dataclass(frozen=True)
class _Layout:
    """Where a block's outputs lie in ``dst`` (see :mod:`coopcheck.scan`)."""

    scanned: slice
    aggregates: slice
    calls: slice

    @classmethod
    def of(cls, spec: coopcheck.KernelSpec) -> _Layout:
        n, tile, threads = tiles(spec), spec.tile, spec.threads
        return cls(slice(0, n * tile), slice(n * tile, n * (tile + threads)),
                   slice(n * (tile + threads), n * (tile + threads) + threads))


def _inputs(spec: coopcheck.KernelSpec, snap: ScanBatch) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(snap.items).reshape(snap.n_blocks, snap.tiles * snap.tile), np.asarray(snap.initial)


def _judge(spec: coopcheck.KernelSpec, snap: ScanBatch, got: np.ndarray, how: str = ""
           ) -> tuple[np.ndarray, Bools, Bools]:
    """(want, wrong, bounded) per block and element of ``got`` (n, out), under diagnosis ``how`` or the contract."""
    items, initial = _inputs(spec, snap)
    lay, n, n_tiles, threads = _Layout.of(spec), snap.n_blocks, tiles(spec), spec.threads
    want, wrong, bounded = got.copy(), np.zeros(got.shape, dtype=bool), np.zeros(got.shape, dtype=bool)
    main = scan(spec, items, initial, how)
    w, x, b = judged(spec, got[:, lay.scanned].reshape(main.value.shape), main)
    width = lay.scanned.stop - lay.scanned.start
    want[:, lay.scanned], wrong[:, lay.scanned], bounded[:, lay.scanned] = (a.reshape(n, width) for a in (w, x, b))
    seed = spec.static("seed")
    # a tile's aggregate is the last item of its inclusive scan (without its seed, unless that is the hypothesis)
    inclusive = scan(spec, items, initial, how if how == "operands-reversed" else "", mode="inclusive",
                     seed=None if how == "aggregate-with-seed" else "none")
    per_thread = inclusive.map(lambda a: np.repeat(a[..., -1:], threads, axis=-1))
    aggregates = got[:, lay.aggregates].reshape(n, n_tiles, threads)
    calls = got[:, lay.calls].astype(np.int64)
    if seed == "prefix":  # a thread's argument is judged where it called; thread 0 must call once per tile
        rank = np.arange(threads)
        per_thread = replace(per_thread, defined=per_thread.defined & ((rank == 0) | (calls > 0))[:, None, :])
        calls_want = np.where(rank == 0, n_tiles, np.where(rank < WARP_SIZE, calls, 0))
        calls_want = np.where((rank > 0) & (rank < WARP_SIZE) & (calls != 0) & (calls != n_tiles), n_tiles,
                              calls_want)
    else:
        calls_want = np.zeros(calls.shape, dtype=np.int64)
    w, x, b = judged(spec, aggregates, per_thread)
    width = lay.aggregates.stop - lay.aggregates.start
    want[:, lay.aggregates], wrong[:, lay.aggregates], bounded[:, lay.aggregates] = (a.reshape(n, width)
                                                                                     for a in (w, x, b))
    want[:, lay.calls], wrong[:, lay.calls] = calls_want.astype(got.dtype), calls != calls_want
    return want, wrong, bounded


def compare(spec: coopcheck.KernelSpec, snap: ScanBatch, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, Bools]:
    """(output, expected output, wrong) per block and element: the scanned tiles, the aggregates (with a prefix
    callback, the arguments of the calls) and the callback calls; an element the contract leaves open is what the
    output holds."""
    got = out.reshape(snap.n_blocks, out_length(spec))
    want, wrong, _ = _judge(spec, snap, got)
    return got, want, wrong


def check_ids(spec: coopcheck.KernelSpec, snap: ScanBatch, rows: Ints) -> Ints:
    """The check each element of blocks ``rows`` is judged by: the scanned items (their bound, where a float sum
    is not exact), the aggregates, the prefix callback's arguments and calls."""
    lay = _Layout.of(spec)
    got = np.zeros((len(rows), out_length(spec)), dtype=spec.dtype)
    sub = ScanBatch(_inputs(spec, snap)[0][rows].reshape(-1), np.asarray(snap.initial)[rows], snap.tile, snap.tiles)
    bounded = _judge(spec, sub, got)[2]
    ids = np.full(got.shape, SCANNED, dtype=np.int64)
    ids[:, lay.aggregates] = CALLBACK if spec.static("seed") == "prefix" else AGGREGATE
    ids[:, lay.calls] = CALLBACK
    ids[bounded] = BOUND
    return ids


# -- diagnosis ---------------------------------------------------------------------------------------------


def _hypotheses(spec: coopcheck.KernelSpec) -> Iterator[str]:
    """The known wrong implementations that can differ from the contract at ``spec``."""
    yield "mode-swapped"
    if spec.static("seed") != "none":
        yield "seed-ignored"
    if spec.static("seed") == "prefix":
        yield "prefix-not-carried"
    if spec.static("seed") == "initial":
        yield "aggregate-with-seed"
    if spec.static("op") == "matmul":
        yield "operands-reversed"


def primitive_order(spec: coopcheck.KernelSpec) -> Ints:
    """The ABI slot a primitive that ranks threads y-major sees at each of its tile indices."""
    rank = thread_ranks(spec, True)
    prim = (rank[:, None] * spec.items_per_thread + np.arange(spec.items_per_thread)).reshape(-1)
    order: Ints = np.argsort(prim)
    return order


def explain(spec: coopcheck.KernelSpec, snap: ScanBatch, got: np.ndarray, wrong: Bools, launch: Launch,
            bad: Bools) -> dict[int, tuple[str, ...]]:
    """Block -> the hypotheses whose output its output equals (only blocks with wrong output)."""
    items_all, initial_all = _inputs(spec, snap)

    def predict(at: Ints) -> Iterator[Prediction]:
        sub = ScanBatch(items_all[at].reshape(-1), initial_all[at], snap.tile, snap.tiles)
        for name in _hypotheses(spec):
            want, _, _ = _judge(spec, sub, got[at], name)
            yield name, want, np.ones(want.shape, dtype=bool), None
        if is_float(spec):  # every item and seed value through an arithmetic move (x + 0)
            moved = ScanBatch(canonical(sub.items), canonical(sub.initial), snap.tile, snap.tiles)
            want, _, _ = _judge(spec, moved, got[at])
            yield "floats-canonicalized", want, np.ones(want.shape, dtype=bool), None
        if len(spec.block) > 1:  # the tile taken in a y-major rank order, the results put back in that order
            n, n_tiles = len(at), tiles(spec)
            order = primitive_order(spec)
            permuted = items_all[at].reshape(n, n_tiles, spec.tile)[..., order].reshape(n, n_tiles * spec.tile)
            moved = ScanBatch(permuted.reshape(-1), initial_all[at], snap.tile, snap.tiles)
            lay = _Layout.of(spec)
            scanned = got[at][:, lay.scanned].reshape(n, n_tiles, spec.tile)
            prim = scanned.copy()
            prim[..., :] = scanned[..., order]  # the output as the y-major primitive indexes it
            trial = got[at].copy()
            trial[:, lay.scanned] = prim.reshape(n, n_tiles * spec.tile)
            # the aggregates and the callback's arguments too: a non-commutative operator's differ in that order
            alt, _, _ = _judge(spec, moved, trial)
            back = alt[:, lay.scanned].reshape(n, n_tiles, spec.tile).copy()
            abi = np.empty_like(back)
            abi[..., order] = back
            alt[:, lay.scanned] = abi.reshape(n, n_tiles * spec.tile)
            yield "rank-y-major", alt, np.ones(alt.shape, dtype=bool), None

    return matches(got, wrong, bad, predict)


JUDGING = Judging.of_fields(CHECK_NAMES, WHY, DIAGNOSES, input_fields=INPUT_FIELDS, inputs=INPUTS, abi=ABI,
                            out_length=out_length, compare=compare, check_ids=check_ids, explain=explain)
#: Every case's verdict (in case order) from the output and what the launch left in its inputs.
judge = JUDGING.judge


def block_failures(spec: coopcheck.KernelSpec, snap: ScanBatch, out: object) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot of
    its inputs taken before the launch; an output off the ABI is one line."""
    return JUDGING.block_failures(spec, snap, out, lambda b: f"seed value {np.asarray(snap.initial)[b]!r}")
