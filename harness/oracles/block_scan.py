"""Oracle for block Scan: builds one batched launch's inputs, its expected output, and judges it.

Each case runs once per data pattern of its operator and dtype (:func:`harness.oracles.operands.pattern_names`),
each one block of the launch. A block scans :func:`coopcheck.scan.tiles` tiles; its seed value (the initial value,
or the prefix callback's first running prefix) is the operator's identity or a value drawn like its items. The
expected output is computed for the whole launch at once, by tile index: exact operators by a doubling scan (an
associative operator applied in tile order), float sums in float64 and judged within a rounding bound derived
from the values each item covers (bit for bit where those make every order exact), float min and max by what they
select (the extreme value, bit for bit one of the values covered; a zero of a sign that is among them).

Worked example (exclusive max, int8, seed initial -5, 2 threads, ipt=2, items [3, -9, 7, 1]): the scanned items
are [-5, 3, 3, 7] and every thread's aggregate is 7 (the seed not among the values it covers).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
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
from harness.oracles.launch import block_order
from harness.oracles.operands import extreme, identity, is_float, matmul, of_bits, pattern_names, pattern_values
from harness.oracles.operands import random_bits as random_bits
from harness.oracles.values import mix, raw_view

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


def seed_identity(spec: coopcheck.KernelSpec) -> np.generic:
    """The operator's identity: 0, the highest value (min), the lowest (max), the identity matrix."""
    op = spec.static("op")
    if op in ("min", "max"):
        return extreme(spec, low=op == "max")
    return identity(spec) if op == "matmul" else np.dtype(spec.dtype).type(0)


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    names = pattern_names(spec)
    seed, order = block_order(global_seed, cases, len(names))
    case_of_block, pattern_of_block = order // len(names), order % len(names)
    seeds = np.array([c.seed(global_seed) for c in cases], dtype=np.uint64)[case_of_block]
    inits = np.array([c["init"] for c in cases])[case_of_block]
    with np.errstate(over="ignore"):
        keys = mix(seeds * np.uint64(8) + pattern_of_block.astype(np.uint64))
    length, dtype = tiles(spec) * spec.tile, np.dtype(spec.dtype)
    items = np.empty((len(order), length), dtype=dtype)
    drawn = np.empty(len(order), dtype=dtype)
    r, r2 = random_bits(keys, length, "items"), random_bits(keys, length, "shape")
    first, first2 = random_bits(keys, 1, "initial"), random_bits(keys, 1, "invalid")
    for p, name in enumerate(names):
        rows = pattern_of_block == p
        items[rows] = pattern_values(spec, name, r[rows], r2[rows])
        # a drawn seed is a value like the items (matmul's: any matrix, not the pattern's mostly-identities)
        drawn[rows] = (of_bits(dtype, first[rows]) if spec.static("op") == "matmul"
                       else pattern_values(spec, name, first[rows], first2[rows]))[:, 0]
    initial = np.where(inits == "rand", drawn, seed_identity(spec)).astype(dtype)
    batch = ScanBatch(items.reshape(-1), initial, spec.tile, tiles(spec))
    return Launch(spec, tuple(cases), batch, case_of_block, pattern_of_block, names, seed)


def snapshot(batch: ScanBatch) -> ScanBatch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


# -- expected output ---------------------------------------------------------------------------------------


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


def scan(spec: coopcheck.KernelSpec, items: np.ndarray, initial: np.ndarray, how: str = "",
         mode: str | None = None, seed: str | None = None) -> Result:
    """The expected scanned items of blocks of ``items`` (n, tiles*tile) and seed values ``initial`` (n,), shaped
    (n, tiles, tile); ``mode`` and ``seed`` other than the spec's, and ``how`` a diagnosis to predict instead
    (seed-ignored, prefix-not-carried, operands-reversed)."""
    mode, seed = mode or spec.static("mode"), seed or spec.static("seed")
    if how == "mode-swapped":
        mode = "exclusive" if mode == "inclusive" else "inclusive"
    if how == "seed-ignored":
        seed = "none"
    x = items.reshape(len(items), tiles(spec), spec.tile)
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
            want, _, _ = _judge(spec, moved, trial)
            back = want[:, lay.scanned].reshape(n, n_tiles, spec.tile).copy()
            abi = np.empty_like(back)
            abi[..., order] = back
            alt = got[at].copy()
            alt[:, lay.scanned] = abi.reshape(n, n_tiles * spec.tile)
            defined = np.zeros(alt.shape, dtype=bool)
            defined[:, lay.scanned] = True
            yield "rank-y-major", alt, defined, None

    return matches(got, wrong, bad, predict)


JUDGING = Judging.of_fields(CHECK_NAMES, WHY, DIAGNOSES, input_fields=INPUT_FIELDS, inputs=INPUTS, abi=ABI,
                            out_length=out_length, compare=compare, check_ids=check_ids, explain=explain)
#: Every case's verdict (in case order) from the output and what the launch left in its inputs.
judge = JUDGING.judge


def block_failures(spec: coopcheck.KernelSpec, snap: ScanBatch, out: object) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot of
    its inputs taken before the launch; an output off the ABI is one line."""
    return JUDGING.block_failures(spec, snap, out, lambda b: f"seed value {np.asarray(snap.initial)[b]!r}")
