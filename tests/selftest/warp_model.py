"""Per-thread reference models of the warp families' contract kernels (Warp Reduce, Warp Scan), for their mutation
self-test.

Written the way CUB's WarpReduceShfl and WarpScanShfl run (cub/warp/specializations/warp_reduce_shfl.cuh and
warp_scan_shfl.cuh), not the way the oracles compute them: each thread holds one item, and the lanes of a logical
warp exchange values only through shuffles of their hardware warp (PTX ``shfl.sync`` down, up and idx: the source
lane is checked against a clamp and one out of it gives the caller its own value; a lane no thread runs gives an
undefined one) and a ballot. A reduction reduces down (at offset 2**k lane l takes lane l + 2**k's partial while
that lane is within its segment, the operator's operands in lane order, so a segment's first lane ends with its
fold), a scan up (Kogge-Stone: lane l takes lane l - 2**k's, so it ends with lanes 0 to l). The shuffles' segment is
the thread's logical warp in the ABI's geometry, at any width 1 to 32, partial ones included: CUB's segment mask
(``(32 - width) << 8`` in shfl's c operand) says that for a power of two only (NVIDIA/cccl#858), and its last lane
is the logical warp's last lane present, not ``width - 1``. Threads run in lock-step as NumPy lanes (one per thread
of the grid); each step a mutant may change is one method, and every application of the operator names its step.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import coopcheck
import numpy as np
from coopcheck import warp_reduce, warp_scan
from coopcheck.vocabulary import WARP_SIZE

from .model import SCRATCH_POISON, Array, ThreadSteps, grid_threads, linear_rank
from .reduce_model import apply_operator, recording_operator

#: The contracts these models run.
WARP_REDUCE = ("warp.reduce",)
WARP_SCAN = ("warp.scan",)


@dataclass(frozen=True)
class Lanes:
    """One launch's threads as the warp primitive sees them: one entry per lane (thread of the grid)."""

    spec: coopcheck.KernelSpec
    block: Array  # block id
    x: Array  # threadIdx.x
    rank: Array  # rank as the primitive computes it
    lane_of: Array  # block * threads + rank -> lane: where a shuffle finds another thread

    @property
    def op(self) -> str:
        return str(self.spec.static("op"))

    @property
    def width(self) -> int:
        return warp_reduce.width(self.spec)

    @property
    def hardware_lane(self) -> Array:
        """%laneid: the thread's lane in its hardware warp (32 consecutive ranks)."""
        lane: Array = self.rank % WARP_SIZE
        return lane

    @property
    def warp_threads(self) -> Array:
        """Threads of the thread's hardware warp (the block's last one may be partial)."""
        first = self.rank - self.hardware_lane
        count: Array = np.minimum(WARP_SIZE, self.spec.threads - first)
        return count


def poison(dtype: np.dtype) -> np.generic:
    """What a shuffle from a lane no thread runs returns (undefined): the scratch poison's bytes."""
    value: np.generic = np.full(1, SCRATCH_POISON, dtype=np.uint8).repeat(dtype.itemsize).view(dtype)[0]
    return value


