"""Diagnosis of a failing Load/Store block: which known wrong implementation produced exactly its output.

Each hypothesis varies the oracle's own parameters (the rank order, the arrangement, valid_items, the
offset, what happens to a moved item, which threads take part) and recomputes the whole launch's expected
output at once; a failing block whose output equals a variant's bit for bit is explained by it. The
contract's rules name the hypotheses they explain (``matches``), so a failure names those rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import coopcheck
import numpy as np
import numpy.typing as npt
from coopcheck.vocabulary import WARP_SIZE

from harness.oracles.judging import canonical
from harness.oracles.values import raw_view

if TYPE_CHECKING:
    from harness.oracles.block_load_store import Batch, Launch, Params

#: Hypothesis id -> what a detail line says when a failing output equals its output.
DIAGNOSES = {
    "rank-y-major": "rank computed y-major",
    "striped-as-blocked": "striped read as blocked",
    "blocked-as-striped": "blocked read as striped",
    "offset-ignored": "offset ignored",
    "offset-in-bytes": "offset taken in bytes",
    "shifted-by-one": "items shifted by one",
    "other-block-offset": "another block's offset",
    "valid-off-by-one": "valid_items off by one",
    "valid-ignored": "valid_items ignored (whole tile)",
    "past-valid": "items past valid_items moved",
    "other-block-valid": "another block's valid_items",
    "high-bits-dropped": "high bits dropped",
    "floats-canonicalized": "floats canonicalized",
    "oob-when-absent": "oob_default applied without one",
    "oob-ignored": "oob_default ignored",
    "skipped-thread": "a skipped thread",
    "skipped-warp": "a skipped warp",
}
Variant = tuple["Params", npt.NDArray[np.bool_]]  # (parameters, blocks it differs in)
#: A hypothesis judged straight from the failing blocks' outputs: the blocks it explains.
Matcher = Callable[[], npt.NDArray[np.int64]]


@dataclass(frozen=True)
class _Failing:
    """The failing blocks a diagnosis looks at, their output bits, and the bits a whole-tile move gives them: the
    output several hypotheses compare with (valid_items ignored, another block's, past it), computed once."""

    at: npt.NDArray[np.int64]
    got: np.ndarray
    whole: np.ndarray

    @classmethod
    def of(cls, spec: coopcheck.KernelSpec, snap: Batch, p: Params, got_raw: np.ndarray,
           blocks: npt.NDArray[np.bool_]) -> _Failing:
        from harness.oracles.block_load_store import expected

        at = np.flatnonzero(blocks)
        whole = expected(spec, snap, replace(p, valid=np.full_like(p.valid, spec.tile)), at)
        return cls(at, got_raw[at], raw_view(np.ascontiguousarray(whole)))


def _variants(spec: coopcheck.KernelSpec, snap: Batch, p: Params,
              failing: _Failing) -> Iterator[tuple[str, Variant | Matcher]]:
    from harness.oracles.block_load_store import tile_index

    everywhere = np.ones(len(p.valid), dtype=bool)
    if len(spec.block) > 1:
        yield "rank-y-major", (replace(p, idx=tile_index(spec, y_major=True)), everywhere)
    if spec.algorithm == "striped":
        yield "striped-as-blocked", (replace(p, idx=tile_index(spec, algorithm="direct")), everywhere)
    else:
        yield "blocked-as-striped", (replace(p, idx=tile_index(spec, algorithm="striped")), everywhere)
    yield "offset-ignored", (replace(p, offset=np.zeros_like(p.offset)), p.offset != 0)
    itemsize = np.dtype(spec.dtype).itemsize
    if itemsize > 1:
        yield "offset-in-bytes", (replace(p, offset=p.offset // itemsize), p.offset != 0)
    for step in (1, -1):
        yield "shifted-by-one", (replace(p, offset=p.offset + step), p.offset + step >= 0)
    for other in np.unique(p.offset):
        yield "other-block-offset", (replace(p, offset=np.full_like(p.offset, other)), p.offset != other)
    for step in (1, -1):
        off = np.clip(p.valid + step, 0, spec.tile)
        yield "valid-off-by-one", (replace(p, valid=off), off != p.valid)
    yield "valid-ignored", lambda: failing.at[(failing.whole == failing.got).all(axis=1)
                                              & (p.valid[failing.at] != spec.tile)]
    yield "other-block-valid", lambda: _other_valid(spec, snap, p, failing)
    bits = itemsize * 8
    for keep in sorted({bits - 1, bits - 2, bits // 2, *(k for k in (8, 16, 32) if k < bits)}):
        yield "high-bits-dropped", (replace(p, moved=_low_bits(keep)), everywhere)
    if np.dtype(spec.dtype).kind == "f":
        yield "floats-canonicalized", (replace(p, moved=canonical), everywhere)
    if isinstance(snap, coopcheck.LoadBatch):
        yield "oob-when-absent", (replace(p, has_oob=np.ones_like(p.has_oob)), ~p.has_oob)
        yield "oob-ignored", (replace(p, has_oob=np.zeros_like(p.has_oob)), p.has_oob)


def _low_bits(keep: int) -> Callable[[np.ndarray], np.ndarray]:
    def moved(items: np.ndarray) -> np.ndarray:
        raw = raw_view(np.ascontiguousarray(items))
        return (raw & raw.dtype.type((1 << keep) - 1)).view(items.dtype)  # type: ignore[no-any-return]
    return moved


def explain(spec: coopcheck.KernelSpec, snap: Batch, got: np.ndarray, wrong: npt.NDArray[np.bool_], launch: Launch,
            bad: npt.NDArray[np.bool_]) -> dict[int, tuple[str, ...]]:
    """Block -> the hypotheses whose output its output equals exactly (only blocks with wrong output)."""
    from harness.oracles.block_load_store import expected, params_of

    blocks = bad & wrong.any(axis=1)
    found: dict[int, list[str]] = {}
    if not blocks.any():
        return {}
    got_raw = raw_view(np.ascontiguousarray(got))
    p = params_of(spec, snap)
    failing = _Failing.of(spec, snap, p, got_raw, blocks)
    for name, variant in _variants(spec, snap, p, failing):
        if callable(variant):
            matched = variant()
        else:
            params, differs = variant
            rows = np.flatnonzero(blocks & differs)
            if not rows.size:
                continue
            alt = expected(spec, snap, params, rows)
            matched = rows[(raw_view(np.ascontiguousarray(alt)) == got_raw[rows]).all(axis=1)]
        for b in matched:
            if name not in found.setdefault(int(b), []):
                found[int(b)].append(name)
    for block, name in [*_skipped(spec, snap, got, wrong, blocks), *_past_valid(failing, wrong)]:
        if name not in found.setdefault(block, []):
            found[block].append(name)
    return {b: tuple(names) for b, names in found.items()}


def _other_valid(spec: coopcheck.KernelSpec, snap: Batch, p: Params, failing: _Failing) -> npt.NDArray[np.int64]:
    """Failing blocks whose output is what another block's valid_items would give, for every valid_items of the
    launch at once. Element e holds its moved item iff its key (Load: its tile index; Store: its column's tile
    index, none outside the block's window) is below valid_items, else its fallback. So valid_items v explains a
    block iff v is at most every key whose element differs from the moved item, and above every key whose
    element differs from the fallback: one interval per block, instead of one expected output per value."""
    from harness.oracles.block_load_store import expected

    tile, never, at, got, moved = spec.tile, np.iinfo(np.int64).max // 2, failing.at, failing.got, failing.whole
    kept = raw_view(np.ascontiguousarray(expected(spec, snap, replace(p, valid=np.zeros_like(p.valid)), at)))
    if isinstance(snap, coopcheck.LoadBatch):
        key = np.broadcast_to(p.idx[None, :], moved.shape)
    else:
        k = np.arange(snap.region)[None, :] - p.offset[at, None]
        key = np.where((k >= 0) & (k < tile), k, never)
    highest = np.where(got != moved, key, never).min(axis=1)
    lowest = np.where(got != kept, key + 1, -never).max(axis=1)
    values = np.unique(p.valid)
    fits = (values[None, :] >= lowest[:, None]) & (values[None, :] <= highest[:, None])
    fits &= values[None, :] != p.valid[at, None]
    explained: npt.NDArray[np.int64] = at[fits.any(axis=1)]
    return explained


def _past_valid(failing: _Failing, wrong: npt.NDArray[np.bool_]) -> Iterator[tuple[int, str]]:
    """Blocks whose every wrong element holds what a whole-tile move would put there: the guard let items
    past valid_items through (a rounded-up or inclusive guard, a wide access over a partial chunk)."""
    explained = (failing.whole == failing.got) | ~wrong[failing.at]
    yield from ((int(b), "past-valid") for b in failing.at[explained.all(axis=1)])


def _skipped(spec: coopcheck.KernelSpec, snap: Batch, got: np.ndarray, wrong: npt.NDArray[np.bool_],
             blocks: npt.NDArray[np.bool_]) -> Iterator[tuple[int, str]]:
    """Blocks whose wrong elements all belong to one thread (or one warp) that left them as they were (only the
    candidate ``blocks`` are looked at: a launch has thousands, a failing one a few)."""
    from harness.oracles.block_load_store import params_of

    p = params_of(spec, snap)
    n, ipt, at = snap.n_blocks, spec.items_per_thread, np.flatnonzero(blocks)
    miss = wrong[at]
    if isinstance(snap, coopcheck.LoadBatch):
        thread = np.broadcast_to(np.arange(spec.tile) // ipt, miss.shape)
        before = np.asarray(snap.init).reshape(n, -1)[at]
    else:
        rank_of_index = np.empty(spec.tile, dtype=np.int64)
        rank_of_index[p.idx] = np.arange(spec.tile) // ipt
        k = np.clip(np.arange(snap.region)[None, :] - p.offset[at, None], 0, spec.tile - 1)
        thread = rank_of_index[k]
        before = np.asarray(snap.dst).reshape(n, -1)[at]
    same = raw_view(np.ascontiguousarray(got[at])) == raw_view(np.ascontiguousarray(before))
    untouched = (same | ~miss).all(axis=1)
    explained = np.zeros(len(at), dtype=bool)
    for unit, name in ((1, "skipped-thread"), (WARP_SIZE, "skipped-warp")):
        who = np.where(miss, thread // unit, -1)
        lo = np.where(miss, who, np.iinfo(np.int64).max).min(axis=1)
        one = untouched & (lo == who.max(axis=1)) & ~explained
        explained |= one
        yield from ((int(b), name) for b in at[one])
