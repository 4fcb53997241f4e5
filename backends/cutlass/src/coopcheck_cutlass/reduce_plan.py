"""The static plan of one block Reduce call (the algorithms, operators and rules are :mod:`coopcheck.reduce`'s): the
scratch it takes and its schedule, the steps every thread runs after reducing its own valid items.

Pure Python (no cutlass import). As CUB's BlockReduce, the threads that hold a valid item pass their partials
through a shared scratch of one item a thread: raking (at most a warp of threads rake segments of the partials in
order, then a tree over their results), raking_commutative_only (on a full tile of whole warps, the first warp folds
in the partials of the others, its own first; else raking) or warp_reductions (a tree per warp, then thread 0
folds in the warps' aggregates). A schedule is a tuple of :class:`Step`, whose slot and guard are plain functions of
(rank, valid_items) that the DSL traces with runtime values and host tests evaluate on NumPy ints, so the order
and every guard (no operator sees an invalid item: NVIDIA/cub#74) are checked without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import coopcheck
from coopcheck.reduce import check_spec
from coopcheck.vocabulary import WARP_SIZE

from coopcheck_cutlass.plan import ItemsPlan, RakingGrid

#: What a step does where its guard holds: the thread's value to its slot, from its slot, or the operator applied
#: to (its value, the slot's) and, with ``keep``, the result back to the scratch; a block barrier (no guard).
STORE, LOAD, FOLD, SYNC = "store", "load", "fold", "sync"

Index = Callable[[Any], Any]
Guard = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Step:
    """One step of a schedule: ``kind`` at scratch ``slot(rank)`` in the threads where ``when(rank, valid)``."""

    kind: str
    slot: Index | None = None
    when: Guard | None = None
    keep: Index | None = None  # FOLD: where the result goes back to the scratch (a tree's own entry)


BARRIER = Step(SYNC)


@dataclass(frozen=True)
class ReducePlan(ItemsPlan, RakingGrid):
    """A validated block Reduce configuration; every field is a compile-time constant (valid_items is not)."""

    algorithm: str
    op: str

    @property
    def method(self) -> str:
        """The algorithm, as the scratch checks shared with Exchange and Shuffle name a call's."""
        return self.algorithm

    @property
    def scratch_items(self) -> int:
        """Shared-memory elements: one a thread, every algorithm (the raking grid's size)."""
        return self.threads

    def item_valid(self, rank: Any, item: int, valid: Any) -> Any:
        """Whether item ``item`` of thread ``rank`` is valid: its tile index is below valid_items."""
        return rank * self.items_per_thread + item < valid

    def holds(self, rank: Any, valid: Any) -> Any:
        """Whether thread ``rank`` holds a valid item (its first one is): then its partial may be reduced."""
        return self.item_valid(rank, 0, valid)

    @property
    def commutative_path(self) -> bool:
        """raking_commutative_only's own path exists (whole warps, more than one); CUB falls back to raking for a
        partial tile, which :meth:`full` tells at run time."""
        return (self.algorithm == "raking_commutative_only" and self.threads % WARP_SIZE == 0
                and self.threads > WARP_SIZE)

    def full(self, valid: Any) -> Any:
        """Whether every thread holds a valid item (the commutative path's condition)."""
        return self.holds(self.threads - 1, valid)

    def tree(self, lanes: int, base: int, scale: int, guarded: bool) -> tuple[Step, ...]:
        """An in-order tree over the lanes l < ``lanes`` (l the rank) of one scratch segment from ``base``: lane l
        takes lane l + s's value for s = 1, 2, 4, ..., each step across a barrier; lane 0 ends with the aggregate.
        ``guarded``: a lane takes part where it holds a valid partial (lane l stands for the partials from
        l * ``scale``), else every lane does (a full tile). A one-lane tree keeps one step, whose guard never holds,
        so that every algorithm reads the scratch as the contract's resource rules say."""
        def own(rank: Any) -> Any:
            return base + rank

        def stores(rank: Any, valid: Any) -> Any:
            return self.holds(rank * scale, valid) if guarded else rank < lanes

        def takes(offset: int) -> Guard:
            if guarded:
                return lambda rank, valid: (rank % (2 * offset) == 0) & self.holds((rank + offset) * scale, valid)
            return lambda rank, valid: (rank % (2 * offset) == 0) & (rank + offset < lanes)

        steps = [Step(STORE, own, stores), BARRIER]
        offset = 1
        while offset == 1 or offset < lanes:
            steps += [Step(FOLD, (lambda o: lambda rank: base + rank + o)(offset), takes(offset), own), BARRIER]
            offset *= 2
        return tuple(steps)

    @property
    def raking(self) -> tuple[Step, ...]:
        """CUB's raking: every valid partial to the grid at its rank; raking thread t reduces the valid part of
        grid[t*seg, (t+1)*seg) in order; after a barrier (the tree reuses the grid's start: NVIDIA/cccl#1902) a tree
        over the raking partials. A guard ``holds(t*seg + i)`` implies t is a raking thread."""
        seg = self.segment
        steps = [Step(STORE, lambda rank: rank, self.holds), BARRIER,
                 Step(LOAD, lambda rank: rank * seg, lambda rank, n: self.holds(rank * seg, n))]
        for i in range(1, seg):
            steps.append(Step(FOLD, (lambda j: lambda rank: rank * seg + j)(i),
                              (lambda j: lambda rank, n: self.holds(rank * seg + j, n))(i)))
        steps.append(BARRIER)
        return (*steps, *self.tree(self.raking_threads, 0, seg, True))

    @property
    def commutative(self) -> tuple[Step, ...]:
        """CUB's raking_commutative_only on a full tile: the threads past the first warp store their partials; each
        thread t of the first warp folds segment t of them into its own partial (its own first: an order other than
        the tile's); a tree over the first warp, in the scratch past the shared partials."""
        sharing = self.threads - WARP_SIZE
        seg = sharing // WARP_SIZE
        steps = [Step(STORE, lambda rank: rank - WARP_SIZE, lambda rank, n: rank >= WARP_SIZE), BARRIER]
        for i in range(seg):
            steps.append(Step(FOLD, (lambda j: lambda rank: rank * seg + j)(i), lambda rank, n: rank < WARP_SIZE))
        return (*steps, *self.tree(WARP_SIZE, sharing, 1, False))

    @property
    def warp_reductions(self) -> tuple[Step, ...]:
        """CUB's warp_reductions: a tree over the valid lanes of each warp (in the warp's share of the scratch),
        then thread 0 folds in the aggregate of every other warp that holds a valid item."""
        lanes = min(self.threads, WARP_SIZE)
        steps = list(self.tree(lanes, 0, 1, True))  # lane l + s of a lane l with l % 2s == 0 stays in l's warp
        for w in range(1, -(-self.threads // WARP_SIZE)):
            steps.append(Step(FOLD, (lambda at: lambda rank: at)(w * WARP_SIZE),
                              (lambda at: lambda rank, n: (rank == 0) & self.holds(at, n))(w * WARP_SIZE)))
        return tuple(steps)

    @property
    def schedule(self) -> tuple[Step, ...]:
        """The steps of the algorithm's main path (raking_commutative_only: its full-tile path where it has one),
        then a barrier: the caller may reuse the scratch as soon as the call returns."""
        if self.algorithm == "warp_reductions":
            return (*self.warp_reductions, BARRIER)
        return (*(self.commutative if self.commutative_path else self.raking), BARRIER)

    @property
    def fallback(self) -> tuple[Step, ...]:
        """The steps where :meth:`full` does not hold, for a plan with :attr:`commutative_path`: raking's."""
        return (*self.raking, BARRIER)


def reduce_plan(spec: coopcheck.KernelSpec) -> ReducePlan:
    """The checked plan of a harness spec (raises ``coopcheck.InvalidParameter`` for a rejected static)."""
    check_spec(spec)
    return ReducePlan(spec.dtype, spec.block, spec.items_per_thread, spec.algorithm, str(spec.static("op")))
