"""A per-thread reference model of the Block Scan contract kernel, for the family's mutation self-test.

Written the way CUB's BlockScan runs (cub/block/block_scan.cuh and its specializations block_scan_raking.cuh and
block_scan_warp_scans.cuh), not the way the oracle computes it: each thread reduces its items in order, the block
scans the threads' partials exclusively, and each thread scans its items in registers from that prefix. raking and
raking_memoize place the partials in a shared grid raked by at most a warp of threads (segments of
ceil(threads / raking threads), guarded where the last is partial), a warp scan over the raking partials and a
downsweep of each segment (raking_memoize keeps its segment in registers, raking reads it again); a block of one
warp or less scans in one warp. warp_scans scans each warp, then every thread folds the warps' aggregates (CUB falls
back to raking when the block is not whole warps). The seed: an initial value folded in left of every prefix and
not into the block aggregate; ExclusiveSum's T{} where a sum has none; a prefix callback called with the block
aggregate by the first warp (raking: its raking threads), thread 0's return value broadcast. Warp steps are shuffles
between lanes, block steps pass through :class:`tests.selftest.model.Scratch` across barriers. Each step a mutant
may change is one method, and every application of the operator names its step.
"""

from __future__ import annotations

from dataclasses import dataclass

import coopcheck
import numpy as np
from coopcheck.scan import ScanBatch, check_spec, out_length
from coopcheck.vocabulary import WARP_SIZE

from .model import Array, Scratch, ThreadSteps, grid_threads, linear_rank
from .reduce_model import apply_operator

#: The contracts this model runs.
SCAN = ("block.scan",)


@dataclass(frozen=True)
class Call:
    """One block-wide scan of a tile as its threads see it: one entry (row) per lane, lanes in launch order."""

    spec: coopcheck.KernelSpec
    block: Array  # block id
    rank: Array  # rank as the primitive computes it
    lane_of: Array  # block * threads + rank -> lane: where a shuffle or a broadcast finds another thread

    @property
    def op(self) -> str:
        return str(self.spec.static("op"))

    @property
    def n_blocks(self) -> int:
        return len(self.lane_of) // self.spec.threads

    def lane(self, at: Array, rank: Array) -> Array:
        """The lanes of the threads of rank ``rank`` in the blocks of lanes ``at``."""
        found: Array = self.lane_of[self.block[at] * self.spec.threads + rank]
        return found


@dataclass
class Callback:
    """Every thread's block prefix callback: its running prefix, the argument of its last call, its calls."""

    running: Array
    argument: Array
    calls: Array


@dataclass(frozen=True)
class Seed:
    """What prefixes a tile: ``kind`` none, initial (``value``, one per lane) or prefix (``callback``)."""

    kind: str
    value: Array
    callback: Callback


@dataclass(frozen=True)
class LogicalWarp:
    """The lanes ``at`` of one warp scan, each at ``lane`` (0 to ``width`` - 1) of the warp starting at rank
    ``base``."""

    at: Array
    lane: Array
    base: Array
    width: int


