"""A per-thread reference model of the Block Exchange contract kernel, for the family's mutation self-test.

Written the way a GPU runs the exchange (threads with registers, shared scratch that another thread's store
reaches only across a barrier, see :class:`tests.selftest.model.Scratch`), not the way the oracle computes it:
each thread stores its items at their tile index in the input arrangement (or at their rank), and loads the
items of its output arrangement. Time-sliced, the tile goes through one warp's share of scratch a slice at a
time, into a temporary that becomes the output at the end (so an in-place call reads its input first). Each
step a mutant may change is one method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import coopcheck
import numpy as np
from coopcheck.exchange import ExchangeBatch, check_spec, out_length, warp_lanes
from coopcheck.vocabulary import WARP_SIZE

from .model import Array, Scratch, grid_threads, linear_rank


@dataclass(frozen=True)
class Call:
    """One block-wide exchange as its threads see it: one entry (row) per lane."""

    spec: coopcheck.KernelSpec
    block: Array  # block id
    rank: Array  # rank as the primitive computes it
    ranks: Array  # (lanes, ipt): the scatter ranks of the thread's items
    flags: Array  # (lanes, ipt)


class ExchangeModel:
    """A correct backend of the Exchange family: the kernel of ``coopcheck.exchange``'s ABI, in lock-step lanes.

    >>> spec = coopcheck.KernelSpec("block.exchange", "int32", (2,), 2, "striped_to_blocked",
    ...                             variant=(("slicing", "off"), ("output", "inplace")))
    >>> batch = ExchangeBatch(np.array([0, 2, 1, 3], np.int32), np.zeros(4, np.int32), np.ones(4, np.int32), 4)
    >>> ExchangeModel().launch(spec, batch).tolist()
    [0, 1, 2, 3]
    """

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec:
        """Refuse bad statics as a backend's public entry point does."""
        check_spec(spec)
        return spec

    def launch(self, spec: coopcheck.KernelSpec, batch: ExchangeBatch) -> Array:
        """Run the batched kernel (one block per case instance) and return ``dst``; the batch is left unchanged."""
        tile, ipt, n = spec.tile, spec.items_per_thread, batch.n_blocks
        b, x, y, z = grid_threads(spec.block, n)
        abi_rank = linear_rank(spec.block, x, y, z)
        slots = (b * tile + abi_rank * ipt)[:, None] + np.arange(ipt)
        call = Call(spec, b, self.rank(spec.block, x, y, z), np.asarray(batch.ranks)[slots].astype(np.int64),
                    np.asarray(batch.flags)[slots])
        inp = np.asarray(batch.items)[slots]  # the thread's items: a copy, as registers are
        inplace = spec.static("output") == "inplace"
        out = inp if inplace else np.zeros_like(inp)
        self.exchange(call, inp, out)
        width = out_length(spec)
        first = (b * width + abi_rank * ipt)[:, None] + np.arange(ipt)
        dst: Array = np.empty(n * width, dtype=inp.dtype)
        dst[first] = out
        if not inplace:
            dst[first + tile] = inp
        return dst

    # -- the primitive's steps (each one a mutant may change) -----------------------------------------------

    def rank(self, block: tuple[int, ...], x: Array, y: Array, z: Array) -> Array:
        """The rank the primitive derives from the thread index."""
        return linear_rank(block, x, y, z)

    def blocked_index(self, call: Call, item: int) -> Array:
        return call.rank * call.spec.items_per_thread + item

    def striped_index(self, call: Call, item: int) -> Array:
        return call.rank + item * call.spec.threads

    def warp_striped_index(self, call: Call, item: int) -> Array:
        lanes = warp_lanes(call.spec.threads)
        return (call.rank // WARP_SIZE) * WARP_SIZE * call.spec.items_per_thread + item * lanes + call.rank % WARP_SIZE

    def sides(self, call: Call) -> tuple[Callable[[Call, int], Array], Callable[[Call, int], Array]]:
        """(input arrangement, output arrangement) of a method without ranks."""
        blocked, striped, warp = self.blocked_index, self.striped_index, self.warp_striped_index
        return {"striped_to_blocked": (striped, blocked), "blocked_to_striped": (blocked, striped),
                "warp_striped_to_blocked": (warp, blocked), "blocked_to_warp_striped": (blocked, warp),
                }[call.spec.algorithm]

    def scatter_writes(self, call: Call) -> tuple[Array, Array]:
        """(tile index each item is stored at, whether it is stored) of a scatter."""
        if call.spec.algorithm == "scatter_to_striped_guarded":
            return call.ranks, call.ranks >= 0
        if call.spec.algorithm == "scatter_to_striped_flagged":
            return call.ranks, call.flags != 0
        return call.ranks, np.ones(call.ranks.shape, dtype=bool)

    def scatter_output(self, call: Call) -> Callable[[Call, int], Array]:
        """The output arrangement of a scatter."""
        return self.blocked_index if call.spec.algorithm == "scatter_to_blocked" else self.striped_index

    def positions(self, call: Call) -> tuple[Array, Array, Array]:
        """(where each item is stored, whether it is, where each output item is loaded from), tile indices."""
        ipt = call.spec.items_per_thread
        if call.spec.algorithm.startswith("scatter"):
            output = self.scatter_output(call)
            store, stored = self.scatter_writes(call)
        else:
            source, output = self.sides(call)
            store = np.stack([source(call, i) for i in range(ipt)], axis=1)
            stored = np.ones(store.shape, dtype=bool)
        return store, stored, np.stack([output(call, i) for i in range(ipt)], axis=1)

    def register(self, values: Array) -> Array:
        """Items as they pass through a thread's registers."""
        return values

    def sync(self, scratch: Scratch) -> None:
        """The barrier between a slice's scratch stores and loads (block- or warp-wide)."""
        scratch.barrier()

    def run_slices(self, scratch: Scratch, slices: int, store: Callable[[int], None],
                   load: Callable[[int], None]) -> None:
        """Each slice: its stores, a barrier, its loads; a barrier before a slice reuses the scratch, so no
        store of one slice lands before every load of the one before."""
        for s in range(slices):
            if s:
                scratch.barrier()
            store(s)
            self.sync(scratch)
            load(s)

    def temporary(self, out: Array) -> Array:
        """Where a time-sliced exchange gathers its output until the last slice (then copied to ``out``)."""
        return np.empty_like(out)

    def exchange(self, call: Call, inp: Array, out: Array) -> None:
        """The exchange of ``inp`` into ``out`` (the same array in place)."""
        spec = call.spec
        sliced = spec.static("slicing") == "on"
        window = warp_lanes(spec.threads) * spec.items_per_thread if sliced else spec.tile
        slices = -(-spec.tile // window)
        store_at, stored, load_from = self.positions(call)
        scratch = Scratch(int(call.block.max(initial=-1)) + 1, window, inp.dtype)
        target = self.temporary(out) if sliced else out

        def store(s: int) -> None:
            for i in range(spec.items_per_thread):
                local = store_at[:, i] - s * window
                ok = stored[:, i] & (local >= 0) & (local < window)
                scratch.store(call.block[ok], local[ok], self.register(inp[ok, i]), call.rank[ok])

        def load(s: int) -> None:
            for i in range(spec.items_per_thread):
                local = load_from[:, i] - s * window
                ok = (local >= 0) & (local < window)
                target[ok, i] = scratch.load(call.block[ok], local[ok], call.rank[ok])

        self.run_slices(scratch, slices, store, load)
        if target is not out:
            out[:] = target
