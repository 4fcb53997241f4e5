"""Oracle for block Shuffle: builds one batched launch's inputs, its expected output, and judges it.

Each case runs once per data pattern (:mod:`harness.oracles.values`), each one block of the launch. A block's
items and its prior values (the separate output's and the block item's starting values) carry one code per
element, so an item moved from the wrong thread, an output written where it should be left alone, or a block
item taken from the wrong end shows in some pattern; the distance comes from the case's ``distance`` name and
kernel point, never from the launch. The expected output of every block is one gather from its items and prior
values; per-element detail and diagnosis are built only for failing cases.

Worked example (offset, 4 threads, distance -1, separate output, items [10, 11, 12, 13], prior [20, 21, ...]):
thread 0's source (-1) lies outside the block, so the output is [20, 10, 11, 12], then the input [10, 11, 12, 13].
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import coopcheck
import numpy as np
from coopcheck.shuffle import (
    BLOCK_ITEM,
    METHODS,
    OUTPUTS,
    SCALAR,
    SHIFTS,
    ShuffleBatch,
    check_spec,
    distance_problem,
    out_length,
)
from coopcheck.vocabulary import WARP_SIZE

from harness.cases import Case
from harness.oracles.judging import Bools, Ints, Judging, Prediction, axes_lacking, canonical, matches, thread_ranks
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.launch import block_order
from harness.oracles.values import fill, patterns, raw_view

OPERATION = "block.shuffle"
#: The distance names (the ``distance`` case axis): none for up and down; a fixed value, a warp (32), the last
#: thread's (threads - 1), each maybe negated; rand, one drawn per kernel point in the method's range.
DISTANCES = ("none", "0", "1", "-1", "warp", "-warp", "last", "-last", "rand")
ALGORITHMS = METHODS
AXES = {"output": OUTPUTS, "distance": DISTANCES}

SHUFFLED, UNTOUCHED, KEPT, BLOCK, INPUTS, ABI = range(6)
CHECK_NAMES = {SHUFFLED: "items-shuffled", UNTOUCHED: "untouched-kept", KEPT: "input-kept", BLOCK: "block-item",
               INPUTS: "inputs-unmodified", ABI: "output-abi"}
CHECKS = frozenset(CHECK_NAMES.values())
OUTPUT_CHECKS = frozenset(CHECK_NAMES[c] for c in (SHUFFLED, UNTOUCHED, KEPT, BLOCK))
WHY = {SHUFFLED: "shuffled item", UNTOUCHED: "output left as it was", KEPT: "input item as it was",
       BLOCK: "block item"}
INPUT_FIELDS = ("items", "prior", "distance")
#: Hypothesis id -> what a detail line says when a failing output equals its output.
DIAGNOSES = {
    "rank-y-major": "rank computed y-major",
    "distance-negated": "distance taken with the other sign",
    "offset-wrapped": "offset wrapped around the block (a source outside it taken mod threads)",
    "rotate-unwrapped": "rotate without the wrap (a source past the last thread left as it was)",
    "carry-own-thread": "the item carried across threads taken from the thread itself, not its neighbour",
    "shift-rotated": "the tile's edge item shifted in from the other end (a rotation, not a shift)",
    "untouched-overwritten": "an output left as it was takes the thread's own input item",
    "direction-swapped": "shifted the other way (up as down, down as up)",
    "block-item-from-wrong-thread": "block item taken from the other end of the block",
    "nothing-shuffled": "every output holds the thread's own input item",
    "floats-canonicalized": "floats canonicalized",
}
_SWAPPED = {"up": "down", "down": "up", "up_suffix": "down_prefix", "down_prefix": "up_suffix"}


def check_static(spec: coopcheck.KernelSpec) -> None:
    """The family's static rules (:mod:`coopcheck.shuffle`): what every backend refuses at compile time."""
    check_spec(spec)


