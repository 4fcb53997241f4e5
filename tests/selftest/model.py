"""A per-thread reference model of a backend: it runs the Load and Store contract kernels on the host.

It is a second implementation of the contracts written the way a GPU runs them (threads with
registers, global memory, shared scratch with a barrier), not a second oracle: the mutation
self-test needs a correct backend that small, named deviations can be cut from. Threads execute
in lock-step as NumPy lanes (one lane per thread of the grid), so every step below is one thread's
program applied to all threads at once; each step a mutant may change is one method.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import coopcheck
import numpy as np
import numpy.typing as npt
from coopcheck.load_store import check_spec
from coopcheck.vocabulary import WARP_SIZE

Array = npt.NDArray[Any]

#: Widest global access a thread issues (bytes), as a 128-bit vector load or store.
VECTOR_BYTES = 16
#: Byte that fills shared scratch before a launch: what a thread reads where nobody wrote.
SCRATCH_POISON = 0xA5


class ModelFault(RuntimeError):
    """An access a GPU would fault on (out of bounds, misaligned wide access)."""


def linear_rank(block: tuple[int, ...], x: Array, y: Array, z: Array) -> Array:
    """rank = x + bx*(y + by*z): x varies fastest."""
    bx, by = (*block, 1)[:2]
    rank: Array = x + bx * (y + by * z)
    return rank


def grid_threads(block: tuple[int, ...], n_blocks: int) -> tuple[Array, ...]:
    """(block id, x, y, z) of every thread of a launch of ``n_blocks`` blocks, one lane each."""
    bx, by, bz = (*block, 1, 1)[:3]
    b, z, y, x = np.indices((n_blocks, bz, by, bx)).reshape(4, -1)
    return b, x, y, z


def vector_items(spec: coopcheck.KernelSpec) -> int:
    """Items per wide access: the largest power of two dividing ipt that fits in VECTOR_BYTES."""
    width, itemsize = 1, np.dtype(spec.dtype).itemsize
    while spec.items_per_thread % (2 * width) == 0 and 2 * width * itemsize <= VECTOR_BYTES:
        width *= 2
    return width


def _checked(memory: Array, addr: Array) -> Array:
    if addr.size and (addr.min() < 0 or addr.max() >= memory.size):
        raise ModelFault(f"global access at element {int(addr.min())}..{int(addr.max())} "
                         f"outside a buffer of {memory.size}")
    return addr


def wide_addresses(memory: Array, addr: Array, width: int) -> Array:
    """The elements of one wide access per lane; the buffer start counts as aligned (cudaMalloc is)."""
    if np.any(addr % width):
        raise ModelFault(f"misaligned {width}-item wide access at element {int(addr[addr % width != 0][0])}")
    return _checked(memory, addr[:, None] + np.arange(width))


@dataclass(frozen=True)
class Call:
    """One block-wide call of the primitive as its threads see it: every array has one entry per lane."""

    spec: coopcheck.KernelSpec
    block: Array  # block id
    rank: Array  # rank as the primitive computes it
    base: Array  # element index of the tile's first item in the global buffer
    valid: Array
    has_oob: Array  # bool; all False for Store
    oob: Array

    def lanes(self, mask: Array) -> Call:
        """The same call seen by the lanes in ``mask`` only (a divergent branch)."""
        return replace(self, block=self.block[mask], rank=self.rank[mask], base=self.base[mask],
                       valid=self.valid[mask], has_oob=self.has_oob[mask], oob=self.oob[mask])


class Scratch:
    """Per-block shared scratch: a thread sees its own stores at once, other threads' only after a barrier."""

    def __init__(self, n_blocks: int, size: int, dtype: np.dtype) -> None:
        self._size = size
        poison = np.full(n_blocks * size * dtype.itemsize, SCRATCH_POISON, dtype=np.uint8)
        self._visible = poison.view(dtype)
        self._pending = self._visible.copy()
        self._writer = np.full(n_blocks * size, -1, dtype=np.int64)  # rank of the pending store

    def _flat(self, block: Array, index: Array) -> Array:
        if index.size and (index.min() < 0 or index.max() >= self._size):
            raise ModelFault(f"shared access at {int(index.min())}..{int(index.max())} "
                             f"outside {self._size} items")
        return block * self._size + index

    def store(self, block: Array, index: Array, values: Array, rank: Array) -> None:
        flat = self._flat(block, index)
        self._pending[flat] = values
        self._writer[flat] = rank

    def barrier(self) -> None:
        done = self._writer >= 0
        self._visible[done] = self._pending[done]
        self._writer[:] = -1

    def load(self, block: Array, index: Array, rank: Array) -> Array:
        flat = self._flat(block, index)
        own = self._writer[flat] == rank
        return np.where(own, self._pending[flat], self._visible[flat])


