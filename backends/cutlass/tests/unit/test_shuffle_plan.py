"""The Shuffle kernels' index arithmetic, checked on the host: the plan's source and guard functions, item moves
and block-item rank are what the DSL traces, so here they run on NumPy ranks instead.

A lock-step model of the kernel (:func:`simulate`: every thread's store into one scratch per block, then its moves
and loads in the kernel's order) drives them over the contract's ``pr`` kernel points, and the family's oracle
judges what it returns. It checks the arithmetic and the order, not the DSL's lowering (the compile tests and a GPU
do that).
"""

from __future__ import annotations

from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.shuffle import ShuffleBatch
from coopcheck_cutlass.shuffle_plan import ShufflePlan, shuffle_plan

from harness.cases import kernel_points
from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.shuffle"]
#: A value no shuffled item may carry in the model's scratch before the stores.
GARBAGE = 0x5A


def simulate(plan: ShufflePlan, inplace: bool, batch: ShuffleBatch) -> np.ndarray:
    """``dst`` of the contract kernel as :mod:`coopcheck_cutlass.shuffle` runs it, every thread of every block at
    once: each thread's handed item into the scratch at its rank, then (after the barrier) its moves within the
    thread in order, its taken item from the scratch where the guard lets it, and the block item."""
    n, threads, ipt, tile = batch.n_blocks, plan.threads, plan.items_per_thread, plan.tile
    me = np.broadcast_to(np.arange(threads), (n, threads))
    rows = np.broadcast_to(np.arange(n)[:, None], (n, threads))
    held = np.asarray(batch.items).reshape(n, threads, ipt).copy()
    prior = np.asarray(batch.prior).reshape(n, tile + threads)
    out = held if inplace else prior[:, :tile].reshape(n, threads, ipt).copy()
    item = prior[:, tile:].copy()
    scratch = np.full((n, plan.scratch_items * held.itemsize), GARBAGE, np.uint8).view(held.dtype)
    scratch[rows, me] = held[:, :, plan.handed]
    for to, source in plan.moves:
        out[:, :, to] = held[:, :, source]
    src = plan.source(me, np.asarray(batch.distance).astype(np.int64)[:, None])
    ok = np.broadcast_to(plan.takes(src) if plan.bounded else True, src.shape)
    assert ((src[ok] >= 0) & (src[ok] < plan.scratch_items)).all(), f"a load outside the scratch of {plan}"
    out[:, :, plan.taken][ok] = scratch[rows[ok], src[ok]]
    if plan.with_block_item:
        item[:] = scratch[:, [plan.block_item_rank]]
    parts = [out.reshape(n, tile)] + ([] if inplace else [held.reshape(n, tile)])
    parts += [item] if plan.with_block_item else []
    return np.hstack(parts).reshape(-1)


def _point_id(point: tuple[tuple[str, Any], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in point)


PR_POINTS = kernel_points(CONTRACT, "pr")


@pytest.mark.parametrize("point", PR_POINTS, ids=[_point_id(p) for p in PR_POINTS])
def test_the_plan_shuffles_every_pr_kernel_point_as_the_oracle_expects(point: tuple[tuple[str, Any], ...],
                                                                       plan_failures: Any) -> None:
    failures = plan_failures(CONTRACT, point, shuffle_plan, simulate)
    assert not failures, "\n".join(failures[:6])


def test_the_pr_points_cover_every_method_both_ways() -> None:
    seen = {(dict(p)["alg"], dict(p)["output"]) for p in PR_POINTS}
    assert seen == {(m, o) for m in CONTRACT.axes["alg"] for o in CONTRACT.axes["output"]}


def _spec(method: str, block: tuple[int, ...] = (100,), ipt: int = 3, **statics: int) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.shuffle", "int16", block, ipt, method, statics=tuple(statics.items()),
                                variant=(("output", "inplace"),))


