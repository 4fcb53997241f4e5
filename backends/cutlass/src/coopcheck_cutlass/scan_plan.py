"""The static plan of one block Scan call (algorithms, operators, modes, seeds and rules: :mod:`coopcheck.scan`'s): the
scratch it takes, the registers it keeps and its schedule, the steps every thread runs between folding its own items
into its partial and scanning them with the exclusive prefix the schedule leaves it.

Pure Python (no cutlass import). The schedules follow CUB's BlockScan specializations, every exchange through shared
scratch across block barriers (where CUB uses warp shuffles too, a doubling scan through the scratch):

* raking and raking_memoize (``block_scan_raking.cuh``): every partial to a grid at its rank; at most a warp of
  raking threads reduce their segments in order (the upsweep), scan their totals, take the seed, and write each
  partial's exclusive prefix back over it (the downsweep). raking_memoize keeps the segment in registers between the
  two, as far as :data:`MEMO_BYTES` reach. A block of raking threads only (a warp or less) scans the partials
  directly, as CUB's warp-synchronous path;
* warp_scans (``block_scan_warp_scans.cuh``): each warp scans its lanes' partials, its last lane publishes the warp's
  aggregate, and every thread folds in the aggregates of the warps before its own (as CUB, in order; the prefix each
  warp takes passing through the scratch, where CUB selects it in every thread).

A schedule is a tuple of :class:`Step` over a small register file (:data:`X` ... :data:`S`, then the memoized
segment) and the scratch; slots and guards are plain functions of the rank that the DSL traces with run-time values
and host tests evaluate on NumPy ints, so the order, the guards and the barriers are checked without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import coopcheck
from coopcheck.scan import check_spec
from coopcheck.vocabulary import WARP_SIZE

from coopcheck_cutlass.plan import DTYPE_BYTES, ItemsPlan, RakingGrid

#: What a step does in the threads its guard admits: register ``src`` to scratch ``slot``; scratch ``slot`` to
#: register ``to``; ``to = op(left, right)`` over registers; ``to = src``; ``S = prefix_op(A)`` (the block prefix
#: callback); a block barrier (no guard).
PUT, GET, JOIN, COPY, CALL, SYNC = "put", "get", "join", "copy", "call", "sync"
#: The registers: the thread's partial, then its exclusive prefix; a running value (a raking total, a warp scan's
#: inclusive value, then a warp's prefix); a temporary; the block aggregate; the seed (an initial value, or the block
#: prefix the callback returned). The memoized segment follows them.
X, U, T, A, S = range(5)
MEMO = 5
#: Register bytes raking_memoize keeps of a segment: a 1024-thread block leaves a thread 64 registers, and a whole
#: segment of 32 eight-byte items would take all of them (local memory, which the contract forbids).
MEMO_BYTES = 128
#: Items of one or two bytes take a register each, and ptxas masks their min / max back to width: a whole segment of
#: 32 uint8 items at 1024 threads took 75 registers (8 to 32 bytes of local memory); 24 items fit.
SUBWORD_MEMO_ITEMS = 24

Index = Callable[[Any], Any]
Guard = Callable[[Any], Any]


def everyone(rank: Any) -> bool:
    """The guard of a step that every thread takes."""
    return True


@dataclass(frozen=True)
class Step:
    """One step of a schedule: ``kind`` in the threads where ``when(rank)``."""

    kind: str
    when: Guard = everyone
    slot: Index | None = None
    to: int | None = None
    src: int | None = None  # PUT and COPY: the register read
    left: int | None = None  # JOIN: the earlier operand
    right: int | None = None  # JOIN: the later operand


BARRIER = Step(SYNC)


def _both(first: Guard, second: Guard) -> Guard:
    return lambda rank: first(rank) & second(rank)


@dataclass(frozen=True)
class ScanPlan(ItemsPlan, RakingGrid):
    """A validated block Scan configuration; every field is a compile-time constant."""

    algorithm: str
    op: str
    mode: str
    seed: str

    @property
    def method(self) -> str:
        """The algorithm, as the scratch checks shared with the other families name a call's."""
        return self.algorithm

    @property
    def inclusive(self) -> bool:
        return self.mode == "inclusive"

    @property
    def seeded(self) -> bool:
        """Whether a seed prefixes the tile (then thread 0 has a prefix too)."""
        return self.seed != "none"

    @property
    def warp_synchronous(self) -> bool:
        """raking on a block of raking threads only (one segment each): CUB scans the partials directly."""
        return self.algorithm != "warp_scans" and self.raking_threads == self.threads

    @property
    def warps(self) -> int:
        return -(-self.threads // WARP_SIZE)

    @property
    def grid_items(self) -> int:
        """Scratch elements of the partials: one a thread (none on raking's warp-synchronous path)."""
        return 0 if self.warp_synchronous else self.threads

    @property
    def lanes(self) -> int:
        """The second level's scratch elements: the raking threads' totals, or the warps' aggregates."""
        return self.warps if self.algorithm == "warp_scans" else self.raking_threads

    @property
    def prefix_slot(self) -> int:
        """Where the callback's block prefix passes from thread 0 to the others (only with seed prefix)."""
        return self.grid_items + self.lanes

    @property
    def scratch_items(self) -> int:
        return self.prefix_slot + (self.seed == "prefix")

    @property
    def memoized(self) -> int:
        """Segment items raking_memoize keeps in registers (the rest it reads again from the grid)."""
        if self.algorithm != "raking_memoize" or self.warp_synchronous:
            return 0
        size = DTYPE_BYTES[self.dtype]
        return min(self.segment, SUBWORD_MEMO_ITEMS if size < 4 else MEMO_BYTES // size)

    @property
    def registers(self) -> int:
        """The register file's length: :data:`X` to :data:`S`, then the memoized segment."""
        return MEMO + self.memoized

    @property
    def callers(self) -> Guard:
        """The threads that call the block prefix callback: raking's raking threads, warp_scans' first warp."""
        count = min(self.threads, WARP_SIZE) if self.algorithm == "warp_scans" else self.raking_threads
        return lambda rank: rank < count

    def lane_scan(self, base: int, lane: Index, count: int) -> tuple[Step, ...]:
        """An inclusive doubling scan of :data:`U` in segments of ``count`` lanes: thread r is lane ``lane(r)`` of
        the segment whose scratch starts at ``base + r - lane(r)`` (raking: one segment of the raking threads;
        warp_scans: one a warp); lane l takes lane l - d's value for d = 1, 2, 4, ... below ``count``, each read and
        each write across a barrier."""
        def own(rank: Any) -> Any:
            return base + rank

        steps = [Step(PUT, lambda rank: lane(rank) < count, own, src=U), BARRIER]
        distance = 1
        while distance < count:
            def takes(rank: Any, d: int = distance) -> Any:
                return (lane(rank) >= d) & (lane(rank) < count)

            steps += [Step(GET, takes, (lambda d: lambda rank: base + rank - d)(distance), to=T), BARRIER,
                      Step(JOIN, takes, to=U, left=T, right=U), Step(PUT, takes, own, src=U), BARRIER]
            distance *= 2
        return tuple(steps)

    def seeding(self, among: Guard) -> tuple[Step, ...]:
        """The seed into the exclusive prefix :data:`X` of the threads ``among`` (thread 0's becomes the seed);
        with seed prefix the callers call the callback first and thread 0's return value reaches them all."""
        if not self.seeded:
            return ()
        steps: tuple[Step, ...] = ()
        if self.seed == "prefix":
            slot = self.prefix_slot
            steps = (Step(CALL, self.callers), Step(PUT, lambda rank: rank == 0, lambda rank: slot, src=S), BARRIER,
                     Step(GET, among, lambda rank: slot, to=S))
        return (*steps, Step(JOIN, _both(among, lambda rank: rank > 0), to=X, left=S, right=X),
                Step(COPY, lambda rank: rank == 0, to=X, src=S))

    @property
    def raking(self) -> tuple[Step, ...]:
        """CUB's raking: the upsweep, the raking threads' scan, the seed, the downsweep; the exclusive prefix of
        thread r's partial ends at grid[r]."""
        rakers, base = self.raking_threads, self.grid_items

        def rakes(rank: Any) -> Any:
            return rank < rakers

        if self.warp_synchronous:
            upsweep: tuple[Step, ...] = (Step(COPY, to=U, src=X),)
        else:
            upsweep = (Step(PUT, slot=lambda rank: rank, src=X), BARRIER, *self.upsweep)
        scanned = (*self.lane_scan(base, lambda rank: rank, rakers),
                   Step(GET, _both(rakes, lambda rank: rank > 0), lambda rank: base + rank - 1, to=X),
                   Step(GET, slot=lambda rank: base + rakers - 1, to=A),
                   *self.seeding(rakes))
        if self.warp_synchronous:
            return (*upsweep, *scanned)
        return (*upsweep, *scanned, *self.downsweep, BARRIER, Step(GET, slot=lambda rank: rank, to=X))

    def in_segment(self, j: int) -> Guard:
        """Whether item j of raking thread r's segment exists (implies r is a raking thread)."""
        seg, threads = self.segment, self.threads
        return lambda rank: rank * seg + j < threads

    def segment_slot(self, j: int) -> Index:
        """The grid slot of item j of raking thread r's segment."""
        seg = self.segment
        return lambda rank: rank * seg + j

    @property
    def upsweep(self) -> tuple[Step, ...]:
        """Each raking thread reduces its segment in order into :data:`U` (raking_memoize: keeping it)."""
        steps: list[Step] = []
        for j in range(self.segment):
            here, at = self.in_segment(j), self.segment_slot(j)
            if j < self.memoized:
                steps.append(Step(GET, here, at, to=MEMO + j))
                steps.append(Step(JOIN, here, to=U, left=U, right=MEMO + j) if j else Step(COPY, here, to=U, src=MEMO))
            elif j:
                steps += [Step(GET, here, at, to=T), Step(JOIN, here, to=U, left=U, right=T)]
            else:
                steps.append(Step(GET, here, at, to=U))
        return tuple(steps)

    @property
    def downsweep(self) -> tuple[Step, ...]:
        """Each raking thread scans its segment from its exclusive prefix :data:`X` and writes every partial's
        exclusive prefix over it (thread 0 without a seed leaves its first partial: it has no prefix)."""
        steps: list[Step] = []
        for j in range(self.segment):
            here, at = self.in_segment(j), self.segment_slot(j)
            if j < self.memoized:
                value = MEMO + j
            else:
                value = T
                steps.append(Step(GET, here, at, to=T))
            prefixed = here if self.seeded or j else _both(here, lambda rank: rank > 0)
            steps += [Step(PUT, prefixed, at, src=X),
                      Step(JOIN, prefixed, to=X, left=X, right=value)]
            if not self.seeded and j == 0:
                steps.append(Step(COPY, _both(here, lambda rank: rank == 0), to=X, src=value))
        return tuple(steps)

    @property
    def warp_scans(self) -> tuple[Step, ...]:
        """CUB's warp_scans: each warp scans its partials; its last lane publishes the warp's aggregate; every
        thread folds the warps' aggregates in order into the block aggregate, the first lane of each later warp
        storing the running value on the way to its grid slot (free since the aggregates' barrier) as its warp's
        prefix, which the warp reads back across a barrier and folds into its exclusive prefixes; then the seed.

        CUB selects the prefix in every thread instead (``if (warp_id == WARP) warp_prefix = block_aggregate``):
        ptxas ran that chain of selects behind the fold, every running aggregate live until its select (31 at 32
        warps), and 8-byte items spilled at 1024 threads with the prefix callback. Stored, each dies at its store,
        and the next aggregate's load stays behind the store (to a slot the compilers cannot tell from it)."""
        threads, warps, lanes = self.threads, self.warps, min(self.threads, WARP_SIZE)
        base = self.grid_items

        def lane(rank: Any) -> Any:
            return rank % WARP_SIZE

        def warp(rank: Any) -> Any:
            return rank // WARP_SIZE

        steps = [Step(COPY, to=U, src=X), *self.lane_scan(0, lane, lanes),
                 Step(GET, lambda rank: lane(rank) > 0, lambda rank: rank - 1, to=X),
                 Step(PUT, lambda rank: (lane(rank) == WARP_SIZE - 1) | (rank == threads - 1),
                      lambda rank: base + warp(rank), src=U), BARRIER,
                 Step(GET, slot=lambda rank: base, to=A)]
        if warps > 1:
            def later(rank: Any) -> Any:
                return warp(rank) > 0

            for w in range(1, warps):
                steps += [Step(PUT, (lambda at: lambda rank: rank == at)(w * WARP_SIZE), lambda rank: rank, src=A),
                          Step(GET, slot=(lambda at: lambda rank: base + at)(w), to=T),
                          Step(JOIN, to=A, left=A, right=T)]
            steps += [BARRIER, Step(GET, later, lambda rank: warp(rank) * WARP_SIZE, to=U),
                      Step(JOIN, _both(later, lambda rank: lane(rank) > 0), to=X, left=U, right=X),
                      Step(COPY, _both(later, lambda rank: lane(rank) == 0), to=X, src=U)]
        return (*steps, *self.seeding(everyone))

    @property
    def schedule(self) -> tuple[Step, ...]:
        """The algorithm's steps, then a barrier: the caller may reuse the scratch as soon as the call returns."""
        steps = self.warp_scans if self.algorithm == "warp_scans" else self.raking
        return (*steps, BARRIER)


def scan_plan(spec: coopcheck.KernelSpec) -> ScanPlan:
    """The checked plan of a harness spec (raises ``coopcheck.InvalidParameter`` for a rejected static)."""
    check_spec(spec)
    return ScanPlan(spec.dtype, spec.block, spec.items_per_thread, spec.algorithm, str(spec.static("op")),
                    str(spec.static("mode")), str(spec.static("seed")))
