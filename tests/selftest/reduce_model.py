"""A per-thread reference model of the Block Reduce contract kernel, for the family's mutation self-test.

Written the way CUB's BlockReduce runs (threads with registers, shared scratch that another thread's store
reaches only across a barrier, see :class:`tests.selftest.model.Scratch`), not the way the oracle computes it:
each thread reduces its valid items, then raking (a shared grid raked by at most a warp of threads, then a tree
over their partials), raking_commutative_only (the first warp rakes the partials of the others, its own first)
or warp_reductions (a tree per warp, then thread 0 folds in the warps' aggregates), every step guarded by the
number of threads that hold a valid item. Each step a mutant may change is one method.
"""

from __future__ import annotations

from dataclasses import dataclass

import coopcheck
import numpy as np
from coopcheck.reduce import RECORDING, ReduceBatch, check_spec, out_length
from coopcheck.vocabulary import WARP_SIZE

from .model import Array, Scratch, ThreadSteps, grid_threads, linear_rank


@dataclass(frozen=True)
class Call:
    """One block-wide reduction as its threads see it: one entry (row) per lane."""

    spec: coopcheck.KernelSpec
    op: str
    block: Array  # block id
    rank: Array  # rank as the primitive computes it
    valid: Array  # the block's valid_items
    sentinel: Array  # the block's sentinel
    seen: Array  # bool: whether the lane's operator saw the sentinel (written by the operator)


def _matmul(a: Array, b: Array) -> Array:
    """Packed 2x2 matrix product modulo 2**k (k = bits / 4), entry 0 in the lowest bits."""
    width = a.dtype.itemsize * 8
    k, unsigned = width // 4, np.dtype(f"uint{width}")
    x, y = a.view(unsigned).astype(np.uint64), b.view(unsigned).astype(np.uint64)
    e = [[(v >> np.uint64(j * k)) & np.uint64((1 << k) - 1) for j in range(4)] for v in (x, y)]
    rows = [e[0][0] * e[1][0] + e[0][1] * e[1][2], e[0][0] * e[1][1] + e[0][1] * e[1][3],
            e[0][2] * e[1][0] + e[0][3] * e[1][2], e[0][2] * e[1][1] + e[0][3] * e[1][3]]
    out = np.zeros_like(x)
    for j, entry in enumerate(rows):
        out |= (entry & np.uint64((1 << k) - 1)) << np.uint64(j * k)
    return out.astype(unsigned).view(a.dtype)


def apply_operator(op: str, a: Array, b: Array) -> Array:
    """sum, min, max or matmul of (a, b) lane by lane, as a thread computes it in the dtype: integers wrap, float
    min and max are CUDA's fmin and fmax."""
    if op == "sum":
        with np.errstate(over="ignore", invalid="ignore"):  # integers wrap; a mutant may add invalid items
            return a + b
    if op == "matmul":
        return _matmul(a, b)
    extreme = np.where(a < b, a, b) if op == "min" else np.where(a < b, b, a)
    if a.dtype.kind == "f":
        # As CUDA's fminf / fmaxf, a NaN operand is ignored, a signalling one too (np.fmin / np.fmax keep it).
        return np.where(np.isnan(a), b, np.where(np.isnan(b), a, extreme))
    return extreme


def recording_operator(op: str, sentinel: Array, seen: Array, lanes: Array, a: Array, b: Array) -> Array:
    """:func:`apply_operator` in ``lanes``, where first (the recording operator) also sets ``seen`` of a lane
    whose operands include its ``sentinel``."""
    if op != RECORDING:
        return apply_operator(op, a, b)
    unsigned = f"uint{a.dtype.itemsize * 8}"
    mark = sentinel[lanes].view(unsigned)
    seen[lanes] |= (a.view(unsigned) == mark) | (b.view(unsigned) == mark)
    return np.where(a == 0, b, a)


