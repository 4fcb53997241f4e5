"""The static plan of one block Shuffle call (the methods and rules are :mod:`coopcheck.shuffle`'s): the scratch
it takes, the item each thread hands on and takes, its moves within the thread, and the rank it takes from.

Pure Python (no cutlass import). As CUB's BlockShuffle, every method stores one item a thread in a scratch of one
item a thread and, across a block barrier, takes one from another thread's entry; up and down also move the
thread's other items one step. The source and guard functions are plain functions of (rank, distance) that the
DSL traces with runtime values and host tests evaluate on NumPy ints, so the arithmetic is checked without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import coopcheck
from coopcheck.shuffle import BLOCK_ITEM, SCALAR, check_spec

from coopcheck_cutlass.plan import ItemsPlan


@dataclass(frozen=True)
class ShufflePlan(ItemsPlan):
    """A validated block Shuffle configuration; every field is a compile-time constant (the distance is not)."""

    method: str

    @property
    def scalar(self) -> bool:
        """offset and rotate: one item a thread, moved by a run-time distance."""
        return self.method in SCALAR

    @property
    def up(self) -> bool:
        return self.method in ("up", "up_suffix")

    @property
    def with_block_item(self) -> bool:
        """up_suffix and down_prefix also give every thread CUB's block_suffix / block_prefix."""
        return self.method in BLOCK_ITEM

    @property
    def scratch_items(self) -> int:
        """Shared-memory elements: one a thread (CUB's ``TempStorage``)."""
        return self.threads

    @property
    def handed(self) -> int:
        """The item a thread stores for another: up hands on its last, down its first (offset, rotate: its one)."""
        return self.items_per_thread - 1 if self.up else 0

    @property
    def taken(self) -> int:
        """The item a thread takes from another thread's scratch entry: up its first, down its last."""
        return self.items_per_thread - 1 if not (self.up or self.scalar) else 0

    @property
    def moves(self) -> tuple[tuple[int, int], ...]:
        """(to, from) of the items moving within a thread, in order: against the shift's direction, so that in
        place every item is read before its slot is overwritten.

        >>> ShufflePlan("int8", (32,), 3, "up").moves, ShufflePlan("int8", (32,), 3, "down").moves
        (((2, 1), (1, 0)), ((0, 1), (1, 2)))
        """
        if self.scalar:
            return ()
        if self.up:
            return tuple((i, i - 1) for i in range(self.items_per_thread - 1, 0, -1))
        return tuple((i, i + 1) for i in range(self.items_per_thread - 1))

    @property
    def bounded(self) -> bool:
        """Whether a source may lie outside the block (offset's, and up's and down's at the tile's edge), so the
        load needs :meth:`takes`; rotate's wraps into it."""
        return self.method != "rotate"

    @property
    def block_item_rank(self) -> int:
        """The thread whose scratch entry is the block item: the last (up's suffix) or the first (down's prefix)."""
        return self.threads - 1 if self.up else 0

    def source(self, rank: Any, distance: Any) -> Any:
        """The rank whose scratch entry thread ``rank`` takes: ``rank + distance`` (rotate: modulo the threads,
        ``distance`` lying in [1, threads)); up and down ignore the distance and take their neighbour's.

        >>> ShufflePlan("int8", (32,), 1, "rotate").source(30, 5), ShufflePlan("int8", (32,), 2, "down").source(31, 0)
        (3, 32)
        """
        if self.method == "rotate":
            return (rank + distance) % self.threads
        if self.scalar:
            return rank + distance
        return rank - 1 if self.up else rank + 1

    def takes(self, source: Any) -> Any:
        """Whether a thread takes the entry of ``source``: a thread whose source lies outside the block leaves its
        taken item as it was (offset's outside, up's thread 0, down's last thread)."""
        return (source >= 0) & (source < self.threads)


def shuffle_plan(spec: coopcheck.KernelSpec) -> ShufflePlan:
    """The checked plan of a harness spec (raises ``coopcheck.InvalidParameter`` for a rejected static)."""
    check_spec(spec)
    return ShufflePlan(spec.dtype, spec.block, spec.items_per_thread, spec.algorithm)
