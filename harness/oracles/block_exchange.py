"""Oracle for block Exchange: builds one batched launch's inputs, its expected output, and judges it.

Each case runs once per data pattern (:mod:`harness.oracles.values`), each one block of the launch. A block's
items carry one code per slot, so an item moved to another slot, lost or doubled shows in some pattern; its
ranks (and flags) come from its case's seed and ``ranks`` pattern, never from the launch. The expected output
of every block is one gather (``items[b, source[b, slot]]``); per-element detail and diagnosis are built only
for failing cases.

Worked example (scatter_to_striped_guarded, 2 threads, ipt=2, ranks by slot [3, -1, 0, 2]): the item of slot 1
is skipped, so no item goes to tile index 1; striped, rank 0 holds tile indices [0, 2] = [items[2], items[3]]
and rank 1 holds [1, 3] = [unspecified, items[0]].
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import coopcheck
import numpy as np
import numpy.typing as npt
from coopcheck.exchange import (
    METHODS,
    OUTPUTS,
    SCATTER,
    SLICING,
    WARP_METHODS,
    ExchangeBatch,
    check_spec,
    out_length,
    warp_lanes,
)
from coopcheck.vocabulary import WARP_SIZE

from harness.cases import Case
from harness.oracles.judging import Bools, Ints, Judging, Prediction, axes_lacking, canonical, matches, thread_ranks
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.launch import block_order
from harness.oracles.values import fill, mix, patterns, raw_view

OPERATION = "block.exchange"
#: The rank patterns (the ``ranks`` case axis): none for the methods without ranks; permutations; and for the
#: guarded and flagged scatters, ones that skip about a third (``partial``) or seven eighths (``sparse``) of
#: the items.
RANKS = ("none", "identity", "reverse", "random", "partial", "sparse")
SKIPPED = {"partial": 1 / 3, "sparse": 7 / 8}
ALGORITHMS = METHODS
AXES = {"slicing": SLICING, "output": OUTPUTS, "ranks": RANKS}

EXCHANGED, KEPT, INPUTS, ABI = range(4)
CHECK_NAMES = {EXCHANGED: "items-exchanged", KEPT: "input-kept", INPUTS: "inputs-unmodified", ABI: "output-abi"}
CHECKS = frozenset(CHECK_NAMES.values())
OUTPUT_CHECKS = frozenset(CHECK_NAMES[c] for c in (EXCHANGED, KEPT))
WHY = {EXCHANGED: "exchanged item", KEPT: "input item as it was"}
INPUT_FIELDS = ("items", "ranks", "flags")
#: The arrangement each side of a method is in (a scatter's input side is its ranks).
SIDES = {
    "striped_to_blocked": ("striped", "blocked"),
    "blocked_to_striped": ("blocked", "striped"),
    "warp_striped_to_blocked": ("warp-striped", "blocked"),
    "blocked_to_warp_striped": ("blocked", "warp-striped"),
    "scatter_to_blocked": ("ranks", "blocked"),
    "scatter_to_striped": ("ranks", "striped"),
    "scatter_to_striped_guarded": ("ranks", "striped"),
    "scatter_to_striped_flagged": ("ranks", "striped"),
}
#: Hypothesis id -> what a detail line says when a failing output equals its output.
DIAGNOSES = {
    "rank-y-major": "rank computed y-major",
    "direction-swapped": "exchanged the other way (to the input's arrangement)",
    "warp-striped-as-striped": "warp-striped taken as block-striped",
    "ranks-inverted": "ranks applied inverted (each slot gathers from the tile index its rank names)",
    "scatter-arrangement-swapped": "scattered to the other arrangement (blocked for striped or the reverse)",
    "negative-ranks-written": "skipped items written too (a negative rank wraps to rank + tile)",
    "flags-ignored": "unflagged items scattered too",
    "nothing-exchanged": "items left where they were",
    "floats-canonicalized": "floats canonicalized",
}


def check_static(spec: coopcheck.KernelSpec) -> None:
    """The family's static rules (:mod:`coopcheck.exchange`): what every backend refuses at compile time."""
    check_spec(spec)