@pytest.mark.parametrize(("method", "ipt", "handed", "taken", "moves", "block_item_rank"), [
    ("offset", 1, 0, 0, (), None),
    ("rotate", 1, 0, 0, (), None),
    ("up", 4, 3, 0, ((3, 2), (2, 1), (1, 0)), None),  # against the shift: in place, each read before overwritten
    ("down", 4, 0, 3, ((0, 1), (1, 2), (2, 3)), None),
    ("up_suffix", 1, 0, 0, (), 99),
    ("down_prefix", 2, 0, 1, ((0, 1),), 0),
])
def test_the_plan_hands_on_one_item_a_thread_as_cub(method: str, ipt: int, handed: int, taken: int,
                                                    moves: tuple[tuple[int, int], ...],
                                                    block_item_rank: int | None) -> None:
    plan = shuffle_plan(_spec(method, ipt=ipt))
    assert (plan.handed, plan.taken, plan.moves) == (handed, taken, moves)
    assert (plan.block_item_rank if plan.with_block_item else None) == block_item_rank
    assert (plan.scratch_items, plan.scratch_bytes) == (100, 200)  # CUB's TempStorage: one item a thread


@pytest.mark.parametrize(("method", "distance", "sources"), [
    ("offset", -2, [-2, -1, 0, 97]),
    ("rotate", 3, [3, 4, 5, 2]),
    ("up", 0, [-1, 0, 1, 98]),
    ("down", 0, [1, 2, 3, 100]),
])
def test_a_source_is_the_rank_cub_reads_and_the_guard_keeps_it_inside_the_block(
        method: str, distance: int, sources: list[int]) -> None:
    plan = shuffle_plan(_spec(method, ipt=1))
    me = np.array([0, 1, 2, 99])
    assert plan.source(me, distance).tolist() == sources
    assert plan.bounded == (method != "rotate")
    if plan.bounded:
        assert plan.takes(np.array(sources)).tolist() == [0 <= s < 100 for s in sources]


@pytest.mark.parametrize(("spec", "rule"), [
    (_spec("offset", ipt=2), "shuffle_scalar"),
    (_spec("rotate", ipt=1, static_distance=100), "shuffle_rotate_distance"),
    (_spec("down", static_distance=1), "shuffle_no_distance"),
    (_spec("shift"), "shuffle_method"),
])
def test_a_bad_static_is_refused_naming_the_rule(spec: coopcheck.KernelSpec, rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        shuffle_plan(spec)
    assert raised.value.rule == rule


# -- the model bites: plans with one decision flipped fail the oracle --------------------------------------------


class _RotateUnwrapped(ShufflePlan):
    def source(self, me: Any, distance: Any) -> Any:
        return me + distance  # a source past the last thread is not wrapped

    @property
    def bounded(self) -> bool:
        return True


class _OffsetUnguarded(ShufflePlan):
    def takes(self, source: Any) -> Any:
        return source >= 0  # no upper bound: a thread past the block reads outside the scratch


class _MovesWithTheShift(ShufflePlan):
    @property
    def moves(self) -> tuple[tuple[int, int], ...]:
        return tuple(reversed(super().moves))  # in place, an item is overwritten before it is read


class _CarryOwnThread(ShufflePlan):
    def source(self, me: Any, distance: Any) -> Any:
        return me + 0 * distance if not self.scalar else super().source(me, distance)


class _BlockItemOtherEnd(ShufflePlan):
    @property
    def block_item_rank(self) -> int:
        return self.threads - 1 - super().block_item_rank


MUTANTS = {
    "rotate without the wrap": (_RotateUnwrapped, (("alg", "rotate"), ("ipt", 1))),
    "offset without its upper bound": (_OffsetUnguarded, (("alg", "offset"), ("ipt", 1))),
    "up moving its items with the shift, in place": (_MovesWithTheShift, (("alg", "up"),)),
    "down carrying from its own thread": (_CarryOwnThread, (("alg", "down"), ("output", "separate"))),
    "block prefix from the last thread": (_BlockItemOtherEnd, (("alg", "down_prefix"),)),
}


@pytest.mark.parametrize("mutant", MUTANTS)
def test_a_plan_with_one_decision_flipped_fails_the_oracle(mutant: str, plan_failures: Any) -> None:
    kind, where = MUTANTS[mutant]
    base = {"dtype": "int32", "block": "100", "ipt": 3, "alg": None, "output": "inplace"}
    point = tuple({**base, **dict(where)}.items())
    assert plan_failures(CONTRACT, point, shuffle_plan, simulate) == []
    assert plan_failures(CONTRACT, point, shuffle_plan, simulate, kind), f"{mutant}: the oracle accepted it"
