"""The Block Scan family's mutants: its reference model with one small, named deviation each.

Each overrides one step of :class:`ScanModel` (a deviation every family's model can have is made from
:mod:`.deviations`); they run on the family's own contract only, and each must fail some of its pr cases, every
failing case naming one of ``rules``. BlockScan has no partial tiles (no valid_items), so no mutant applies the
operator to an invalid item; a missing barrier is a GPU probe of the numba and cutlass backends (``scan-racy``,
caught by racecheck), not a mutant here.
"""

from __future__ import annotations

import numpy as np
from coopcheck.vocabulary import WARP_SIZE

from . import deviations
from .deviations import MutantTraits, common_mutants, wrong_identity
from .model import Array
from .scan_model import SCAN, Call, LogicalWarp, ScanModel, Seed


class ScanMutant(MutantTraits, ScanModel):
    """A scan model with one deviation; ``name`` is its pytest id."""

    family = SCAN
    targets = SCAN


class WrongIdentity(ScanMutant):
    """A scan without a seed runs as one seeded with the operator's identity, the wrong one: min seeded with the
    dtype's lowest value, max with its highest (each the other's identity), sum with 1, matmul with the zero
    matrix."""

    name = "scan-wrong-identity"
    rules = ("inclusive", "exclusive")

    def seed_of(self, call: Call, seed: Seed) -> Seed:
        if seed.kind != "none":
            return super().seed_of(call, seed)
        return Seed("initial", np.full_like(seed.value, wrong_identity(call.op, seed.value.dtype)), seed.callback)


class ModeSwapped(ScanMutant):
    """The other scan is finished in registers: inclusive where exclusive is asked, exclusive where inclusive is."""

    name = "scan-mode-swapped"
    rules = ("inclusive", "exclusive")
    diagnosis = "mode-swapped"

    def mode(self, call: Call) -> str:
        return "inclusive" if super().mode(call) == "exclusive" else "exclusive"


class ExclusiveShiftOwnSlot(ScanMutant):
    """An exclusive scan is the inclusive one shifted up one item, and the item that crosses into a thread is read
    from the thread's own slot instead of the one before it: item 0 of every thread is its own last inclusive
    item."""

    name = "scan-exclusive-shift-own-slot"
    rules = ("exclusive",)

    def in_registers(self, call: Call, step: str, values: Array, prefix: Array, apply: Array,
                     exclusive: bool) -> Array:
        if step != "thread-scan" or not exclusive:
            return super().in_registers(call, step, values, prefix, apply, exclusive)
        inclusive = super().in_registers(call, step, values, prefix, apply, exclusive=False)
        return np.concatenate([inclusive[:, -1:], inclusive[:, :-1]], axis=1)


class ExclusiveSumUnseeded(ScanMutant):
    """ExclusiveSum runs ExclusiveScan without an initial value, not from T{}: item 0 of the tile is what thread 0's
    undefined prefix holds (its own partial), not 0."""

    name = "scan-exclusive-sum-unseeded"
    rules = ("exclusive-sum-zero",)

    def seed_of(self, call: Call, seed: Seed) -> Seed:
        return seed


class CallbackOutsideFirstWarp(ScanMutant):
    """warp_scans drops its ``warp_id == 0`` test: every thread calls its prefix callback with the block aggregate
    (thread 0's return value still prefixes the tile, so only the calls show it)."""

    name = "scan-callback-outside-first-warp"
    rules = ("prefix-callback",)

    def callers(self, call: Call, at: Array) -> Array:
        return at


class CallbackPerWarp(ScanMutant):
    """warp_scans calls the prefix callback per warp: lane 0 of every warp calls its callback with its warp's
    aggregate and prefixes its warp with what it returned (the warps before it never in the prefix)."""

    name = "scan-callback-per-warp"
    rules = ("prefix-callback", "seed-applied", "prefix-carried")

    def warp_scans(self, call: Call, partial: Array, seed: Seed) -> tuple[Array, Array]:
        if seed.kind != "prefix":
            return super().warp_scans(call, partial, seed)
        everyone, lane = np.arange(len(partial)), call.rank % WARP_SIZE
        warp = LogicalWarp(everyone, lane, call.rank - lane, WARP_SIZE)
        exclusive, aggregate = self.warp_exclusive(call, partial, warp, Seed("none", seed.value, seed.callback))
        leads = everyone[lane == 0]
        returned = exclusive.copy()
        returned[leads] = self.callback(call, seed, leads, aggregate[leads])
        lead = returned[call.lane(everyone, call.rank - lane)]
        out = self.combine(call, "block-prefix", lead, exclusive)
        out[leads] = lead[leads]
        return out, aggregate


class SeedTwice(ScanMutant):
    """The seed (the initial value, or the prefix thread 0's callback returned) is folded in twice wherever it is
    applied: op(seed, op(seed, x))."""

    name = "scan-seed-twice"
    rules = ("seed-applied",)

    def combine(self, call: Call, step: str, a: Array, b: Array) -> Array:
        if step in ("seed", "block-prefix"):
            b = super().combine(call, step, a, b)
        return super().combine(call, step, a, b)


