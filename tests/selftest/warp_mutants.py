"""The warp families' mutants (Warp Reduce, Warp Scan): their reference models with one small, named deviation each.

Each overrides one step of :class:`WarpReduceModel` or :class:`WarpScanModel`; a deviation of a step both models
share (the logical warp a thread takes itself to be in, the shuffles' segment) is written once and made for both by
:func:`tests.selftest.deviations.family_mutant`, as are the deviations every family's model can have. They run on
their family's contract only, and each must fail some of its pr cases, every failing case naming one of ``rules``.
Warp Scan has no valid_items (the contract asks no *ScanPartial), so no scan mutant applies the operator to an
invalid lane; its only undefined output is lane 0 of an exclusive scan without a seed (not sum), so no scan mutant
overwrites undefined lanes. ExclusiveSum run without its T{} hides in an integer sum (WarpScanShfl takes the
inclusive result less the item, 0 in lane 0 either way): the contract's exclusive-float-sum rule puts a float one in
pr for it.
"""

from __future__ import annotations

import numpy as np
from coopcheck.vocabulary import WARP_SIZE

from . import deviations
from .deviations import MutantTraits, common_mutants, family_mutant, wrong_identity
from .model import Array
from .warp_model import WARP_REDUCE, WARP_SCAN, Lanes, Reduction, Seed, WarpReduceModel, WarpScanModel


class WarpReduceMutant(MutantTraits, WarpReduceModel):
    """A Warp Reduce model with one deviation; ``name`` is its pytest id."""

    family = WARP_REDUCE
    targets = WARP_REDUCE


class WarpScanMutant(MutantTraits, WarpScanModel):
    """A Warp Scan model with one deviation; ``name`` is its pytest id."""

    family = WARP_SCAN
    targets = WARP_SCAN


# -- deviations of the steps both warp models share ---------------------------------------------------------


class SegmentMask:
    """The shuffles' clamp is CUB's segment mask at every width: c = clamp | (32 - width) << 8, the segment
    (%laneid & mask) and its bound (clamp & ~mask), which is the logical warp for a power of two only; at width 7 a
    lane's shuffle reads across into the neighbouring logical warp, or not past its own lane (NVIDIA/cccl#858)."""

    name = "segment-mask"
    rules = ("logical-warps",)

    def segment_lane(self, w: Lanes, logical: Array) -> Array:
        c = logical | ((WARP_SIZE - w.width) << 8)
        mask = (c >> 8) & (WARP_SIZE - 1)
        bound: Array = (w.hardware_lane & mask) | (c & ~mask & (WARP_SIZE - 1))
        return bound


class LaneFromThreadX:
    """A thread's lane in its logical warp is threadIdx.x % 32 % width, not %laneid % width: the same in a 1-D
    block, another lane (and logical warp) in a 2-D one whose rows are not multiples of the width."""

    name = "lane-from-thread-x"
    rules = ("rank-order",)

    def lane_id(self, w: Lanes) -> Array:
        lane: Array = w.x % WARP_SIZE % w.width
        return lane


class PartialWarpAsWhole:
    """A logical warp's last lane is width - 1 (CUB's LOGICAL_WARP_THREADS - 1), even where it has fewer lanes
    (at the end of a partial hardware warp): shuffles read lanes no thread runs."""

    name = "partial-warp-as-whole"
    rules = ("warp-reduction", "head-segments", "tail-segments", "warp-aggregate")

    def last_lane(self, w: Lanes) -> Array:
        return np.full_like(w.rank, w.width - 1)


SHARED = (SegmentMask, LaneFromThreadX, PartialWarpAsWhole)

# -- Warp Reduce ------------------------------------------------------------------------------------------------


class ReduceWrongIdentity(WarpReduceMutant):
    """Mode reduce pads the invalid lanes with a wrong identity and reduces the whole logical warp: min pads with
    the dtype's lowest value, max with its highest, sum and first with 1, matmul with the zero matrix."""

    name = "warp-reduce-wrong-identity"
    rules = ("valid-lanes",)

    def reduce_down(self, r: Reduction, items: Array, last: Array) -> Array:
        if r.lanes.spec.static("mode") != "reduce":
            return super().reduce_down(r, items, last)
        padded = np.where(self.lane_id(r.lanes) > last, wrong_identity(r.lanes.op, items.dtype), items)
        return super().reduce_down(r, padded, self.last_lane(r.lanes))


class InvalidApplied(WarpReduceMutant):
    """ReduceStep applies the operator to every peer of the logical warp, the invalid lanes past valid_items
    included, and keeps the result only where the peer is valid: results right, but the operator met the invalid
    items (first records their sentinel)."""

    name = "warp-reduce-invalid-item-applied"
    rules = ("invalid-never-applied",)

    def reduce_step(self, r: Reduction, value: Array, offset: int, last: Array) -> Array:
        peer, ok = self.shuffle_down(r.lanes, value, offset, self.last_lane(r.lanes))
        at = np.flatnonzero(ok)
        applied = value.copy()
        applied[at] = self.combine(r, f"reduce-step-{offset}", at, value[at], peer[at])
        return np.where(self.lane_id(r.lanes) + offset <= last, applied, value)


