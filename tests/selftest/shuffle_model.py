"""A per-thread reference model of the Block Shuffle contract kernel, for the family's mutation self-test.

Written the way CUB's BlockShuffle runs (threads with registers, shared scratch of one item a thread that another
thread's store reaches only across a barrier, see :class:`tests.selftest.model.Scratch`), not the way the oracle
computes it: each thread stores one item at its rank (offset and rotate: its item; up: its last; down: its first),
and after the barrier reads its neighbour's. Each step a mutant may change is one method.
"""

from __future__ import annotations

from dataclasses import dataclass

import coopcheck
import numpy as np
from coopcheck.shuffle import BLOCK_ITEM, SCALAR, ShuffleBatch, check_spec, out_length

from .model import Array, Scratch, ThreadSteps, grid_threads, linear_rank


@dataclass(frozen=True)
class Call:
    """One block-wide shuffle as its threads see it: one entry (row) per lane."""

    spec: coopcheck.KernelSpec
    method: str
    block: Array  # block id
    rank: Array  # rank as the primitive computes it
    distance: Array  # the block's run-time distance (0 for up and down)


class ShuffleModel(ThreadSteps):
    """A correct backend of the Shuffle family: the kernel of ``coopcheck.shuffle``'s ABI, in lock-step lanes.

    >>> spec = coopcheck.KernelSpec("block.shuffle", "int32", (2,), 2, "up", variant=(("output", "inplace"),))
    >>> batch = ShuffleBatch(np.array([10, 11, 12, 13], np.int32), np.zeros(6, np.int32), np.zeros(1, np.int32), 4)
    >>> ShuffleModel().launch(spec, batch).tolist()
    [10, 10, 11, 12]
    """

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec:
        """Refuse bad statics as a backend's public entry point does."""
        check_spec(spec)
        return spec

    def launch(self, spec: coopcheck.KernelSpec, batch: ShuffleBatch) -> Array:
        """Run the batched kernel (one block per case instance) and return ``dst``; the batch is left unchanged."""
        tile, ipt, threads, n = spec.tile, spec.items_per_thread, spec.threads, batch.n_blocks
        b, x, y, z = grid_threads(spec.block, n)
        abi_rank = linear_rank(spec.block, x, y, z)
        items = np.arange(ipt)
        inp = np.asarray(batch.items)[(b * tile + abi_rank * ipt)[:, None] + items]  # registers: a copy
        prior = np.asarray(batch.prior)
        first_prior = b * (tile + threads) + abi_rank * ipt
        inplace = spec.static("output") == "inplace"
        out = inp if inplace else prior[first_prior[:, None] + items]
        block_item = prior[b * (tile + threads) + tile + abi_rank]
        call = Call(spec, self.method(spec), b, self.rank(spec.block, x, y, z),
                    np.asarray(batch.distance).astype(np.int64)[b])
        self.shuffle(call, inp, out, block_item)
        width = out_length(spec)
        first = (b * width + abi_rank * ipt)[:, None] + items
        dst: Array = np.empty(n * width, dtype=inp.dtype)
        dst[first] = out
        if not inplace:
            dst[first + tile] = inp
        if spec.algorithm in BLOCK_ITEM:
            dst[b * width + width - threads + abi_rank] = block_item
        return dst

    # -- the primitive's steps (each one a mutant may change) -----------------------------------------------

    def method(self, spec: coopcheck.KernelSpec) -> str:
        """The method the primitive runs."""
        return spec.algorithm

    def source(self, call: Call) -> tuple[Array, Array]:
        """(rank each thread reads, whether it reads) of offset and rotate."""
        threads = call.spec.threads
        src = call.rank + call.distance
        if call.method == "rotate":
            return np.where(src >= threads, src - threads, src), np.ones(src.shape, dtype=bool)
        return src, (src >= 0) & (src < threads)

    def carry(self, call: Call, up: bool) -> tuple[Array, Array]:
        """(rank whose scratch item each thread carries into its edge slot, whether it does) of up and down."""
        if up:
            return call.rank - 1, call.rank > 0
        return call.rank + 1, call.rank < call.spec.threads - 1

    def block_source(self, call: Call) -> int:
        """The rank whose scratch item is the block item: the last (up's block_suffix) or 0 (down's prefix)."""
        return call.spec.threads - 1 if call.method == "up_suffix" else 0

    def shift_order(self, ipt: int, up: bool) -> range:
        """The order the items within a thread move in: against the shift, so that in place none is overwritten
        before it is read."""
        return range(ipt - 1, 0, -1) if up else range(ipt - 1)

    def shuffle(self, call: Call, inp: Array, out: Array, block_item: Array) -> None:
        """The shuffle of ``inp`` into ``out`` (the same array in place) and, for the block item forms, into
        ``block_item``."""
        spec, ipt = call.spec, call.spec.items_per_thread
        scratch = Scratch(int(call.block.max(initial=-1)) + 1, spec.threads, inp.dtype)
        lanes = np.arange(len(call.rank))
        if call.method in SCALAR:
            scratch.store(call.block, call.rank, self.register(inp[:, 0]), call.rank)
            self.sync(scratch)
            src, reads = self.source(call)
            out[reads, 0] = scratch.load(call.block[reads], src[reads], call.rank[reads])
            return
        up = call.method in ("up", "up_suffix")
        scratch.store(call.block, call.rank, self.register(inp[:, ipt - 1 if up else 0]), call.rank)
        self.sync(scratch)
        for i in self.shift_order(ipt, up):
            out[lanes, i] = self.register(inp[lanes, i - 1 if up else i + 1])
        src, reads = self.carry(call, up)
        edge = 0 if up else ipt - 1
        out[reads, edge] = scratch.load(call.block[reads], src[reads], call.rank[reads])
        if call.method in BLOCK_ITEM:
            block_item[:] = scratch.load(call.block, np.full(lanes.shape, self.block_source(call)), call.rank)