class SeedIgnored(ScanMutant):
    """The seed never reaches the scan: an initial value is dropped, a prefix callback never called."""

    name = "scan-seed-ignored"
    # An identity seed ignored shows only in item 0 of an exclusive scan, which is then undefined.
    rules = ("seed-applied", "prefix-callback", "exclusive")
    diagnosis = "seed-ignored"

    def seed_of(self, call: Call, seed: Seed) -> Seed:
        return super().seed_of(call, Seed("none", seed.value, seed.callback))


class AggregateWithSeed(ScanMutant):
    """The block aggregate a scan with an initial value returns has the initial value folded in."""

    name = "scan-aggregate-with-seed"
    rules = ("block-aggregate",)
    diagnosis = "aggregate-with-seed"

    def seeded_aggregate(self, call: Call, initial: Array, aggregate: Array) -> Array:
        return self.combine(call, "seed", initial, aggregate)


class PrefixNotCarried(ScanMutant):
    """The prefix callback returns its running prefix without folding the aggregate into it: every tile is seeded
    with the initial value."""

    name = "scan-prefix-not-carried"
    rules = ("prefix-carried",)
    diagnosis = "prefix-not-carried"

    def callback(self, call: Call, seed: Seed, at: Array, aggregate: Array) -> Array:
        cb = seed.callback
        cb.argument[at], cb.calls[at] = aggregate, cb.calls[at] + 1
        returned: Array = cb.running[at].copy()
        return returned


class ReversedInOneStep(ScanMutant):
    """One step of the algorithm takes its operands the other way round: op(later, earlier)."""

    rules = ("tile-order",)
    step: str

    def combine(self, call: Call, step: str, a: Array, b: Array) -> Array:
        return super().combine(call, step, b, a) if step == self.step else super().combine(call, step, a, b)


class ThreadReduceReversed(ReversedInOneStep):
    """Each thread reduces its items last to first: op(item i, partial) (the rest of the scan in order)."""

    name = "scan-thread-reduce-reversed"
    step = "thread-reduce"


class WarpScanReversed(ReversedInOneStep):
    """The warp scan's shuffle step folds the earlier lane's value on the right: op(own, earlier)."""

    name = "scan-warp-scan-reversed"
    step = "warp-scan"


class SeedOnTheRight(ReversedInOneStep):
    """The initial value goes right of the warp scan's results, op(x, seed), instead of left of them."""

    name = "scan-seed-on-the-right"
    step = "seed"


class DownsweepReversed(ReversedInOneStep):
    """raking's downsweep folds each partial left of the running prefix: op(partial, prefix)."""

    name = "scan-downsweep-reversed"
    step = "downsweep"


class WarpAggregatesReversed(ReversedInOneStep):
    """warp_scans folds each warp's aggregate left of the warps before it: op(warp w, warps 0 to w - 1)."""

    name = "scan-warp-aggregates-reversed"
    step = "warp-aggregates"


class WarpPrefixReversed(ReversedInOneStep):
    """warp_scans puts the prefix of the warps before a lane's warp right of the lane's own exclusive value."""

    name = "scan-warp-prefix-reversed"
    step = "warp-prefix"


class CallbackFoldReversed(ReversedInOneStep):
    """The prefix callback folds a tile's aggregate left of its running prefix: op(aggregate, running)."""

    name = "scan-callback-fold-reversed"
    step = "callback"


class RakingSegmentFloor(ScanMutant):
    """The raking segment is threads / 32 rounded down: a block of 65 threads has 32 raking threads raking
    segments of 2, and the last thread's partial lies in none (its prefix never written, the aggregate without
    it)."""

    name = "scan-raking-segment-floor"
    rules = ("inclusive", "exclusive", "block-aggregate", "prefix-callback")

    def raking_layout(self, call: Call) -> tuple[int, int]:
        threads = call.spec.threads
        rakers = min(threads, WARP_SIZE)
        return threads // rakers, rakers


class InitialOverwritten(deviations.InputOverwritten, ScanMutant):
    """The launch hands the kernel the host's initial values and the kernel clears them after use."""

    name = "scan-initial-overwritten"
    field = "initial"


#: The deviations every family's model has (:mod:`.deviations`), named after this family.
RankYMajor, StaticsUnchecked, FloatCanonicalized, OutputTruncated = common_mutants(ScanMutant, "scan")
FloatCanonicalized.rules = ("float-min-max",)  # a float sum of canonicalized values is within its bound

SCAN_MUTANTS: tuple[type[ScanMutant], ...] = (
    WrongIdentity, ModeSwapped, ExclusiveShiftOwnSlot, ExclusiveSumUnseeded, CallbackOutsideFirstWarp,
    CallbackPerWarp, SeedTwice, SeedIgnored, AggregateWithSeed, PrefixNotCarried, ThreadReduceReversed,
    WarpScanReversed, SeedOnTheRight, DownsweepReversed, WarpAggregatesReversed, WarpPrefixReversed,
    CallbackFoldReversed, RakingSegmentFloor, RankYMajor, StaticsUnchecked, FloatCanonicalized, OutputTruncated,
    InitialOverwritten,
)