class ValidItemsIgnored(WarpReduceMutant):
    """Mode reduce takes every lane of the logical warp: valid_items is ignored."""

    name = "warp-reduce-valid-items-ignored"
    rules = ("valid-lanes", "invalid-never-applied")
    diagnosis = "invalid-included"

    def valid_last(self, w: Lanes, valid: Array) -> Array:
        return self.last_lane(w)


class HeadFlagIgnored(WarpReduceMutant):
    """Mode head ballots no flag: every logical warp is one segment."""

    name = "warp-reduce-head-flag-ignored"
    rules = ("head-segments",)

    def flag_ballot(self, w: Lanes, flags: Array) -> Array:
        return super().flag_ballot(w, flags & (w.spec.static("mode") != "head"))


class TailFlagIgnored(WarpReduceMutant):
    """Mode tail ballots no flag: every logical warp is one segment."""

    name = "warp-reduce-tail-flag-ignored"
    rules = ("tail-segments",)

    def flag_ballot(self, w: Lanes, flags: Array) -> Array:
        return super().flag_ballot(w, flags & (w.spec.static("mode") != "tail"))


class HeadsAsTails(WarpReduceMutant):
    """Mode head skips the conversion of head flags into tails (the ballot's shift by one lane): a flagged lane
    ends its segment instead of starting one."""

    name = "warp-reduce-heads-as-tails"
    rules = ("head-segments",)
    diagnosis = "flags-swapped"

    def tails(self, w: Lanes, ballot: Array) -> Array:
        return ballot


class ReduceStepReversed(WarpReduceMutant):
    """The ReduceStep at offset 1 takes its operands the other way round, op(peer, own); every other step is in
    lane order."""

    name = "warp-reduce-step-reversed"
    # first's result can equal the one of the other flags (the oracle's flags-swapped): a diagnosis that names a
    # segment rule only.
    rules = ("lane-order", "head-segments", "tail-segments")

    def combine(self, r: Reduction, step: str, at: Array, a: Array, b: Array) -> Array:
        if step == "reduce-step-1":
            a, b = b, a
        return super().combine(r, step, at, a, b)


class UndefinedLanesStored(WarpReduceMutant):
    """Every lane stores its return value at its logical warp's lane 0 (an index by logical warp, not by thread):
    the last lane's undefined partial lands over lane 0's result, and no other lane's slot is written."""

    name = "warp-reduce-undefined-lanes-stored"
    # The last lane's partial can be the fold over every lane (the oracle's invalid-included): valid-lanes.
    rules = ("warp-reduction", "head-segments", "tail-segments", "valid-lanes")

    def stores(self, w: Lanes, abi_rank: Array) -> tuple[Array, Array]:
        first = abi_rank[w.lane_of[w.block * w.spec.threads + w.rank - self.lane_id(w)]]
        key = w.block * w.spec.threads + first
        order = np.lexsort((w.rank, key))  # by slot, then lane: the highest lane's store lands
        lands = order[np.append(key[order][1:] != key[order][:-1], True)]
        return lands, first[lands]


class ItemsOverwritten(deviations.InputOverwritten, WarpReduceMutant):
    """The launch hands the kernel the host's items buffer and the kernel clears it after use."""

    name = "warp-reduce-items-overwritten"
    field = "items"


# -- Warp Scan --------------------------------------------------------------------------------------------------


class ScanWrongIdentity(WarpScanMutant):
    """A scan without a seed runs as one seeded with the operator's identity, the wrong one: min seeded with the
    dtype's lowest value, max with its highest, sum with 1 (ExclusiveSum's T{} too), matmul with the zero matrix."""

    name = "warp-scan-wrong-identity"
    rules = ("inclusive", "exclusive", "exclusive-lane-zero")

    def seed_of(self, w: Lanes, seed: Seed) -> Seed:
        if seed.kind != "none":
            return super().seed_of(w, seed)
        return Seed("initial", np.full_like(seed.value, wrong_identity(w.op, seed.value.dtype)))


class ExclusiveSumWithoutZero(WarpScanMutant):
    """ExclusiveSum runs without its T{}: an unseeded exclusive sum's lane 0 keeps what the shuffle up returns (its
    own inclusive result), and a float lane l the sum over lanes 1 to l - 1 of the lane before."""

    name = "warp-scan-exclusive-sum-without-zero"
    rules = ("exclusive", "exclusive-float-sum")

    def seed_of(self, w: Lanes, seed: Seed) -> Seed:
        return seed


class ExclusiveOffByOne(WarpScanMutant):
    """The exclusive result is shuffled up two lanes, not one: lane l holds the lanes before l - 1 (lane 1 its own
    inclusive result)."""

    name = "warp-scan-exclusive-off-by-one"
    rules = ("exclusive",)

    def exclusive_shift(self, w: Lanes, inclusive: Array) -> Array:
        got, _ = self.shuffle_up(w, inclusive, 2, np.zeros_like(w.rank))
        return got