def axes_problem(operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
    """An Exchange contract names the method's time-slicing, its output and its rank patterns."""
    return axes_lacking("an Exchange contract", AXES, axes)


def blocks_per_case(spec: coopcheck.KernelSpec) -> int:
    return len(patterns(spec.dtype, spec.tile))


def arrangement(spec: coopcheck.KernelSpec, name: str, y_major: bool = False) -> Ints:
    """The tile index each slot (rank*ipt + i) holds in arrangement ``name`` (see :mod:`coopcheck.exchange`).

    >>> arrangement(coopcheck.KernelSpec(OPERATION, "int8", (2,), 2, "striped_to_blocked"), "striped").tolist()
    [0, 2, 1, 3]
    """
    ipt, threads = spec.items_per_thread, spec.threads
    rank, item = thread_ranks(spec, y_major)[:, None], np.arange(ipt)[None, :]
    if name == "blocked":
        index = rank * ipt + item
    elif name == "striped":
        index = rank + item * threads
    else:
        index = (rank // WARP_SIZE) * WARP_SIZE * ipt + item * warp_lanes(threads) + rank % WARP_SIZE
    return index.reshape(-1).astype(np.int64)


# -- inputs ------------------------------------------------------------------------------------------------


def _slot_draws(seeds: npt.NDArray[np.uint64], pattern: Ints, tile: int, salt: int) -> npt.NDArray[np.uint64]:
    """Random 64-bit draws per (block, slot), a function of the block's case seed, pattern and ``salt`` only."""
    key = mix(seeds * np.uint64(8) + pattern.astype(np.uint64))
    with np.errstate(over="ignore"):
        slot = np.arange(tile, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(salt)
    return mix(key[:, None] ^ slot[None, :])


def rank_inputs(spec: coopcheck.KernelSpec, kinds: Sequence[str], seeds: npt.NDArray[np.uint64],
                pattern: Ints) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """(ranks, flags) of every block, slot by slot. A skipped item's rank points at a tile index that another
    item goes to (those first, then the ones no item goes to): guarded, it is that index - tile (negative);
    flagged, that index itself with flag 0. So an implementation that writes a skipped item clobbers a judged
    slot. Flags of scattered items are 1, 2 or 3 (nonzero is the ABI's true)."""
    n, tile = len(seeds), spec.tile
    kind = np.array(kinds)
    slots = np.broadcast_to(np.arange(tile, dtype=np.int64), (n, tile))
    perm = np.argsort(_slot_draws(seeds, pattern, tile, 1), axis=1, kind="stable").astype(np.int64)
    ranks = np.where((kind == "identity")[:, None], slots, np.where((kind == "reverse")[:, None], tile - 1 - slots,
                                                                    perm))
    draw = _slot_draws(seeds, pattern, tile, 2)
    share = np.array([SKIPPED.get(k, 0.0) for k in kinds])
    skipped = (draw % np.uint64(1 << 20)).astype(np.float64) < share[:, None] * (1 << 20)
    flags = (draw >> np.uint64(32)) % np.uint64(3) + np.uint64(1)
    received = np.zeros((n, tile), dtype=bool)
    rows = np.arange(n)[:, None]
    received[rows, perm] = ~skipped
    # Tile indices in target order: the received ones first, each group in a random order.
    order = np.argsort(np.where(received, 0, 1 << 40) + (_slot_draws(seeds, pattern, tile, 3) >> np.uint64(24))
                       .astype(np.int64), axis=1, kind="stable")
    nth = np.cumsum(skipped, axis=1) - 1
    target = order[rows, np.clip(nth, 0, tile - 1)]
    guarded = spec.algorithm == "scatter_to_striped_guarded"
    ranks = np.where(skipped, target - tile if guarded else target, ranks)
    flags_out = np.where(skipped & (spec.algorithm == "scatter_to_striped_flagged"), 0, flags.astype(np.int64))
    return ranks.astype(np.int32), flags_out.astype(np.int32)


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    names = patterns(spec.dtype, spec.tile)
    seed, order = block_order(global_seed, cases, len(names))
    case_of_block, pattern_of_block = order // len(names), order % len(names)
    seeds = np.array([c.seed(global_seed) for c in cases], dtype=np.uint64)[case_of_block]
    items = fill(spec.dtype, pattern_of_block, "src", seeds, np.arange(spec.tile, dtype=np.int64), names)
    kinds = [str(cases[int(c)]["ranks"]) for c in case_of_block]
    ranks, flags = rank_inputs(spec, kinds, seeds, pattern_of_block)
    batch = ExchangeBatch(items.reshape(-1), ranks.reshape(-1), flags.reshape(-1), spec.tile)
    return Launch(spec, tuple(cases), batch, case_of_block, pattern_of_block, names, seed)


def snapshot(batch: ExchangeBatch) -> ExchangeBatch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


# -- expected output ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    """What the expected output is a function of, besides the inputs (a diagnosis varies them)."""

    source: str  # the input side's arrangement, or "ranks"
    target: str  # the output side's arrangement
    y_major: bool = False
    inverted: bool = False  # a scatter's ranks read as where each output slot takes its item from
    ghosts: bool = False  # the items a partial scatter skips written too, after the others
    nothing: bool = False  # every slot keeps its own item
    moved: Callable[[np.ndarray], np.ndarray] | None = None  # what happens to a moved item


def params_of(spec: coopcheck.KernelSpec) -> Params:
    source, target = SIDES[spec.algorithm]
    return Params(source, target)


def scattered(spec: coopcheck.KernelSpec, ranks: Ints, flags: Ints) -> Bools:
    """Which slots' items a scatter moves: guarded, those of rank >= 0; flagged, those flagged; else all."""
    if spec.algorithm == "scatter_to_striped_guarded":
        return np.asarray(ranks >= 0)
    if spec.algorithm == "scatter_to_striped_flagged":
        return np.asarray(flags != 0)
    return np.ones(ranks.shape, dtype=bool)


def sources(spec: coopcheck.KernelSpec, snap: ExchangeBatch, p: Params, rows: Ints) -> Ints:
    """The input slot whose item each output slot of blocks ``rows`` holds (-1: unspecified)."""
    tile = spec.tile
    held = arrangement(spec, p.target, p.y_major)  # the tile index each output slot holds
    if p.nothing:
        return np.broadcast_to(np.arange(tile, dtype=np.int64), (len(rows), tile))
    if p.source != "ranks":
        slot_of = np.empty(tile, dtype=np.int64)
        slot_of[arrangement(spec, p.source, p.y_major)] = np.arange(tile)
        return np.broadcast_to(slot_of[held], (len(rows), tile))
    ranks = np.asarray(snap.ranks).reshape(-1, tile)[rows].astype(np.int64)
    if p.inverted:  # output slot o takes the item that the output arrangement puts at tile index ranks[o]
        slot_of_held = np.argsort(held)
        inside = (ranks >= 0) & (ranks < tile)
        return np.where(inside, slot_of_held[np.clip(ranks, 0, tile - 1)], -1)
    moved = scattered(spec, ranks, np.asarray(snap.flags).reshape(-1, tile)[rows].astype(np.int64))
    slot_of_index = np.full((len(rows), tile), -1, dtype=np.int64)
    for which in (moved, ~moved) if p.ghosts else (moved,):
        r, s = np.nonzero(which)
        index = ranks[r, s] % tile if p.ghosts else ranks[r, s]  # a negative rank wraps as a Python index does
        ok = (index >= 0) & (index < tile)
        slot_of_index[r[ok], index[ok]] = s[ok]
    return slot_of_index[:, held]


def expected(spec: coopcheck.KernelSpec, snap: ExchangeBatch, p: Params,
             rows: Ints | None = None) -> tuple[np.ndarray, Bools]:
    """(expected output, which of its elements the contract specifies) of blocks ``rows`` (default: all), one
    row each, from the pre-launch snapshot: the exchanged items, then with a separate output the input items."""
    rows = np.arange(snap.n_blocks) if rows is None else rows
    items = np.asarray(snap.items).reshape(-1, spec.tile)[rows]
    source = sources(spec, snap, p, rows)
    out = np.take_along_axis(items, np.clip(source, 0, None), axis=1)
    out = p.moved(out) if p.moved else out
    defined = source >= 0
    if spec.static("output") == "separate":
        out, defined = np.hstack([out, items]), np.hstack([defined, np.ones(items.shape, dtype=bool)])
    return out, defined


def check_ids(spec: coopcheck.KernelSpec, snap: ExchangeBatch, rows: Ints) -> Ints:
    """The check each element of blocks ``rows`` is judged by: the exchanged items, then the input kept."""
    checks = np.full((len(rows), out_length(spec)), EXCHANGED, dtype=np.int64)
    checks[:, spec.tile:] = KEPT
    return checks


def compare(spec: coopcheck.KernelSpec, snap: ExchangeBatch, out: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                   Bools]:
    """(output, expected output, wrong) per block and element: bit-exact where the contract specifies it."""
    got = out.reshape(snap.n_blocks, -1)
    want, defined = expected(spec, snap, params_of(spec))
    wrong = (raw_view(np.ascontiguousarray(got)) != raw_view(np.ascontiguousarray(want))) & defined
    return got, want, wrong


# -- diagnosis ---------------------------------------------------------------------------------------------


def _variants(spec: coopcheck.KernelSpec) -> Iterator[tuple[str, Params, bool]]:
    """(diagnosis, its parameters, strict): a strict hypothesis predicts every specified element; the others
    (a race between a skipped item and the item it clobbers) only what the wrong elements hold."""
    p = params_of(spec)
    if len(spec.block) > 1:
        yield "rank-y-major", replace(p, y_major=True), True
    if p.source != "ranks":
        yield "direction-swapped", replace(p, source=p.target, target=p.source), True
    if spec.algorithm in WARP_METHODS:
        swap = {"warp-striped": "striped"}
        yield "warp-striped-as-striped", replace(p, source=swap.get(p.source, p.source),
                                                 target=swap.get(p.target, p.target)), True
    if spec.algorithm in SCATTER:
        yield "ranks-inverted", replace(p, inverted=True), True
        yield "scatter-arrangement-swapped", replace(p, target="striped" if p.target == "blocked" else "blocked"), True
    if spec.algorithm == "scatter_to_striped_guarded":
        yield "negative-ranks-written", replace(p, ghosts=True), False
    if spec.algorithm == "scatter_to_striped_flagged":
        yield "flags-ignored", replace(p, ghosts=True), False
    yield "nothing-exchanged", replace(p, nothing=True), True
    if np.dtype(spec.dtype).kind == "f":
        yield "floats-canonicalized", replace(p, moved=canonical), True


def explain(spec: coopcheck.KernelSpec, snap: ExchangeBatch, got: np.ndarray, wrong: Bools, launch: Launch,
            bad: Bools) -> dict[int, tuple[str, ...]]:
    """Block -> the hypotheses that explain its output (only blocks with wrong output)."""
    def predict(at: Ints) -> Iterator[Prediction]:
        _, judged = expected(spec, snap, params_of(spec), at)
        for name, params, strict in _variants(spec):
            yield (name, *expected(spec, snap, params, at), judged if strict else None)

    return matches(got, wrong, bad, predict)


JUDGING = Judging.of_fields(CHECK_NAMES, WHY, DIAGNOSES, input_fields=INPUT_FIELDS, inputs=INPUTS, abi=ABI,
                            out_length=out_length, compare=compare, check_ids=check_ids, explain=explain)
#: Every case's verdict (in case order) from the output and what the launch left in its inputs.
judge = JUDGING.judge


def block_failures(spec: coopcheck.KernelSpec, snap: ExchangeBatch, out: object) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot of
    its inputs taken before the launch; an output off the ABI is one line."""
    def describe(b: int) -> str:
        ranks, flags = (np.asarray(a).reshape(-1, spec.tile)[b] for a in (snap.ranks, snap.flags))
        return f"{int((ranks < 0).sum())} negative ranks, {int((flags == 0).sum())} unflagged"

    return JUDGING.block_failures(spec, snap, out, describe)