class WarpSteps(ThreadSteps):
    """The steps both warp models share: the logical warp a thread takes itself to be in, and the shuffles."""

    #: The family's kernel ABI (coopcheck.warp_reduce or coopcheck.warp_scan).
    abi: ModuleType

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec:
        """Refuse bad statics as a backend's public entry point does."""
        self.abi.check_spec(spec)
        return spec

    def lanes(self, spec: coopcheck.KernelSpec, n_blocks: int) -> tuple[Lanes, Array]:
        """(the launch's lanes, each lane's ABI rank: where it reads its inputs and writes its outputs)."""
        b, x, y, z = grid_threads(spec.block, n_blocks)
        rank = self.rank(spec.block, x, y, z)
        lane_of = np.empty(len(b), dtype=np.int64)
        lane_of[b * spec.threads + rank] = np.arange(len(b))
        return Lanes(spec, b, x, rank, lane_of), linear_rank(spec.block, x, y, z)

    def lane_id(self, w: Lanes) -> Array:
        """The thread's lane in its logical warp: %laneid % width (the logical warps cut from each hardware warp's
        lane 0)."""
        lane: Array = w.hardware_lane % w.width
        return lane

    def warp_base(self, w: Lanes) -> Array:
        """The hardware lane of the thread's logical warp's lane 0."""
        return w.hardware_lane - self.lane_id(w)

    def last_lane(self, w: Lanes) -> Array:
        """The last lane of the thread's logical warp: width - 1, or the last one present in a partial one."""
        last: Array = np.minimum(w.width, w.warp_threads - self.warp_base(w)) - 1
        return last

    def segment_lane(self, w: Lanes, logical: Array) -> Array:
        """The hardware lane of lane ``logical`` of the shuffle's segment (the thread's logical warp): shfl's
        clamp bound."""
        return self.warp_base(w) + logical

    def shuffle(self, w: Lanes, values: Array, source: Array, ok: Array) -> tuple[Array, Array]:
        """(what shfl.sync returns, its predicate): hardware lane ``source``'s value where ``ok`` (and within the
        hardware warp), else the caller's own; undefined (poison) from a lane no thread runs."""
        ok = ok & (source >= 0) & (source < WARP_SIZE)
        runs = ok & (source < w.warp_threads)
        rank = np.where(runs, w.rank - w.hardware_lane + source, w.rank)
        got = values[w.lane_of[w.block * w.spec.threads + rank]]
        got[ok & ~runs] = poison(values.dtype)
        return got, ok

    def shuffle_down(self, w: Lanes, values: Array, offset: int, last: Array) -> tuple[Array, Array]:
        """shfl.sync.down: lane l + offset's value, clamped at lane ``last`` of the segment."""
        source = w.hardware_lane + offset
        return self.shuffle(w, values, source, source <= self.segment_lane(w, last))

    def shuffle_up(self, w: Lanes, values: Array, offset: int, first: Array) -> tuple[Array, Array]:
        """shfl.sync.up: lane l - offset's value, clamped at lane ``first`` of the segment."""
        source = w.hardware_lane - offset
        return self.shuffle(w, values, source, source >= self.segment_lane(w, first))

    def shuffle_index(self, w: Lanes, values: Array, lane: Array, last: Array) -> tuple[Array, Array]:
        """shfl.sync.idx: the value of lane ``lane`` of the segment, clamped at its lane ``last``."""
        source = self.segment_lane(w, lane)
        return self.shuffle(w, values, source, source <= self.segment_lane(w, last))

    def steps(self, w: Lanes) -> list[int]:
        """The shuffle offsets: 1, 2, 4, ... below the width (CUB's STEPS = Log2<width>, rounded up)."""
        return [1 << k for k in range((w.width - 1).bit_length())]


@dataclass(frozen=True)
class Reduction:
    """One launch's warp reductions as its threads see them: one entry per lane."""

    lanes: Lanes
    sentinel: Array  # the block's sentinel
    seen: Array  # bool: whether the lane's operator saw the sentinel (written by the operator)