class ScanModel(ThreadSteps):
    """A correct backend of the Scan family: the kernel of ``coopcheck.scan``'s ABI, in lock-step lanes.

    >>> spec = coopcheck.KernelSpec("block.scan", "int32", (2,), 2, "raking",
    ...                             variant=(("op", "sum"), ("mode", "inclusive"), ("seed", "initial")))
    >>> batch = ScanBatch(np.array([1, 2, 3, 4], np.int32), np.array([10], np.int32), 4, 1)
    >>> ScanModel().launch(spec, batch).tolist()
    [11, 13, 16, 20, 10, 10, 0, 0]
    """

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec:
        """Refuse bad statics as a backend's public entry point does."""
        check_spec(spec)
        return spec

    def launch(self, spec: coopcheck.KernelSpec, batch: ScanBatch) -> Array:
        """Run the batched kernel (one block per case instance, its tiles one after the other) and return ``dst``;
        the batch is left unchanged."""
        tile, ipt, threads, n, n_tiles = spec.tile, spec.items_per_thread, spec.threads, batch.n_blocks, batch.tiles
        b, x, y, z = grid_threads(spec.block, n)
        abi_rank = linear_rank(spec.block, x, y, z)
        rank = self.rank(spec.block, x, y, z)
        lane_of = np.empty(len(b), dtype=np.int64)
        lane_of[b * threads + rank] = np.arange(len(b))
        call = Call(spec, b, rank, lane_of)
        initial = self.register(np.asarray(batch.initial)[b])
        callback = Callback(initial.copy(), np.zeros_like(initial), np.zeros(len(b), dtype=np.int64))
        seed = Seed(str(spec.static("seed")), initial, callback)
        width = out_length(spec)
        dst: Array = np.empty(n * width, dtype=initial.dtype)
        for k in range(n_tiles):
            first = (b * n_tiles + k) * tile + abi_rank * ipt
            items = self.register(np.asarray(batch.items)[first[:, None] + np.arange(ipt)])
            scanned, aggregate = self.scan(call, items, seed)
            dst[(b * width + k * tile + abi_rank * ipt)[:, None] + np.arange(ipt)] = scanned
            dst[b * width + n_tiles * tile + k * threads + abi_rank] = \
                callback.argument if seed.kind == "prefix" else aggregate
        dst[b * width + n_tiles * (tile + threads) + abi_rank] = callback.calls.astype(dst.dtype)
        return dst

    # -- the primitive's steps (each one a mutant may change; rank, register and sync: ThreadSteps) ------------

    def combine(self, call: Call, step: str, a: Array, b: Array) -> Array:
        """One application of the operator in ``step`` of the algorithm (thread-reduce, upsweep, warp-scan, seed,
        warp-aggregates, warp-prefix, callback, block-prefix, downsweep, thread-scan): ``a`` covers earlier items
        than ``b``."""
        with np.errstate(invalid="ignore", over="ignore"):  # CUB's undefined slots hold anything
            return apply_operator(call.op, a, b)

    def seed_of(self, call: Call, seed: Seed) -> Seed:
        """The seed the block scan runs with: ExclusiveSum without one runs ExclusiveScan with the initial value
        T{} (0)."""
        if seed.kind == "none" and call.op == "sum" and call.spec.static("mode") == "exclusive":
            return Seed("initial", np.zeros_like(seed.value), seed.callback)
        return seed

    def mode(self, call: Call) -> str:
        """The scan the threads finish in registers: inclusive or exclusive."""
        return str(call.spec.static("mode"))

    def callers(self, call: Call, at: Array) -> Array:
        """Of the lanes ``at`` that hold the block aggregate, those that call their callback: the first warp's."""
        first: Array = at[call.rank[at] < WARP_SIZE]
        return first

    def callback(self, call: Call, seed: Seed, at: Array, aggregate: Array) -> Array:
        """The callback of lanes ``at`` called with the tile's ``aggregate``: it returns its running prefix and
        folds the aggregate into it."""
        cb = seed.callback
        returned = cb.running[at].copy()
        cb.running[at] = self.combine(call, "callback", cb.running[at], aggregate)
        cb.argument[at], cb.calls[at] = aggregate, cb.calls[at] + 1
        return returned

    def seeded_aggregate(self, call: Call, initial: Array, aggregate: Array) -> Array:
        """The block aggregate a scan with an initial value returns: the seed not in it."""
        return aggregate

    # -- the scan ----------------------------------------------------------------------------------------------

    def scan(self, call: Call, items: Array, seed: Seed) -> tuple[Array, Array]:
        """(each thread's scanned items, the block aggregate it receives) of one tile (BlockScan's ITEMS_PER_THREAD
        overloads): the thread's items reduced, the partials scanned exclusively, the items scanned from that."""
        seed = self.seed_of(call, seed)
        partial = items[:, 0]
        for i in range(1, call.spec.items_per_thread):
            partial = self.combine(call, "thread-reduce", partial, items[:, i])
        prefix, aggregate = self.block_exclusive(call, partial, seed)
        apply = np.ones(len(partial), dtype=bool) if seed.kind != "none" else call.rank != 0
        exclusive = self.mode(call) == "exclusive"
        return self.in_registers(call, "thread-scan", items, prefix, apply, exclusive), aggregate

    def in_registers(self, call: Call, step: str, values: Array, prefix: Array, apply: Array,
                     exclusive: bool) -> Array:
        """CUB's ThreadScanInclusive / ThreadScanExclusive over each lane's row of ``values`` from ``prefix``
        (applied only where ``apply``: without a seed thread 0 has none)."""
        out = np.empty_like(values)
        running = values[:, 0].copy()
        running[apply] = self.combine(call, step, prefix[apply], running[apply])
        out[:, 0] = prefix if exclusive else running
        for i in range(1, values.shape[1]):
            if exclusive:
                out[:, i] = running
            running = self.combine(call, step, running, values[:, i])
            if not exclusive:
                out[:, i] = running
        return out

    def block_exclusive(self, call: Call, partial: Array, seed: Seed) -> tuple[Array, Array]:
        """(each thread's exclusive prefix, the block aggregate it receives): CUB's algorithm, warp_scans only for
        a block of whole warps (BlockScan's SAFE_ALGORITHM)."""
        if call.spec.algorithm == "warp_scans" and call.spec.threads % WARP_SIZE == 0:
            return self.warp_scans(call, partial, seed)
        return self.raking(call, partial, seed, memoize=call.spec.algorithm == "raking_memoize")

    # -- warp steps (shuffles) ---------------------------------------------------------------------------------

    def shuffle_up(self, call: Call, values: Array, warp: LogicalWarp, delta: int) -> Array:
        """Each lane of the warp gets the value of the lane ``delta`` below it (the lowest lanes keep their own)."""
        src = np.where(warp.lane >= delta, call.rank[warp.at] - delta, call.rank[warp.at])
        shuffled: Array = values[call.lane(warp.at, src)]
        return shuffled

    def warp_inclusive(self, call: Call, values: Array, warp: LogicalWarp) -> Array:
        """A Kogge-Stone inclusive scan of the warp's lanes (full-length ``values``; its lanes' entries change)."""
        x = values.copy()
        delta = 1
        while delta < warp.width:
            earlier = self.shuffle_up(call, x, warp, delta)
            takes = warp.lane >= delta
            at = warp.at[takes]
            x[at] = self.combine(call, "warp-scan", earlier[takes], x[at])
            delta *= 2
        return x

    def warp_exclusive(self, call: Call, values: Array, warp: LogicalWarp, seed: Seed) -> tuple[Array, Array]:
        """WarpScan's ExclusiveScan of the warp's lanes: (exclusive, warp aggregate), full-length; with an initial
        value it goes left of every lane's inclusive result and is lane 0's exclusive one (not in the aggregate)."""
        inclusive = self.warp_inclusive(call, values, warp)
        aggregate = inclusive.copy()
        aggregate[warp.at] = inclusive[call.lane(warp.at, warp.base + warp.width - 1)]
        if seed.kind == "initial":
            inclusive[warp.at] = self.combine(call, "seed", seed.value[warp.at], inclusive[warp.at])
        exclusive = inclusive.copy()
        exclusive[warp.at] = self.shuffle_up(call, inclusive, warp, 1)
        if seed.kind == "initial":
            lane0 = warp.at[warp.lane == 0]
            exclusive[lane0] = seed.value[lane0]
            aggregate[warp.at] = self.seeded_aggregate(call, seed.value[warp.at], aggregate[warp.at])
        return exclusive, aggregate

    def block_prefix(self, call: Call, seed: Seed, exclusive: Array, aggregate: Array, warp: LogicalWarp
                     ) -> Array:
        """A warp-synchronous prefix callback: the warp's lanes call it, lane 0's return value is broadcast and goes
        left of every lane's exclusive prefix (thread 0's prefix is that value itself)."""
        callers = self.callers(call, warp.at)
        returned = exclusive.copy()
        returned[callers] = self.callback(call, seed, callers, aggregate[callers])
        broadcast = returned[call.lane(warp.at, warp.base)]
        out = exclusive.copy()
        out[warp.at] = self.combine(call, "block-prefix", broadcast, exclusive[warp.at])
        zero = call.rank[warp.at] == 0
        out[warp.at[zero]] = broadcast[zero]
        return out

    # -- raking ------------------------------------------------------------------------------------------------

    def raking_layout(self, call: Call) -> tuple[int, int]:
        """(segment length, raking threads) of CUB's BlockRakingLayout: at most a warp rakes."""
        threads = call.spec.threads
        segment = -(-threads // min(threads, WARP_SIZE))
        return segment, -(-threads // segment)

    def raking(self, call: Call, partial: Array, seed: Seed, memoize: bool) -> tuple[Array, Array]:
        """CUB's BlockScanRaking: the partials to the grid; raking thread t reduces segment t (the part below the
        thread count), the raking threads' warp scan gives each segment its prefix, the exclusive downsweep writes
        every partial's prefix back, and each thread reads its own. A block of one warp or less scans in a warp."""
        threads, everyone = call.spec.threads, np.arange(len(partial))
        segment, rakers = self.raking_layout(call)
        if rakers == threads:  # WARP_SYNCHRONOUS
            return self.warp_scan_block(call, partial, seed,
                                        LogicalWarp(everyone, call.rank, np.zeros_like(call.rank), threads))
        grid = Scratch(call.n_blocks, rakers * segment + 1, partial.dtype)  # the grid, then the block aggregate
        grid.store(call.block, call.rank, partial, call.rank)
        self.sync(grid)
        at = everyone[call.rank < rakers]
        start = call.rank[at] * segment
        cached = np.stack([grid.load(call.block[at], start + i, call.rank[at]) for i in range(segment)], axis=1)
        total = cached[:, 0].copy()
        for i in range(1, segment):
            guarded = start + i < threads
            total[guarded] = self.combine(call, "upsweep", total[guarded], cached[guarded, i])
        upsweep = partial.copy()
        upsweep[at] = total
        warp = LogicalWarp(at, call.rank[at], np.zeros_like(at), rakers)
        exclusive, aggregate = self.warp_exclusive(call, upsweep, warp, seed)
        if seed.kind == "prefix":
            exclusive = self.block_prefix(call, seed, exclusive, aggregate, warp)
        else:
            grid.store(call.block[at], np.full(len(at), rakers * segment), aggregate[at], call.rank[at])
        if not memoize:
            cached = np.stack([grid.load(call.block[at], start + i, call.rank[at]) for i in range(segment)], axis=1)
        apply = np.ones(len(at), dtype=bool) if seed.kind != "none" else call.rank[at] != 0
        downswept = self.in_registers(call, "downsweep", cached, exclusive[at], apply, exclusive=True)
        for i in range(segment):
            grid.store(call.block[at], start + i, downswept[:, i], call.rank[at])
        self.sync(grid)
        # what the raking threads left for the others (with a callback nothing: its argument is the thread's own)
        block_aggregate = grid.load(call.block, np.full(len(partial), rakers * segment), call.rank)
        return grid.load(call.block, call.rank, call.rank), block_aggregate

    def warp_scan_block(self, call: Call, partial: Array, seed: Seed, warp: LogicalWarp) -> tuple[Array, Array]:
        """A block of one warp or less: its warp scan is the block's (the callback called by every thread)."""
        exclusive, aggregate = self.warp_exclusive(call, partial, warp, seed)
        if seed.kind == "prefix":
            exclusive = self.block_prefix(call, seed, exclusive, aggregate, warp)
        return exclusive, aggregate

    # -- warp_scans --------------------------------------------------------------------------------------------

    def warp_scans(self, call: Call, partial: Array, seed: Seed) -> tuple[Array, Array]:
        """CUB's BlockScanWarpScans: each warp scans its lanes, its last lane shares the warp's aggregate, every
        thread folds the aggregates of the warps in order (its warp's prefix is those before it); the first warp
        calls the prefix callback, and lane 0 shares what it returned through the scratch."""
        threads, everyone = call.spec.threads, np.arange(len(partial))
        warps, warp_of, lane = threads // WARP_SIZE, call.rank // WARP_SIZE, call.rank % WARP_SIZE
        warp = LogicalWarp(everyone, lane, warp_of * WARP_SIZE, WARP_SIZE)
        inclusive = self.warp_inclusive(call, partial, warp)
        exclusive = self.shuffle_up(call, inclusive, warp, 1)
        shared = Scratch(call.n_blocks, warps + 1, partial.dtype)  # the warps' aggregates, then the block prefix
        last = lane == WARP_SIZE - 1
        shared.store(call.block[last], warp_of[last], inclusive[last], call.rank[last])
        self.sync(shared)
        aggregate = shared.load(call.block, np.zeros_like(lane), call.rank)
        warp_prefix = exclusive.copy()  # warp 0 has none
        for w in range(1, warps):
            warp_prefix[warp_of == w] = aggregate[warp_of == w]
            aggregate = self.combine(call, "warp-aggregates", aggregate,
                                     shared.load(call.block, np.full_like(lane, w), call.rank))
        if seed.kind == "initial":
            later = warp_of > 0
            warp_prefix[later] = self.combine(call, "seed", seed.value[later], warp_prefix[later])
            warp_prefix[~later] = seed.value[~later]
            aggregate = self.seeded_aggregate(call, seed.value, aggregate)
        applies = warp_of > 0 if seed.kind != "initial" else np.ones(len(partial), dtype=bool)
        exclusive[applies] = self.combine(call, "warp-prefix", warp_prefix[applies], exclusive[applies])
        exclusive[applies & (lane == 0)] = warp_prefix[applies & (lane == 0)]
        if seed.kind == "prefix":
            callers = self.callers(call, everyone)
            returned = self.callback(call, seed, callers, aggregate[callers])
            zero = call.rank[callers] == 0
            shared.store(call.block[callers][zero], np.full(int(zero.sum()), warps), returned[zero],
                         call.rank[callers][zero])
            exclusive[callers[zero]] = returned[zero]
            self.sync(shared)
            block_prefix = shared.load(call.block, np.full_like(lane, warps), call.rank)
            rest = call.rank > 0
            exclusive[rest] = self.combine(call, "block-prefix", block_prefix[rest], exclusive[rest])
        return exclusive, aggregate
