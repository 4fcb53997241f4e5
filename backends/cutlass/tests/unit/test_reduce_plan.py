"""The Reduce kernels' schedule, checked on the host: the plan's steps (their slots and guards) are what the DSL
traces, so here they run on NumPy ranks instead.

A lock-step model of the kernel (:func:`simulate`: every thread's own items reduced in order, then each step of the
schedule in every thread at once, a store reaching other threads only across a barrier) drives them over the
contract's ``pr`` kernel points, and the family's oracle judges what it returns. It checks the order, the guards
and the barriers, not the DSL's lowering (the compile tests and a GPU do that).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.reduce import ReduceBatch
from coopcheck_cutlass.reduce_plan import BARRIER, FOLD, LOAD, STORE, SYNC, ReducePlan, Step, reduce_plan

from harness.cases import kernel_points
from harness.contracts import load_contracts
from harness.oracles.values import raw_view

CONTRACT = {c.id: c for c in load_contracts()}["block.reduce"]
#: ``operate(op, a, b)``: the device operators on NumPy arrays (the ``operate`` fixture).
Operate = Any
#: The byte the model's scratch holds before any store: what a thread reads where nobody wrote.
GARBAGE = 0x5A


class Block:
    """The threads of every block in lock-step (row: block, column: rank), their values, seen flags and scratch."""

    def __init__(self, plan: ReducePlan, batch: ReduceBatch, operate: Operate) -> None:
        n, threads = batch.n_blocks, plan.threads
        self.plan, self.op, self.operate = plan, plan.op, operate
        self.rank = np.broadcast_to(np.arange(threads), (n, threads))
        self.row = np.broadcast_to(np.arange(n)[:, None], (n, threads))
        self.valid = np.asarray(batch.valid).astype(np.int64)[:, None]
        self.sentinel = np.broadcast_to(raw_view(np.asarray(batch.sentinel))[:, None], (n, threads))
        self.items = np.asarray(batch.items).reshape(n, threads, plan.items_per_thread)
        self.value = self.items[:, :, 0].copy()
        self.seen = np.zeros((n, threads), dtype=bool)
        poison = np.full(n * plan.scratch_items * self.items.itemsize, GARBAGE, np.uint8).view(self.items.dtype)
        self.visible = poison.reshape(n, plan.scratch_items)
        self.pending = self.visible.copy()
        # since the last barrier: the rank that stored to a slot, and the one that read it (-2: several did)
        self.writer, self.reader = np.full(self.visible.shape, -1), np.full(self.visible.shape, -1)

    def where(self, guard: Any, among: np.ndarray) -> np.ndarray:
        return among & np.broadcast_to(guard(self.rank, self.valid), self.rank.shape)

    def combine(self, at: np.ndarray, later: np.ndarray) -> None:
        """The operator in the threads ``at``: their value (the earlier items) with ``later``; first records an
        operand equal to the block's sentinel."""
        if self.op == "first":
            mark = self.sentinel[at]
            self.seen[at] |= (raw_view(self.value[at]) == mark) | (raw_view(later) == mark)
        self.value[at] = self.operate(self.op, self.value[at], later)

    def slots(self, index: Any, at: np.ndarray) -> np.ndarray:
        slot = np.broadcast_to(index(self.rank), self.rank.shape)[at]
        assert ((slot >= 0) & (slot < self.plan.scratch_items)).all(), f"a scratch access outside {self.plan}"
        return slot  # type: ignore[no-any-return]

    def load(self, index: Any, at: np.ndarray) -> np.ndarray:
        slot, row = self.slots(index, at), self.row[at]
        me, reader = self.rank[at], self.reader[row, slot]
        self.reader[row, slot] = np.where((reader == -1) | (reader == me), me, -2)
        own = self.writer[row, slot] == me
        return np.where(own, self.pending[row, slot], self.visible[row, slot])

    def store(self, index: Any, at: np.ndarray) -> None:
        """A store another thread's access reaches without a barrier between them is a race (racecheck's
        hazards: a write after another thread's read or write)."""
        slot, row, me = self.slots(index, at), self.row[at], self.rank[at]
        others = [a[row, slot] for a in (self.writer, self.reader)]
        assert all(((o == -1) | (o == me)).all() for o in others), f"a shared-memory race in {self.plan}"
        self.pending[row, slot], self.writer[row, slot] = self.value[at], me

    def run(self, steps: tuple[Step, ...], among: np.ndarray) -> None:
        """The steps in the threads ``among`` (whole blocks), each in all of them before the next."""
        for step in steps:
            if step.kind == SYNC:
                done = self.writer >= 0
                self.visible[done], self.writer[:], self.reader[:] = self.pending[done], -1, -1
                continue
            at = self.where(step.when, among)
            if step.kind == STORE:
                self.store(step.slot, at)
            elif step.kind == LOAD:
                self.value[at] = self.load(step.slot, at)
            else:
                self.combine(at, self.load(step.slot, at))
                if step.keep is not None:
                    self.store(step.keep, at)


