"""The Scan kernels' schedule, checked on the host: the plan's steps (their slots, registers and guards) are what the
DSL traces, so here they run on NumPy ranks instead.

A lock-step model of the contract kernel (:func:`simulate`: per tile every thread folds its items, runs each step of
the schedule in every thread at once, a store reaching other threads only across a barrier, then scans its items from
the prefix the schedule left it) drives them over the contract's ``pr`` kernel points, and the family's oracle judges
what it returns. It checks the order, the guards, the barriers and the callback's callers, not the DSL's lowering
(the compile tests and a GPU do that).
"""

from __future__ import annotations

from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.scan import ScanBatch
from coopcheck.vocabulary import WARP_SIZE
from coopcheck_cutlass.scan_plan import (
    BARRIER,
    CALL,
    COPY,
    GET,
    JOIN,
    MEMO_BYTES,
    PUT,
    SYNC,
    A,
    S,
    ScanPlan,
    Step,
    X,
    scan_plan,
)

from harness.cases import kernel_points
from harness.contracts import load_contracts

CONTRACT = {c.id: c for c in load_contracts()}["block.scan"]
#: The byte the model's scratch and registers hold before any write: what a thread reads where nobody wrote.
GARBAGE = 0x5A


class Threads:
    """Every thread of every block in lock-step (row: block, column: rank): registers, scratch, callback state."""

    def __init__(self, plan: ScanPlan, batch: ScanBatch, operate: Any) -> None:
        n, threads = batch.n_blocks, plan.threads
        self.plan, self.operate = plan, lambda a, b: operate(plan.op, a, b)
        self.rank = np.broadcast_to(np.arange(threads), (n, threads))
        self.row = np.broadcast_to(np.arange(n)[:, None], (n, threads))
        dtype = np.asarray(batch.items).dtype
        self.regs = self._poison(dtype, (plan.registers, n, threads))
        self.visible = self._poison(dtype, (n, plan.scratch_items))
        self.pending = self.visible.copy()
        # since the last barrier: the rank that stored to a slot, and the one that read it (-2: several did)
        self.writer, self.reader = np.full(self.visible.shape, -1), np.full(self.visible.shape, -1)
        self.running = np.broadcast_to(np.asarray(batch.initial)[:, None], (n, threads)).copy()
        self.argument = self._poison(dtype, (n, threads))
        self.calls = np.zeros((n, threads), np.int64)

    @staticmethod
    def _poison(dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
        return np.full(int(np.prod(shape)) * dtype.itemsize, GARBAGE, np.uint8).view(dtype).reshape(shape)

    def slots(self, step: Step, at: np.ndarray) -> np.ndarray:
        assert step.slot is not None
        slot = np.broadcast_to(step.slot(self.rank), self.rank.shape)[at]
        assert ((slot >= 0) & (slot < self.plan.scratch_items)).all(), f"a scratch access outside {self.plan}"
        return slot  # type: ignore[no-any-return]

    def get(self, step: Step, at: np.ndarray) -> np.ndarray:
        slot, row, me = self.slots(step, at), self.row[at], self.rank[at]
        reader = self.reader[row, slot]
        self.reader[row, slot] = np.where((reader == -1) | (reader == me), me, -2)
        own = self.writer[row, slot] == me
        return np.where(own, self.pending[row, slot], self.visible[row, slot])

    def put(self, step: Step, at: np.ndarray, value: np.ndarray) -> None:
        """A store another thread's access reaches without a barrier between them is a race (racecheck's
        hazards: a write after another thread's read or write)."""
        slot, row, me = self.slots(step, at), self.row[at], self.rank[at]
        others = [a[row, slot] for a in (self.writer, self.reader)]
        assert all(((o == -1) | (o == me)).all() for o in others), f"a shared-memory race in {self.plan}"
        self.pending[row, slot], self.writer[row, slot] = value, me

    def run(self, steps: tuple[Step, ...]) -> None:
        for step in steps:
            if step.kind == SYNC:
                done = self.writer >= 0
                self.visible[done], self.writer[:], self.reader[:] = self.pending[done], -1, -1
                continue
            at = np.broadcast_to(step.when(self.rank), self.rank.shape).copy()
            if step.kind == PUT:
                self.put(step, at, self.regs[step.src][at])
            elif step.kind == GET:
                self.regs[step.to][at] = self.get(step, at)
            elif step.kind == JOIN:
                self.regs[step.to][at] = self.operate(self.regs[step.left][at], self.regs[step.right][at])
            elif step.kind == COPY:
                self.regs[step.to][at] = self.regs[step.src][at]
            else:
                assert step.kind == CALL
                self.call(at)

    def call(self, at: np.ndarray) -> None:
        """The contract kernel's block prefix callback: returns its running prefix, folds the aggregate into it."""
        self.regs[S][at], self.argument[at] = self.running[at], self.regs[A][at]
        self.running[at] = self.operate(self.running[at], self.regs[A][at])
        self.calls[at] += 1


def scan_items(threads: Threads, items: np.ndarray) -> np.ndarray:
    """Each thread's items scanned from the exclusive prefix in :data:`X` (thread 0 has none without a seed; an
    exclusive scan writes 0 there)."""
    plan, op = threads.plan, threads.operate
    out = np.empty_like(items)
    x = threads.regs[X].copy()
    prefixed = np.broadcast_to(plan.seeded | (threads.rank > 0), x.shape)
    for i in range(plan.items_per_thread):
        item = items[:, :, i]
        folded = op(x, item) if i else np.where(prefixed, op(x, item), item)
        if plan.inclusive:
            out[:, :, i] = folded
        else:
            out[:, :, i] = x if i else np.where(prefixed, x, np.zeros_like(x))
        x = folded
    return out


def simulate(plan: ScanPlan, batch: ScanBatch, operate: Any) -> np.ndarray:
    """``dst`` of the contract kernel as :mod:`coopcheck_cutlass.scan` runs it: per tile, each thread's items folded
    in order, the schedule, the items scanned; then every thread's aggregates and callback calls."""
    n, threads, ipt, tiles = batch.n_blocks, plan.threads, plan.items_per_thread, batch.tiles
    model = Threads(plan, batch, operate)
    items = np.asarray(batch.items).reshape(n, tiles, threads, ipt)
    scanned, aggregates = [], []
    for k in range(tiles):
        tile = items[:, k]
        partial = tile[:, :, 0]
        for i in range(1, ipt):
            partial = model.operate(partial, tile[:, :, i])
        model.regs[X] = partial
        if plan.seed == "initial":
            model.regs[S] = np.asarray(batch.initial)[:, None]
        model.run(plan.schedule)
        scanned.append(scan_items(model, tile).reshape(n, -1))
        aggregates.append(model.argument.copy() if plan.seed == "prefix" else model.regs[A].copy())
    calls = model.calls.astype(items.dtype)
    return np.hstack([*scanned, *aggregates, calls]).reshape(-1)


def _point_id(point: tuple[tuple[str, Any], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in point)


PR_POINTS = kernel_points(CONTRACT, "pr")


@pytest.fixture(scope="module")
def modelled(plan_failures: Any, operate: Any) -> Any:
    """``(point, flipped=None)`` -> the oracle's failure lines for the model of the point's plan."""
    def failures(point: tuple[tuple[str, Any], ...], flipped: type | None = None) -> list[str]:
        def run(plan: ScanPlan, inplace: bool, batch: ScanBatch) -> np.ndarray:
            return simulate(plan, batch, operate)

        return plan_failures(CONTRACT, point, scan_plan, run, flipped)  # type: ignore[no-any-return]

    return failures


@pytest.mark.parametrize("point", PR_POINTS, ids=[_point_id(p) for p in PR_POINTS])
def test_the_plan_scans_every_pr_kernel_point_as_the_oracle_expects(point: tuple[tuple[str, Any], ...],
                                                                    modelled: Any) -> None:
    failures = modelled(point)
    assert not failures, "\n".join(failures[:6])


def test_the_pr_points_cover_every_algorithm_operator_mode_seed_and_block() -> None:
    for axis in ("alg", "op", "mode", "seed", "block"):
        assert {dict(p)[axis] for p in PR_POINTS} == set(CONTRACT.axes[axis]), axis


def _spec(algorithm: str, block: tuple[int, ...] = (100,), ipt: int = 3, op: str = "sum", mode: str = "inclusive",
          seed: str = "none", dtype: str = "int16") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.scan", dtype, block, ipt, algorithm,
                                variant=(("op", op), ("mode", mode), ("seed", seed)))


@pytest.mark.parametrize(("algorithm", "block", "seed", "segment", "raking_threads", "scratch_items"), [
    ("raking", (1,), "none", 1, 1, 1),  # warp-synchronous: the raking threads' scan only
    ("raking", (32,), "prefix", 1, 32, 33),  # ... and the block prefix's slot
    ("raking", (65,), "none", 3, 22, 65 + 22),  # the grid, then the raking totals
    ("raking_memoize", (1024,), "initial", 32, 32, 1024 + 32),
    ("warp_scans", (65,), "prefix", 3, 22, 65 + 3 + 1),  # the grid, the warps' aggregates, the block prefix
    ("warp_scans", (1,), "none", 1, 1, 1 + 1),
])
def test_the_scratch_holds_the_grid_the_second_level_and_the_block_prefix(
        algorithm: str, block: tuple[int, ...], seed: str, segment: int, raking_threads: int,
        scratch_items: int) -> None:
    plan = scan_plan(_spec(algorithm, block, seed=seed))
    assert (plan.segment, plan.raking_threads, plan.scratch_items) == (segment, raking_threads, scratch_items)
    assert plan.scratch_bytes == 2 * scratch_items


@pytest.mark.parametrize(("dtype", "block", "memoized"), [
    ("int32", (1024,), 32), ("float64", (1024,), MEMO_BYTES // 8), ("uint8", (65,), 3), ("int64", (32,), 0)])
def test_raking_memoize_keeps_its_segment_in_registers_within_its_budget(dtype: str, block: tuple[int, ...],
                                                                         memoized: int) -> None:
    plan = scan_plan(_spec("raking_memoize", block, dtype=dtype))
    assert plan.memoized == memoized and plan.registers == 5 + memoized
    assert scan_plan(_spec("raking", block, dtype=dtype)).memoized == 0
    gets = sum(s.kind == GET for s in plan.schedule)
    assert gets == sum(s.kind == GET for s in scan_plan(_spec("raking", block, dtype=dtype)).schedule) - memoized


@pytest.mark.parametrize(("algorithm", "block", "callers"), [
    ("raking", (65,), 22), ("raking", (8, 4, 2), 32), ("raking", (13, 1), 13), ("warp_scans", (65,), 32),
    ("warp_scans", (1024,), 32), ("warp_scans", (13,), 13)])
def test_the_callback_is_called_by_cubs_callers(algorithm: str, block: tuple[int, ...], callers: int) -> None:
    plan = scan_plan(_spec(algorithm, block, seed="prefix"))
    (call,) = [s for s in plan.schedule if s.kind == CALL]
    assert int(np.sum(call.when(np.arange(plan.threads)))) == callers


def test_every_schedule_ends_with_a_barrier_and_takes_no_seed_it_has_not() -> None:
    for algorithm in CONTRACT.axes["alg"]:
        for seed in CONTRACT.axes["seed"]:
            steps = scan_plan(_spec(algorithm, seed=seed)).schedule
            assert steps[-1] is BARRIER
            assert any(s.kind == CALL for s in steps) == (seed == "prefix")
            assert any(s.kind in (JOIN, COPY) and S in (s.left, s.src) for s in steps) == (seed != "none")


@pytest.mark.parametrize(("spec", "rule"), [
    (_spec("raking", op="matmul", dtype="float32"), "scan_integer_operator"),
    (_spec("raking_nondeterministic"), "scan_algorithm"),
    (_spec("raking", op="first"), "scan_operator"),
    (_spec("raking", mode="both"), "scan_mode"),
    (_spec("raking", seed="callback"), "scan_seed"),
    (_spec("raking", ipt=0), "items_per_thread"),
    (_spec("raking", block=(1025,)), "block"),
])
def test_a_bad_static_is_refused_naming_the_rule(spec: coopcheck.KernelSpec, rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        scan_plan(spec)
    assert raised.value.rule == rule


# -- the model bites: plans with one decision flipped fail the oracle --------------------------------------------


class _LaneScanWithoutItsReadBarrier(ScanPlan):
    def lane_scan(self, base: int, lane: Any, count: int) -> tuple[Step, ...]:
        steps = super().lane_scan(base, lane, count)
        first_get = next(i for i, s in enumerate(steps) if s.kind == GET)
        return steps[:first_get + 1] + steps[first_get + 2:]  # a lane's write races its neighbour's read


class _LaneScanOneLevelShort(ScanPlan):
    def lane_scan(self, base: int, lane: Any, count: int) -> tuple[Step, ...]:
        steps = super().lane_scan(base, lane, count)
        return steps[:-5] if len(steps) > 2 else steps  # the last doubling (d = 16 of 32 lanes) left out


class _DownsweepWithoutItsBarrier(ScanPlan):
    @property
    def raking(self) -> tuple[Step, ...]:
        steps = super().raking
        return steps[:-2] + steps[-1:]  # every thread reads the grid while the raking threads still write it


class _SegmentReversed(ScanPlan):
    def in_segment(self, j: int) -> Any:
        return super().in_segment(self.segment - 1 - j)


class _EveryWarpCallsTheCallback(ScanPlan):
    @property
    def callers(self) -> Any:
        return lambda rank: rank >= 0


class _SeedInTheAggregate(ScanPlan):
    def seeding(self, among: Any) -> tuple[Step, ...]:
        return (*super().seeding(among), Step(JOIN, to=A, left=S, right=A))


MUTANTS = {
    "a lane scan without the barrier after its read": (_LaneScanWithoutItsReadBarrier, (("alg", "warp_scans"),)),
    "a lane scan one level short": (_LaneScanOneLevelShort, (("alg", "raking"), ("block", "1024"))),
    "the downsweep without its barrier": (_DownsweepWithoutItsBarrier, (("alg", "raking"),)),
    "a guard off its segment": (_SegmentReversed, (("alg", "raking"), ("block", "65"))),
    "the callback called outside the first warp": (_EveryWarpCallsTheCallback, (("alg", "warp_scans"),
                                                                                ("seed", "prefix"))),
    "the seed folded into the aggregate": (_SeedInTheAggregate, (("alg", "raking"), ("seed", "initial"))),
}


@pytest.mark.parametrize("mutant", MUTANTS)
def test_a_plan_with_one_decision_flipped_fails_the_oracle(mutant: str, modelled: Any) -> None:
    kind, where = MUTANTS[mutant]
    base = {"dtype": "int32", "block": "65", "ipt": 3, "alg": None, "op": "sum", "mode": "inclusive",
            "seed": "none"}
    point = tuple({**base, **dict(where)}.items())
    assert modelled(point) == []
    assert modelled(point, kind), f"{mutant}: the oracle accepted it"


def test_a_warp_is_the_unit_of_the_second_level() -> None:
    assert scan_plan(_spec("warp_scans", (1024,))).lanes == 1024 // WARP_SIZE
    assert scan_plan(_spec("raking", (1024,))).lanes == 32