class WarpReduceModel(WarpSteps):
    """A correct backend of Warp Reduce: the kernel of ``coopcheck.warp_reduce``'s ABI, as WarpReduceShfl.

    >>> spec = coopcheck.KernelSpec("warp.reduce", "int32", (6,), 1, "any",
    ...                             variant=(("width", "4"), ("op", "sum"), ("mode", "reduce")))
    >>> batch = coopcheck.WarpReduceBatch(np.array([1, 2, 3, 99, 5, 6], np.int32), np.zeros(6, np.uint8),
    ...                                   np.array([3], np.int32), np.array([99], np.int32), 6)
    >>> [int(v) for v in WarpReduceModel().launch(spec, batch)[[0, 4]]]
    [6, 11]
    """

    abi = warp_reduce

    def launch(self, spec: coopcheck.KernelSpec, batch: coopcheck.WarpReduceBatch) -> Array:
        """Run the batched kernel (one block per case instance) and return ``dst``; the batch is left unchanged."""
        threads, n = spec.threads, batch.n_blocks
        w, abi_rank = self.lanes(spec, n)
        at = w.block * threads + abi_rank
        items = self.register(np.asarray(batch.items)[at])
        r = Reduction(w, self.register(np.asarray(batch.sentinel))[w.block], np.zeros(len(at), dtype=bool))
        if spec.static("mode") == "reduce":
            last = self.valid_last(w, np.asarray(batch.valid).astype(np.int64)[w.block])
        else:
            last = self.segment_last(w, np.asarray(batch.flags)[at] != 0)
        returned = self.reduce_down(r, items, last)
        out = warp_reduce.out_length(spec)
        dst = np.full(n * out, poison(items.dtype), dtype=items.dtype)
        stores, slot = self.stores(w, abi_rank)
        dst[w.block[stores] * out + slot] = returned[stores]
        dst[w.block * out + threads + abi_rank] = r.seen.astype(items.dtype)
        return dst

    # -- the primitive's steps (each one a mutant may change; rank, register: ThreadSteps; the rest WarpSteps) --

    def combine(self, r: Reduction, step: str, at: Array, a: Array, b: Array) -> Array:
        """One application of the operator in lanes ``at`` in ``step`` (reduce-step-<offset>): ``a``
        covers earlier lanes than ``b``; first records an operand equal to the sentinel."""
        with np.errstate(invalid="ignore", over="ignore"):  # a mutant may meet an invalid lane's NaN or infinity
            return recording_operator(r.lanes.op, r.sentinel, r.seen, at, a, b)

    def valid_last(self, w: Lanes, valid: Array) -> Array:
        """Mode reduce: the last valid lane of the thread's logical warp, min(valid_items, lanes present) - 1
        (CUB's last_lane = valid_items - 1)."""
        last: Array = np.minimum(valid - 1, self.last_lane(w))
        return last

    def flag_ballot(self, w: Lanes, flags: Array) -> Array:
        """__ballot_sync of the flags: per lane the bits of its hardware warp's flagged lanes (bit = %laneid)."""
        bits = np.zeros(len(flags), dtype=np.uint64)
        bits[flags] = np.uint64(1) << w.hardware_lane[flags].astype(np.uint64)
        first = w.block * w.spec.threads + w.rank - w.hardware_lane
        word = np.zeros(len(flags), dtype=np.uint64)
        for lane in range(WARP_SIZE):  # each lane's bit from the thread at that lane, where one runs
            runs = lane < w.warp_threads
            word[runs] |= bits[w.lane_of[first[runs] + lane]]
        return word

    def tails(self, w: Lanes, ballot: Array) -> Array:
        """The ballot as tail flags: a head flag at lane l + 1 ends a segment at lane l (ballot >> 1)."""
        return ballot >> np.uint64(1) if w.spec.static("mode") == "head" else ballot

    def segment_last(self, w: Lanes, flags: Array) -> Array:
        """Modes head and tail (CUB's SegmentedReduce): the lane of the first tail at or after the thread's own, its
        logical warp's last lane if none (the flags of the lanes below it and of other logical warps masked off)."""
        tails = self.tails(w, self.flag_ballot(w, flags))
        hardware_lane = w.hardware_lane.astype(np.uint64)
        tails &= ~((np.uint64(1) << hardware_lane) - np.uint64(1))  # lanemask_ge
        last = self.last_lane(w)
        own = (tails >> self.warp_base(w).astype(np.uint64)) & ((np.uint64(1) << (last + 1).astype(np.uint64)) - 1)
        own |= np.uint64(1) << last.astype(np.uint64)
        lowest = own & (~own + np.uint64(1))
        found: Array = np.log2(lowest.astype(np.float64)).astype(np.int64)  # __clz(__brev(flags)): a power of two
        return found

    def reduce_step(self, r: Reduction, value: Array, offset: int, last: Array) -> Array:
        """ReduceStep: lane l takes lane l + offset's partial if that lane is at most ``last`` (the shuffle's
        clamp), on the right."""
        peer, ok = self.shuffle_down(r.lanes, value, offset, last)
        at = np.flatnonzero(ok)
        value = value.copy()
        value[at] = self.combine(r, f"reduce-step-{offset}", at, value[at], peer[at])
        return value

    def reduce_down(self, r: Reduction, items: Array, last: Array) -> Array:
        """Every lane reduces its lanes up to ``last`` (its segment's last valid one): the first lane holds the
        segment's fold."""
        value = items
        for offset in self.steps(r.lanes):
            value = self.reduce_step(r, value, offset, last)
        return value

    def stores(self, w: Lanes, abi_rank: Array) -> tuple[Array, Array]:
        """(the lanes whose store of their return value lands, where within their block's ``dst``): every lane's,
        at its own rank."""
        return np.arange(len(abi_rank)), abi_rank


@dataclass(frozen=True)
class Seed:
    """What prefixes each logical warp's scan: ``kind`` none or initial, ``value`` one per lane."""

    kind: str
    value: Array