class ThreadSteps:
    """The steps of a thread every family's scratch-based model shares, each one a mutant may change."""

    def rank(self, block: tuple[int, ...], x: Array, y: Array, z: Array) -> Array:
        """The rank the primitive derives from the thread index."""
        return linear_rank(block, x, y, z)

    def register(self, values: Array) -> Array:
        """Items as they pass through a thread's registers."""
        return values

    def sync(self, scratch: Scratch) -> None:
        """The block barrier between scratch stores and the loads of other threads."""
        scratch.barrier()


class ReferenceModel:
    """A correct backend. The kernels follow the ABI of ``coopcheck.load_store``; the primitive's steps are methods.

    >>> spec = coopcheck.KernelSpec("block.load", "int32", (2,), 2, "striped")
    >>> batch = coopcheck.LoadBatch(src=np.arange(4, dtype=np.int32), init=np.full(4, -1, np.int32),
    ...                        valid=np.array([3]), offset=np.array([0]), has_oob=np.array([0]),
    ...                        oob=np.zeros(1, np.int32), region=4)
    >>> ReferenceModel().launch(spec, batch).tolist()
    [0, 2, 1, -1]
    """

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec:
        """Refuse bad statics as a backend's public entry point does."""
        check_spec(spec)
        return spec

    def launch(self, spec: coopcheck.KernelSpec, batch: coopcheck.LoadBatch | coopcheck.StoreBatch) -> Array:
        """Run the batched kernel (one block per case) and return ``dst``; the batch is left unchanged."""
        if isinstance(batch, coopcheck.LoadBatch):
            has_oob, oob = np.asarray(batch.has_oob) != 0, np.asarray(batch.oob)
            slots, call, part = self._prologue(spec, batch, has_oob, oob)
            regs = np.asarray(batch.init)[slots]
            regs[part] = self.load(call, np.asarray(batch.src), regs[part])
            dst: Array = np.empty(batch.n_blocks * spec.tile, dtype=regs.dtype)
            dst[slots] = regs
            return dst
        no_oob = np.zeros(batch.n_blocks, dtype=bool), np.zeros(batch.n_blocks, dtype=spec.dtype)
        slots, call, part = self._prologue(spec, batch, *no_oob)
        dst = np.array(batch.dst, copy=True)
        self.store(call, dst, np.asarray(batch.items)[slots][part])
        return dst

    def _prologue(self, spec: coopcheck.KernelSpec, batch: coopcheck.LoadBatch | coopcheck.StoreBatch, has_oob: Array,
                  oob: Array) -> tuple[Array, Call, Array]:
        """The wrapper kernel's part: (each thread's payload slots, the primitive's call, who makes it)."""
        b, x, y, z = grid_threads(spec.block, batch.n_blocks)
        # The caller ranks threads by the ABI, x fastest, whatever rank the primitive computes.
        first = b * spec.tile + linear_rank(spec.block, x, y, z) * spec.items_per_thread
        slots = first[:, None] + np.arange(spec.items_per_thread)
        offset = self.tile_offset(np.asarray(batch.offset)[b], np.dtype(spec.dtype).itemsize)
        call = Call(
            spec=spec,
            block=b,
            rank=self.rank(spec.block, x, y, z),
            base=b * batch.region + offset,
            valid=np.asarray(batch.valid)[b].astype(np.int64),
            has_oob=has_oob[b],
            oob=oob[b],
        )
        part = self.takes_part(call)
        return slots, call.lanes(part), part

    # -- the primitive's steps (each one a mutant may change) -----------------------------------

    def rank(self, block: tuple[int, ...], x: Array, y: Array, z: Array) -> Array:
        """The rank the primitive derives from the thread index."""
        return linear_rank(block, x, y, z)

    def tile_offset(self, offset: Array, itemsize: int) -> Array:
        """Where the tile starts within the block's region, in elements."""
        return offset.astype(np.int64)

    def takes_part(self, call: Call) -> Array:
        """Which threads execute the primitive."""
        return np.ones(call.rank.size, dtype=bool)

    def is_valid(self, call: Call, index: Array) -> Array:
        """Guard of the item at tile ``index``."""
        return index < call.valid

    def invalid_slot(self, call: Call, old: Array) -> Array:
        """What an invalid payload slot holds after Load."""
        return np.where(call.has_oob, call.oob, old)

    def register(self, values: Array) -> Array:
        """Items as they pass through a thread's registers."""
        return values

    def blocked_index(self, call: Call, item: int) -> Array:
        return call.rank * call.spec.items_per_thread + item

    def striped_index(self, call: Call, item: int) -> Array:
        return call.rank + item * call.spec.threads

    def wide_access(self, addr: Array, width: int) -> tuple[Array, Array]:
        """(lanes that may issue one wide access at ``addr``, the address they issue it at)."""
        return addr % width == 0, addr

    def chunk_valid(self, call: Call, index: Array, width: int) -> Array:
        """Whether the ``width`` items from tile ``index`` on are all valid (a wide access moves them all)."""
        return self.is_valid(call, index + width - 1)

    def sync(self, scratch: Scratch) -> None:
        """The barrier between the transpose's scratch writes and reads (block- or warp-wide)."""
        scratch.barrier()

    def transposed_slot(self, call: Call, index: Array, exchanged: Array,
                        old: Array) -> Array:
        """A Load transpose's payload slot: the exchanged item if valid, else the slot's own fallback."""
        return np.where(self.is_valid(call, index), exchanged, self.invalid_slot(call, old))

    def warp_origin(self, call: Call) -> Array:
        """First tile index of the thread's warp tile (warp_transpose)."""
        return (call.rank // WARP_SIZE) * WARP_SIZE * call.spec.items_per_thread

    # -- Load ---------------------------------------------------------------------------------------

    def load(self, call: Call, src: Array, regs: Array) -> Array:
        """The threads' payload registers after block Load (``regs`` holds them before)."""
        regs = regs.copy()
        alg = call.spec.algorithm
        if alg in coopcheck.TRANSPOSE_FAMILY:
            return self._load_transposed(call, src, regs)
        if alg == "vectorize":
            return self._load_vectorized(call, src, regs)
        index = self.striped_index if alg == "striped" else self.blocked_index
        for item in range(call.spec.items_per_thread):
            regs[:, item] = self._load_item(call, src, index(call, item), regs[:, item])
        return regs

    def _load_item(self, call: Call, src: Array, index: Array, old: Array) -> Array:
        """One guarded element read per lane."""
        ok = self.is_valid(call, index)
        out = self.invalid_slot(call, old).copy()  # a fresh register: ``old`` may be needed later
        out[ok] = self.register(src[_checked(src, call.base[ok] + index[ok])])
        return out

    def _load_vectorized(self, call: Call, src: Array, regs: Array) -> Array:
        """Blocked chunks read wide where aligned and wholly valid, element by element otherwise."""
        width = vector_items(call.spec)
        for first in range(0, call.spec.items_per_thread, width):
            index = self.blocked_index(call, first)
            aligned, addr = self.wide_access(call.base + index, width)
            wide = aligned & self.chunk_valid(call, index, width)
            regs[wide, first:first + width] = self.register(src[wide_addresses(src, addr[wide], width)])
            narrow, rest = ~wide, call.lanes(~wide)
            for j in range(width):
                col = first + j
                regs[narrow, col] = self._load_item(rest, src, index[narrow] + j, regs[narrow, col])
        return regs

    def _exchange_indices(self, call: Call, item: int) -> tuple[Array, Array]:
        """(striped tile index the thread reads, blocked tile index it ends up holding) of one item."""
        if call.spec.algorithm == "warp_transpose":
            lane = call.rank % WARP_SIZE
            origin = self.warp_origin(call)
            return (origin + lane + item * WARP_SIZE,
                    origin + lane * call.spec.items_per_thread + item)
        return self.striped_index(call, item), self.blocked_index(call, item)

    def _load_transposed(self, call: Call, src: Array, regs: Array) -> Array:
        """Striped reads, then a striped-to-blocked exchange through shared scratch across a barrier."""
        ipt = call.spec.items_per_thread
        scratch = Scratch(int(call.block.max(initial=-1)) + 1, call.spec.tile, regs.dtype)
        for item in range(ipt):
            striped, _ = self._exchange_indices(call, item)
            scratch.store(call.block, striped, self._load_item(call, src, striped, regs[:, item]), call.rank)
        self.sync(scratch)
        for item in range(ipt):
            _, blocked = self._exchange_indices(call, item)
            exchanged = scratch.load(call.block, blocked, call.rank)
            regs[:, item] = self.transposed_slot(call, blocked, exchanged, regs[:, item])
        return regs

    # -- Store --------------------------------------------------------------------------------------

    def store(self, call: Call, dst: Array, regs: Array) -> None:
        """Block Store of the threads' items ``regs`` into ``dst``."""
        alg = call.spec.algorithm
        if alg in coopcheck.TRANSPOSE_FAMILY:
            self._store_transposed(call, dst, regs)
        elif alg == "vectorize":
            self._store_vectorized(call, dst, regs)
        else:
            index = self.striped_index if alg == "striped" else self.blocked_index
            for item in range(call.spec.items_per_thread):
                self._store_item(call, dst, index(call, item), regs[:, item])

    def _store_item(self, call: Call, dst: Array, index: Array, values: Array) -> None:
        """One guarded element write per lane."""
        ok = self.is_valid(call, index)
        dst[_checked(dst, call.base[ok] + index[ok])] = self.register(values[ok])

    def _store_vectorized(self, call: Call, dst: Array, regs: Array) -> None:
        width = vector_items(call.spec)
        for first in range(0, call.spec.items_per_thread, width):
            index = self.blocked_index(call, first)
            aligned, addr = self.wide_access(call.base + index, width)
            wide = aligned & self.chunk_valid(call, index, width)
            dst[wide_addresses(dst, addr[wide], width)] = self.register(regs[wide, first:first + width])
            narrow, rest = ~wide, call.lanes(~wide)
            for j in range(width):
                self._store_item(rest, dst, index[narrow] + j, regs[narrow, first + j])

    def _store_transposed(self, call: Call, dst: Array, regs: Array) -> None:
        """A blocked-to-striped exchange through shared scratch across a barrier, then striped writes."""
        ipt = call.spec.items_per_thread
        scratch = Scratch(int(call.block.max(initial=-1)) + 1, call.spec.tile, regs.dtype)
        for item in range(ipt):
            _, blocked = self._exchange_indices(call, item)
            scratch.store(call.block, blocked, regs[:, item], call.rank)
        self.sync(scratch)
        for item in range(ipt):
            striped, _ = self._exchange_indices(call, item)
            self._store_item(call, dst, striped, scratch.load(call.block, striped, call.rank))