class ModeSwapped(WarpScanMutant):
    """Each lane returns the other scan: inclusive where exclusive is asked, exclusive where inclusive is."""

    name = "warp-scan-mode-swapped"
    rules = ("inclusive", "exclusive")
    diagnosis = "mode-swapped"

    def mode(self, w: Lanes) -> str:
        return "inclusive" if super().mode(w) == "exclusive" else "exclusive"


class ScanStepReversed(WarpScanMutant):
    """The scan step at offset 1 takes its operands the other way round, op(own, peer); every other step is in
    lane order."""

    name = "warp-scan-step-reversed"
    rules = ("lane-order",)

    def combine(self, w: Lanes, step: str, a: Array, b: Array) -> Array:
        if step == "scan-step-1":
            a, b = b, a
        return super().combine(w, step, a, b)


class SeedTwice(WarpScanMutant):
    """The initial value is folded in twice: op(seed, op(seed, x)) (an exclusive lane 0 still the seed)."""

    name = "warp-scan-seed-twice"
    rules = ("seed-applied",)

    def combine(self, w: Lanes, step: str, a: Array, b: Array) -> Array:
        if step == "seed":
            b = super().combine(w, step, a, b)
        return super().combine(w, step, a, b)


class SeedIgnored(WarpScanMutant):
    """The initial value never reaches the scan (ExclusiveSum still scans from T{})."""

    name = "warp-scan-seed-ignored"
    # An identity seed ignored shows only in lane 0 of an exclusive scan, which is then undefined.
    rules = ("seed-applied", "exclusive")
    diagnosis = "seed-ignored"

    def seed_of(self, w: Lanes, seed: Seed) -> Seed:
        return super().seed_of(w, Seed("none", seed.value))


class AggregateWithSeed(WarpScanMutant):
    """The warp aggregate is broadcast after the seed is applied: the initial value is in it."""

    name = "warp-scan-aggregate-with-seed"
    rules = ("warp-aggregate",)
    diagnosis = "aggregate-with-seed"

    def aggregate(self, w: Lanes, inclusive: Array, seed: Seed) -> Array:
        got = super().aggregate(w, inclusive, seed)
        return self.combine(w, "seed", seed.value, got) if seed.kind == "initial" else got


class InitialOverwritten(deviations.InputOverwritten, WarpScanMutant):
    """The launch hands the kernel the host's initial values and the kernel clears them after use."""

    name = "warp-scan-initial-overwritten"
    field = "initial"


#: The deviations of the steps both warp models share, and those every family's model has, named per family.
ReduceSegmentMask, ReduceLaneFromThreadX, ReducePartialWarpAsWhole = (
    family_mutant(d, WarpReduceMutant, "warp-reduce") for d in SHARED)
# Another logical warp's lanes past valid_items can fold like the invalid lanes (the oracle's invalid-included).
ReduceLaneFromThreadX.rules = (*LaneFromThreadX.rules, "valid-lanes")
ScanSegmentMask, ScanLaneFromThreadX, ScanPartialWarpAsWhole = (
    family_mutant(d, WarpScanMutant, "warp-scan") for d in SHARED)
ReduceRankYMajor, ReduceStaticsUnchecked, ReduceFloatCanonicalized, ReduceOutputTruncated = common_mutants(
    WarpReduceMutant, "warp-reduce")
ScanRankYMajor, ScanStaticsUnchecked, ScanFloatCanonicalized, ScanOutputTruncated = common_mutants(
    WarpScanMutant, "warp-scan")
ScanFloatCanonicalized.rules = ("float-min-max",)  # Warp Scan's rule on float min and max forbids canonicalization

WARP_REDUCE_MUTANTS: tuple[type[WarpReduceMutant], ...] = (
    ReduceWrongIdentity, InvalidApplied, ValidItemsIgnored, HeadFlagIgnored, TailFlagIgnored, HeadsAsTails,
    ReduceStepReversed, UndefinedLanesStored, ReduceSegmentMask, ReduceLaneFromThreadX, ReducePartialWarpAsWhole,
    ReduceRankYMajor, ReduceStaticsUnchecked, ReduceFloatCanonicalized, ReduceOutputTruncated, ItemsOverwritten,
)
WARP_SCAN_MUTANTS: tuple[type[WarpScanMutant], ...] = (
    ScanWrongIdentity, ExclusiveSumWithoutZero, ExclusiveOffByOne, ModeSwapped, ScanStepReversed, SeedTwice,
    SeedIgnored, AggregateWithSeed,
    ScanSegmentMask, ScanLaneFromThreadX, ScanPartialWarpAsWhole, ScanRankYMajor, ScanStaticsUnchecked,
    ScanFloatCanonicalized, ScanOutputTruncated, InitialOverwritten,
)