class ReduceModel(ThreadSteps):
    """A correct backend of the Reduce family: the kernel of ``coopcheck.reduce``'s ABI, in lock-step lanes.

    >>> spec = coopcheck.KernelSpec("block.reduce", "int8", (2,), 2, "raking", variant=(("op", "sum"),))
    >>> batch = ReduceBatch(np.array([100, 100, 100, -7], np.int8), np.array([3], np.int32), np.ones(1, np.int8), 4)
    >>> int(ReduceModel().launch(spec, batch)[0])
    44
    """

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec:
        """Refuse bad statics as a backend's public entry point does."""
        check_spec(spec)
        return spec

    def launch(self, spec: coopcheck.KernelSpec, batch: ReduceBatch) -> Array:
        """Run the batched kernel (one block per case instance) and return ``dst``; the batch is left unchanged."""
        tile, ipt, threads, n = spec.tile, spec.items_per_thread, spec.threads, batch.n_blocks
        b, x, y, z = grid_threads(spec.block, n)
        abi_rank = linear_rank(spec.block, x, y, z)
        items = self.register(np.asarray(batch.items)[(b * tile + abi_rank * ipt)[:, None] + np.arange(ipt)])
        call = Call(spec, str(spec.static("op")), b, self.rank(spec.block, x, y, z),
                    np.asarray(batch.valid).astype(np.int64)[b], np.asarray(batch.sentinel)[b],
                    np.zeros(len(b), dtype=bool))
        result = self.reduce(call, items)
        width = out_length(spec)
        dst: Array = np.empty(n * width, dtype=items.dtype)
        dst[b * width + abi_rank] = self.returned(call, result)
        dst[b * width + threads + abi_rank] = call.seen.astype(items.dtype)
        return dst

    # -- the primitive's steps (each one a mutant may change; rank, register and sync: ThreadSteps) ------------

    def operator(self, call: Call, lanes: Array, a: Array, b: Array) -> Array:
        """The operator applied in ``lanes`` to (a, b); first records an operand equal to the sentinel."""
        return recording_operator(call.op, call.sentinel, call.seen, lanes, a, b)

    def combine(self, call: Call, lanes: Array, a: Array, b: Array) -> Array:
        """One application of the operator: ``a`` holds the earlier items of the tile, ``b`` the later ones."""
        return self.operator(call, lanes, a, b)

    def item_valid(self, call: Call) -> Array:
        """(lane, item) -> whether the item is valid: its tile index is below valid_items."""
        ipt = call.spec.items_per_thread
        return (call.rank[:, None] * ipt + np.arange(ipt)) < call.valid[:, None]

    def prepare(self, call: Call, items: Array) -> tuple[Array, Array]:
        """(items, which are valid) as the reduction takes them."""
        return items, self.item_valid(call)

    def returned(self, call: Call, result: Array) -> Array:
        """What each thread returns: its value after the block reduction (thread 0's is the result)."""
        return result

    # -- the reduction ---------------------------------------------------------------------------------------

    def reduce(self, call: Call, items: Array) -> Array:
        """Each thread's return value: its valid items reduced in order, then the block reduction."""
        items, valid = self.prepare(call, items)
        lanes = np.arange(len(call.rank))
        partial, holds = items[:, 0].copy(), valid[:, 0].copy()
        for i in range(1, call.spec.items_per_thread):
            both, alone = holds & valid[:, i], ~holds & valid[:, i]
            partial[both] = self.combine(call, lanes[both], partial[both], items[both, i])
            partial[alone] = items[alone, i]
            holds |= valid[:, i]
        threads = call.spec.threads
        n_blocks = int(call.block.max(initial=-1)) + 1
        counts = np.bincount(call.block[holds], minlength=n_blocks)
        num_valid = counts[call.block]  # threads of the block that hold a valid item (a prefix of the ranks)
        scratch = Scratch(n_blocks, threads, items.dtype)
        if call.spec.algorithm == "warp_reductions":
            return self.warp_reductions(call, scratch, partial, num_valid)
        if call.spec.algorithm == "raking_commutative_only" and threads % WARP_SIZE == 0 and threads > WARP_SIZE:
            full = num_valid == threads  # CUB falls back to raking for a partial tile
            out = partial.copy()
            out[full] = self.commutative_only(call, scratch, partial, full)[full]
            out[~full] = self.raking(call, scratch, partial, num_valid, ~full)[~full]
            return out
        return self.raking(call, scratch, partial, num_valid, np.ones(len(partial), dtype=bool))

    def tree(self, call: Call, scratch: Scratch, x: Array, active: Array, base: Array, lane: Array,
             count: Array) -> Array:
        """An in-order tree over ``count`` lanes of one scratch segment from ``base``: lane l combines its value
        with lane l + s's for s = 1, 2, 4, ... (every step across a barrier); lane 0 ends with the aggregate."""
        x = x.copy()
        stores = active & (lane < count)
        scratch.store(call.block[stores], (base + lane)[stores], x[stores], call.rank[stores])
        self.sync(scratch)
        step = 1
        while step < WARP_SIZE:
            takes = active & (lane % (2 * step) == 0) & (lane + step < count)
            at = np.flatnonzero(takes)
            later = scratch.load(call.block[at], (base + lane + step)[at], call.rank[at])
            x[at] = self.combine(call, at, x[at], later)
            scratch.store(call.block[at], (base + lane)[at], x[at], call.rank[at])
            self.sync(scratch)
            step *= 2
        return x

    def warp_reductions(self, call: Call, scratch: Scratch, partial: Array, num_valid: Array) -> Array:
        """A tree per warp over its valid lanes, then thread 0 folds in each warp that holds valid items."""
        warp, lane = call.rank // WARP_SIZE, call.rank % WARP_SIZE
        count = np.clip(num_valid - warp * WARP_SIZE, 0, WARP_SIZE)
        x = self.tree(call, scratch, partial, np.ones(len(partial), dtype=bool), warp * WARP_SIZE, lane, count)
        zero = np.flatnonzero(call.rank == 0)
        for w in range(1, -(-call.spec.threads // WARP_SIZE)):
            at = zero[w * WARP_SIZE < num_valid[zero]]
            aggregate = scratch.load(call.block[at], np.full(len(at), w * WARP_SIZE), call.rank[at])
            x[at] = self.combine(call, at, x[at], aggregate)
        return x

    def raking(self, call: Call, scratch: Scratch, partial: Array, num_valid: Array, active: Array) -> Array:
        """CUB's raking: every partial to the grid; raking thread t reduces grid[t*seg, (t+1)*seg) (the valid
        part), stores it back over the grid's start (the aliasing of NVIDIA/cccl#1902: after a barrier), and a
        tree over the raking partials ends in thread 0."""
        threads = call.spec.threads
        seg = -(-threads // min(threads, WARP_SIZE))
        raking_threads = -(-threads // seg)
        stores = active & (call.rank < num_valid)
        scratch.store(call.block[stores], call.rank[stores], partial[stores], call.rank[stores])
        self.sync(scratch)
        rakes = np.flatnonzero(active & (call.rank < raking_threads) & (call.rank * seg < num_valid))
        x = partial.copy()
        x[rakes] = scratch.load(call.block[rakes], call.rank[rakes] * seg, call.rank[rakes])
        for i in range(1, seg):
            at = rakes[call.rank[rakes] * seg + i < num_valid[rakes]]
            x[at] = self.combine(call, at, x[at], scratch.load(call.block[at], call.rank[at] * seg + i, call.rank[at]))
        self.sync(scratch)  # the tree below reuses the grid's start
        valid_raking = -(-num_valid // seg)
        return self.tree(call, scratch, x, active & (call.rank < raking_threads), np.zeros_like(call.rank),
                         call.rank, valid_raking)

    def commutative_only(self, call: Call, scratch: Scratch, partial: Array, active: Array) -> Array:
        """CUB's raking_commutative_only on a full tile of whole warps: the threads past the first warp store their
        partials, each thread t of the first warp folds segment t of them into its own (its own first: an
        order other than the tile's), and a tree over the first warp ends in thread 0."""
        sharing = call.spec.threads - WARP_SIZE
        seg = sharing // WARP_SIZE
        stores = active & (call.rank >= WARP_SIZE)
        scratch.store(call.block[stores], call.rank[stores] - WARP_SIZE, partial[stores], call.rank[stores])
        self.sync(scratch)
        rakes = np.flatnonzero(active & (call.rank < WARP_SIZE))
        x = partial.copy()
        for i in range(seg):
            x[rakes] = self.combine(call, rakes, x[rakes],
                                    scratch.load(call.block[rakes], call.rank[rakes] * seg + i, call.rank[rakes]))
        return self.tree(call, scratch, x, active & (call.rank < WARP_SIZE), np.full_like(call.rank, sharing),
                         call.rank, np.full_like(call.rank, WARP_SIZE))