def simulate(plan: ReducePlan, inplace: bool, batch: ReduceBatch, operate: Operate) -> np.ndarray:
    """``dst`` of the contract kernel as :mod:`coopcheck_cutlass.reduce` runs it: each thread's valid items reduced
    in order, then the schedule (raking_commutative_only's fallback in the blocks of a partial tile); every thread's
    value, then its seen flag."""
    threads = Block(plan, batch, operate)
    everyone = np.ones(threads.rank.shape, dtype=bool)
    for i in range(1, plan.items_per_thread):
        at = threads.where(lambda rank, valid, i=i: plan.item_valid(rank, i, valid), everyone)
        threads.combine(at, threads.items[:, :, i][at])
    if plan.commutative_path:
        full = np.broadcast_to(plan.full(threads.valid), threads.rank.shape)
        threads.run(plan.schedule, full)
        threads.run(plan.fallback, ~full)
    else:
        threads.run(plan.schedule, everyone)
    return np.hstack([threads.value, threads.seen.astype(threads.value.dtype)]).reshape(-1)


def _point_id(point: tuple[tuple[str, Any], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in point)


PR_POINTS = kernel_points(CONTRACT, "pr")


@pytest.mark.parametrize("point", PR_POINTS, ids=[_point_id(p) for p in PR_POINTS])
def test_the_plan_reduces_every_pr_kernel_point_as_the_oracle_expects(point: tuple[tuple[str, Any], ...],
                                                                      plan_failures: Any, operate: Operate) -> None:
    failures = plan_failures(CONTRACT, point, reduce_plan, partial(simulate, operate=operate))
    assert not failures, "\n".join(failures[:6])


def test_the_pr_points_cover_every_algorithm_with_every_operator_it_takes() -> None:
    seen = {(dict(p)["alg"], dict(p)["op"]) for p in PR_POINTS}
    assert seen == {(a, o) for a in CONTRACT.axes["alg"] for o in CONTRACT.axes["op"]
                    if a != "raking_commutative_only" or o in ("sum", "min", "max")}


def _spec(algorithm: str, block: tuple[int, ...] = (100,), ipt: int = 3, op: str = "sum",
          dtype: str = "int16") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.reduce", dtype, block, ipt, algorithm, variant=(("op", op),))


def _kinds(steps: tuple[Step, ...]) -> str:
    return "".join({STORE: "s", LOAD: "l", FOLD: "f", SYNC: "|"}[s.kind] for s in steps)


@pytest.mark.parametrize(("algorithm", "block", "segment", "raking_threads", "commutative_path", "kinds"), [
    ("raking", (1,), 1, 1, False, "s|l|s|f||"),  # a one-lane tree keeps one step: the scratch is read
    ("raking", (100,), 4, 25, False, "s|lfff|s|f|f|f|f|f||"),
    ("raking", (1024,), 32, 32, False, "s|l" + "f" * 31 + "|s|f|f|f|f|f||"),
    ("warp_reductions", (65,), 3, 22, False, "s|f|f|f|f|f|ff|"),  # then thread 0 folds in warps 1 and 2
    ("warp_reductions", (7,), 1, 7, False, "s|f|f|f||"),
    ("raking_commutative_only", (128,), 4, 32, True, "s|fff" + "s|f|f|f|f|f||"),
    ("raking_commutative_only", (100,), 4, 25, False, "s|lfff|s|f|f|f|f|f||"),  # a partial last warp: raking
    ("raking_commutative_only", (32,), 1, 32, False, "s|l|s|f|f|f|f|f||"),  # one warp: raking
])
def test_the_schedule_rakes_and_trees_as_cub(algorithm: str, block: tuple[int, ...], segment: int,
                                             raking_threads: int, commutative_path: bool, kinds: str) -> None:
    plan = reduce_plan(_spec(algorithm, block))
    assert (plan.segment, plan.raking_threads, plan.commutative_path) == (segment, raking_threads, commutative_path)
    assert _kinds(plan.schedule) == kinds
    assert (plan.scratch_items, plan.scratch_bytes) == (plan.threads, 2 * plan.threads)  # one item a thread
    if commutative_path:
        assert _kinds(plan.fallback) == _kinds(reduce_plan(_spec("raking", block)).schedule)


def test_a_guard_admits_exactly_the_threads_that_hold_a_valid_item() -> None:
    plan = reduce_plan(_spec("raking", (100,), ipt=3))
    rank = np.arange(100)
    assert plan.holds(rank, 7).tolist() == [r < 3 for r in rank]  # 7 items: threads 0, 1, 2
    assert plan.item_valid(rank, 2, 7).tolist() == [r < 2 for r in rank]
    assert plan.full(298) and not plan.full(297)


@pytest.mark.parametrize(("spec", "rule"), [
    (_spec("raking_commutative_only", op="matmul"), "reduce_commutative"),
    (_spec("raking_commutative_only", op="first"), "reduce_commutative"),
    (_spec("raking", op="matmul", dtype="float32"), "reduce_integer_operator"),
    (_spec("warp_reductions_nondeterministic"), "reduce_algorithm"),
    (_spec("raking", op="prod"), "reduce_operator"),
    (_spec("raking", ipt=0), "items_per_thread"),
    (_spec("raking", block=(1025,)), "block"),
])
def test_a_bad_static_is_refused_naming_the_rule(spec: coopcheck.KernelSpec, rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        reduce_plan(spec)
    assert raised.value.rule == rule


# -- the model bites: plans with one decision flipped fail the oracle --------------------------------------------


class _RakingWithoutItsBarrier(ReducePlan):
    @property
    def raking(self) -> tuple[Step, ...]:
        steps = super().raking
        last = max(i for i, s in enumerate(steps) if s.kind == FOLD and s.keep is None)
        return steps[:last + 1] + steps[last + 2:]  # the tree's stores race the rakes (NVIDIA/cccl#1902)


class _TreeOneLevelShort(ReducePlan):
    def tree(self, lanes: int, base: int, scale: int, guarded: bool) -> tuple[Step, ...]:
        return super().tree(lanes // 2, base, scale, guarded)  # the last level's lanes never reach lane 0


class _ValidIgnored(ReducePlan):
    def item_valid(self, rank: Any, item: int, valid: Any) -> Any:
        return rank * self.items_per_thread + item < self.tile  # invalid items reduced too (NVIDIA/cub#74)


class _CommutativeOnPartialTiles(ReducePlan):
    def full(self, valid: Any) -> Any:
        return valid >= 0


class _TreeWithoutBarriers(ReducePlan):
    def tree(self, lanes: int, base: int, scale: int, guarded: bool) -> tuple[Step, ...]:
        steps = super().tree(lanes, base, scale, guarded)
        return (*(s for s in steps[:-1] if s is not BARRIER), steps[-1])


MUTANTS = {
    "raking without the barrier before its tree": (_RakingWithoutItsBarrier, (("alg", "raking"), ("block", "65"))),
    "a raking tree one level short": (_TreeOneLevelShort, (("alg", "raking"),)),
    "valid_items ignored": (_ValidIgnored, (("alg", "warp_reductions"),)),
    "the commutative path on a partial tile": (_CommutativeOnPartialTiles, (("alg", "raking_commutative_only"),
                                                                           ("op", "max"), ("block", "1024"))),
    "a warp tree without its barriers": (_TreeWithoutBarriers, (("alg", "warp_reductions"),)),
}


@pytest.mark.parametrize("mutant", MUTANTS)
def test_a_plan_with_one_decision_flipped_fails_the_oracle(mutant: str, plan_failures: Any, operate: Operate) -> None:
    kind, where = MUTANTS[mutant]
    base = {"dtype": "int32", "block": "100", "ipt": 3, "alg": None, "op": "sum"}
    point = tuple({**base, **dict(where)}.items())
    model = partial(simulate, operate=operate)
    assert plan_failures(CONTRACT, point, reduce_plan, model) == []
    assert plan_failures(CONTRACT, point, reduce_plan, model, kind), f"{mutant}: the oracle accepted it"