def axes_problem(operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
    """A Shuffle contract names the call's output and the distance names."""
    return axes_lacking("a Shuffle contract", AXES, axes)


def n_codes(spec: coopcheck.KernelSpec) -> int:
    """Distinct elements of a block: its items, the separate output's prior values, the block items' prior."""
    return 2 * spec.tile + spec.threads


def blocks_per_case(spec: coopcheck.KernelSpec) -> int:
    return len(patterns(spec.dtype, n_codes(spec)))


def distance_value(name: str, spec: coopcheck.KernelSpec, point_key: str) -> int:
    """The distance a case's ``distance`` name has at its kernel point (``rand`` is drawn from the point, so every
    backend gets the same); a contract whose [[only]] tables let a name leave the method's range is refused.

    >>> spec = coopcheck.KernelSpec(OPERATION, "int8", (100,), 1, "offset", variant=(("output", "inplace"),))
    >>> [distance_value(n, spec, "k") for n in ("0", "-1", "warp", "-last")]
    [0, -1, 32, -99]
    """
    if name == "none":
        return 0
    threads = spec.threads
    base = name.removeprefix("-")
    if base == "rand":
        draw = int.from_bytes(hashlib.sha256(f"{point_key}:distance".encode()).digest()[:8], "little")
        value = draw % (2 * threads - 1) - (threads - 1) if spec.algorithm == "offset" else 1 + draw % (threads - 1)
    else:
        value = {"warp": WARP_SIZE, "last": threads - 1}[base] if base in ("warp", "last") else int(base)
        value = -value if name.startswith("-") else value
    if distance_problem(spec.algorithm, value, threads) is not None:
        raise ValueError(f"{point_key}: distance={name} is {value}, outside {spec.algorithm}'s range on {threads} "
                         "threads (the contract's [[only]] tables must leave it out)")
    return value


# -- inputs ------------------------------------------------------------------------------------------------


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    names = patterns(spec.dtype, n_codes(spec))
    seed, order = block_order(global_seed, cases, len(names))
    case_of_block, pattern_of_block = order // len(names), order % len(names)
    seeds = np.array([c.seed(global_seed) for c in cases], dtype=np.uint64)[case_of_block]
    tile, threads = spec.tile, spec.threads
    items = fill(spec.dtype, pattern_of_block, "src", seeds, np.arange(tile, dtype=np.int64), names)
    prior = fill(spec.dtype, pattern_of_block, "sentinel", seeds, tile + np.arange(tile + threads, dtype=np.int64),
                 names)
    distance = np.array([distance_value(str(c["distance"]), spec, c.point_key) for c in cases],
                        dtype=np.int32)[case_of_block]
    batch = ShuffleBatch(items.reshape(-1), prior.reshape(-1), distance, tile)
    return Launch(spec, tuple(cases), batch, case_of_block, pattern_of_block, names, seed)


def snapshot(batch: ShuffleBatch) -> ShuffleBatch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


# -- expected output ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    """What the expected output is a function of, besides the inputs (a diagnosis varies them)."""

    method: str
    sign: int = 1  # -1: the distance negated
    wrap: bool | None = None  # whether a source outside the block wraps (None: the method's own: rotate's)
    y_major: bool = False
    carry_own: bool = False  # up/down's item across threads taken from the thread's own other end
    edge_rotated: bool = False  # up/down's edge slot takes the item at the tile's other end
    untouched_own: bool = False  # an output left alone takes the thread's own item (also with a separate output)
    other_end: bool = False  # the block item taken from the other end's thread
    nothing: bool = False  # every output slot takes the thread's own item
    moved: Callable[[np.ndarray], np.ndarray] | None = None  # what happens to a moved item


def params_of(spec: coopcheck.KernelSpec) -> Params:
    return Params(spec.algorithm)


def primitive_slots(spec: coopcheck.KernelSpec, y_major: bool) -> Ints:
    """The tile index each ABI slot (rank*ipt + i) has as the primitive sees it (its rank y-major or not)."""
    rank = thread_ranks(spec, y_major)
    return (rank[:, None] * spec.items_per_thread + np.arange(spec.items_per_thread)).reshape(-1)


def _sources(spec: coopcheck.KernelSpec, p: Params, distance: Ints) -> Ints:
    """Per block (one distance each) and primitive tile index: the primitive tile index whose input item it
    takes, or -1 where the call leaves it as it was."""
    tile, threads, ipt = spec.tile, spec.threads, spec.items_per_thread
    t = np.broadcast_to(np.arange(tile, dtype=np.int64), (len(distance), tile))
    if p.nothing:
        return t.copy()
    if p.method in SCALAR:
        src = t + p.sign * distance[:, None]
        wrap = p.method == "rotate" if p.wrap is None else p.wrap
        if wrap:
            return src % threads
        return np.where((src >= 0) & (src < threads), src, -1)
    up = p.method in ("up", "up_suffix")
    src = t - 1 if up else t + 1
    if p.carry_own:
        carried = t % ipt == (0 if up else ipt - 1)
        src = np.where(carried, t + (ipt - 1 if up else 1 - ipt), src)
    edge = t == (0 if up else tile - 1)
    return np.where(edge, (tile - 1 if up else 0) if p.edge_rotated else -1, src)


def _block_source(spec: coopcheck.KernelSpec, p: Params) -> int:
    """The primitive tile index of the block item: the last thread's last item (up_suffix), thread 0's first."""
    last, first_of_last = spec.tile - 1, (spec.threads - 1) * spec.items_per_thread
    if p.method == "up_suffix":
        return spec.items_per_thread - 1 if p.other_end else last
    return first_of_last if p.other_end else 0


def layout(spec: coopcheck.KernelSpec, snap: ShuffleBatch, p: Params, rows: Ints) -> tuple[Ints, Ints]:
    """(source, check) per element of ``dst`` of blocks ``rows``: the source indexes the block's pool, its items
    then its prior values (separate output, then block items); the check is the one that element is judged by."""
    tile, threads = spec.tile, spec.threads
    prim = primitive_slots(spec, p.y_major)  # ABI slot -> primitive tile index
    abi = np.argsort(prim)  # primitive tile index -> ABI slot
    distance = np.asarray(snap.distance).astype(np.int64)[rows]
    src = _sources(spec, p, distance)[:, prim]
    moved = src >= 0
    inplace = spec.static("output") == "inplace"
    own = np.arange(tile, dtype=np.int64)
    left = own if inplace or p.untouched_own else tile + own
    source = [np.where(moved, abi[np.clip(src, 0, None)], left[None, :])]
    check = [np.where(moved, SHUFFLED, UNTOUCHED)]
    if not inplace:
        source.append(np.broadcast_to(own, (len(rows), tile)))
        check.append(np.full((len(rows), tile), KEPT))
    if spec.algorithm in BLOCK_ITEM:
        source.append(np.full((len(rows), threads), abi[_block_source(spec, p)]))
        check.append(np.full((len(rows), threads), BLOCK))
    return np.hstack(source), np.hstack(check).astype(np.int64)


def expected(spec: coopcheck.KernelSpec, snap: ShuffleBatch, p: Params, rows: Ints | None = None) -> np.ndarray:
    """The expected ``dst`` of blocks ``rows`` (default: all), one row each, from the pre-launch snapshot."""
    rows = np.arange(snap.n_blocks) if rows is None else rows
    items = np.asarray(snap.items).reshape(-1, spec.tile)[rows]
    pool = np.hstack([items, np.asarray(snap.prior).reshape(-1, spec.tile + spec.threads)[rows]])
    source, check = layout(spec, snap, p, rows)
    out = np.take_along_axis(pool, source, axis=1)
    if p.moved:
        moved = (check == SHUFFLED) | (check == BLOCK)
        out = np.where(moved, p.moved(out), out)
    return out


def check_ids(spec: coopcheck.KernelSpec, snap: ShuffleBatch, rows: Ints) -> Ints:
    """The check each element of blocks ``rows`` is judged by (the correct call's: shuffled or left alone)."""
    return layout(spec, snap, params_of(spec), rows)[1]


def compare(spec: coopcheck.KernelSpec, snap: ShuffleBatch, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, Bools]:
    """(output, expected output, wrong) per block and element: bit-exact everywhere (the contract specifies
    every element)."""
    got = out.reshape(snap.n_blocks, -1)
    want = expected(spec, snap, params_of(spec))
    wrong = raw_view(np.ascontiguousarray(got)) != raw_view(np.ascontiguousarray(want))
    return got, want, wrong


# -- diagnosis ---------------------------------------------------------------------------------------------


def _variants(spec: coopcheck.KernelSpec) -> Iterator[tuple[str, Params]]:
    """(diagnosis, its parameters): each predicts every element of the output."""
    p = params_of(spec)
    if len(spec.block) > 1:
        yield "rank-y-major", replace(p, y_major=True)
    if spec.algorithm in SCALAR:
        yield "distance-negated", replace(p, sign=-1)
        yield ("offset-wrapped", replace(p, wrap=True)) if spec.algorithm == "offset" else \
            ("rotate-unwrapped", replace(p, wrap=False))
    if spec.algorithm in SHIFTS:
        yield "direction-swapped", replace(p, method=_SWAPPED[spec.algorithm])
        yield "shift-rotated", replace(p, edge_rotated=True)
        yield "carry-own-thread", replace(p, carry_own=True)
    if spec.algorithm in BLOCK_ITEM:
        yield "block-item-from-wrong-thread", replace(p, other_end=True)
    if spec.static("output") == "separate":
        yield "untouched-overwritten", replace(p, untouched_own=True)
    yield "nothing-shuffled", replace(p, nothing=True)
    if np.dtype(spec.dtype).kind == "f":
        yield "floats-canonicalized", replace(p, moved=canonical)


def explain(spec: coopcheck.KernelSpec, snap: ShuffleBatch, got: np.ndarray, wrong: Bools, launch: Launch,
            bad: Bools) -> dict[int, tuple[str, ...]]:
    """Block -> the hypotheses whose whole output its output equals (only blocks with wrong output)."""
    def predict(at: Ints) -> Iterator[Prediction]:
        everything = np.ones((len(at), out_length(spec)), dtype=bool)
        for name, params in _variants(spec):
            yield name, expected(spec, snap, params, at), everything, everything

    return matches(got, wrong, bad, predict)


JUDGING = Judging.of_fields(CHECK_NAMES, WHY, DIAGNOSES, input_fields=INPUT_FIELDS, inputs=INPUTS, abi=ABI,
                            out_length=out_length, compare=compare, check_ids=check_ids, explain=explain)
#: Every case's verdict (in case order) from the output and what the launch left in its inputs.
judge = JUDGING.judge


def block_failures(spec: coopcheck.KernelSpec, snap: ShuffleBatch, out: object) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot of
    its inputs taken before the launch; an output off the ABI is one line."""
    return JUDGING.block_failures(spec, snap, out, lambda b: f"distance {int(np.asarray(snap.distance)[b])}")