class WarpScanModel(WarpSteps):
    """A correct backend of Warp Scan: the kernel of ``coopcheck.warp_scan``'s ABI, as WarpScanShfl.

    >>> spec = coopcheck.KernelSpec("warp.scan", "int32", (6,), 1, "any", variant=(
    ...     ("width", "4"), ("op", "sum"), ("mode", "exclusive"), ("seed", "initial"), ("aggregate", "on")))
    >>> batch = coopcheck.WarpScanBatch(np.arange(1, 7, dtype=np.int32), np.array([10], np.int32), 6)
    >>> WarpScanModel().launch(spec, batch).tolist()
    [10, 11, 13, 16, 10, 15, 10, 10, 10, 10, 11, 11]
    """

    abi = warp_scan

    def launch(self, spec: coopcheck.KernelSpec, batch: coopcheck.WarpScanBatch) -> Array:
        """Run the batched kernel (one block per case instance) and return ``dst``; the batch is left unchanged."""
        threads, n = spec.threads, batch.n_blocks
        w, abi_rank = self.lanes(spec, n)
        items = self.register(np.asarray(batch.items)[w.block * threads + abi_rank])
        seed = self.seed_of(w, Seed(str(spec.static("seed")), self.register(np.asarray(batch.initial))[w.block]))
        inclusive = self.inclusive_scan(w, items)
        aggregate = self.aggregate(w, inclusive, seed)
        scanned = self.update(w, items, inclusive, seed)
        out = warp_scan.out_length(spec)
        dst = np.full(n * out, poison(items.dtype), dtype=items.dtype)
        dst[w.block * out + abi_rank] = scanned
        if warp_scan.aggregates(spec):
            dst[w.block * out + threads + abi_rank] = aggregate
        return dst

    # -- the primitive's steps (each one a mutant may change; rank, register: ThreadSteps; the rest WarpSteps) --

    def combine(self, w: Lanes, step: str, a: Array, b: Array) -> Array:
        """One application of the operator in ``step`` (scan-step-<offset>, seed): ``a`` covers earlier lanes than
        ``b``."""
        with np.errstate(invalid="ignore", over="ignore"):
            return apply_operator(w.op, a, b)

    def seed_of(self, w: Lanes, seed: Seed) -> Seed:
        """The seed the scan runs with: ExclusiveSum without one is ExclusiveScan from T{} (0)."""
        if seed.kind == "none" and w.op == "sum" and self.mode(w) == "exclusive":
            return Seed("initial", np.zeros_like(seed.value))
        return seed

    def mode(self, w: Lanes) -> str:
        """The scan each lane returns: inclusive or exclusive."""
        return str(w.spec.static("mode"))

    def inclusive_scan(self, w: Lanes, items: Array) -> Array:
        """InclusiveScan: at each offset lane l takes lane l - offset's partial on the left where the shuffle's
        clamp (the logical warp's lane 0) lets it."""
        value = items.copy()
        for offset in self.steps(w):
            peer, ok = self.shuffle_up(w, value, offset, np.zeros_like(w.rank))
            value[ok] = self.combine(w, f"scan-step-{offset}", peer[ok], value[ok])
        return value

    def aggregate(self, w: Lanes, inclusive: Array, seed: Seed) -> Array:
        """The warp aggregate: the logical warp's last lane's inclusive scan, broadcast (ShuffleIndex), before the
        seed is applied (it is not in the aggregate)."""
        last = self.last_lane(w)
        got, _ = self.shuffle_index(w, inclusive, last, last)
        return got

    def update(self, w: Lanes, items: Array, inclusive: Array, seed: Seed) -> Array:
        """WarpScanShfl's Update: the seed left of every inclusive result; the exclusive result the inclusive one
        of the lane below (lane 0: the seed, or without one what the shuffle returns: undefined), for an integer sum
        the inclusive result less the lane's own item."""
        if seed.kind == "initial":
            inclusive = self.combine(w, "seed", seed.value, inclusive)
        if self.mode(w) == "inclusive":
            return inclusive
        if w.op == "sum" and items.dtype.kind in "iu":
            with np.errstate(over="ignore"):
                return inclusive - items
        exclusive = self.exclusive_shift(w, inclusive)
        if seed.kind == "initial":
            first = self.lane_id(w) == 0
            exclusive[first] = seed.value[first]
        return exclusive

    def exclusive_shift(self, w: Lanes, inclusive: Array) -> Array:
        """The inclusive result of the lane below (ShuffleUp by 1 from the logical warp's lane 0)."""
        got, _ = self.shuffle_up(w, inclusive, 1, np.zeros_like(w.rank))
        return got
