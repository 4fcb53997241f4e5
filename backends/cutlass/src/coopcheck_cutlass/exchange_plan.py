"""The static plan of one block Exchange call (the arrangements and rules are :mod:`coopcheck.exchange`'s): the
scratch it takes, its barriers, and the tile index each slot's item is stored at and loaded from.

Pure Python (no cutlass import). The index functions are plain functions of (rank, item) that the DSL traces
with a runtime rank and host tests evaluate on ints, so the arithmetic the kernels run is checked without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import coopcheck
from coopcheck.exchange import PARTIAL, SCATTER, WARP_METHODS, check_spec, warp_lanes
from coopcheck.vocabulary import WARP_SIZE

from coopcheck_cutlass.plan import ItemsPlan

#: ``position(rank, item)``: the tile index that item ``item`` (a Python int) of ``rank`` holds.
Position = Callable[[Any, int], Any]
FULL_MASK = 0xFFFFFFFF


def sides(method: str) -> tuple[str | None, str]:
    """The arrangements of a method's input and output, as CUB's names say (a scatter's input side is its ranks:
    None; guarded and flagged name how it skips).

    >>> sides("warp_striped_to_blocked"), sides("scatter_to_striped_flagged")
    (('warp_striped', 'blocked'), (None, 'striped'))
    """
    source, _, output = method.partition("_to_")
    return (None if source == "scatter" else source), output.removesuffix("_guarded").removesuffix("_flagged")


def position(arrangement: str, threads: int, items_per_thread: int) -> Position:
    """The tile index function of ``arrangement`` in a block of ``threads`` threads.

    >>> [[position("warp_striped", 40, 2)(r, i) for i in range(2)] for r in (0, 31, 32, 39)]
    [[0, 32], [31, 63], [64, 96], [71, 103]]
    """
    ipt, lanes = items_per_thread, warp_lanes(threads)
    if arrangement == "blocked":
        return lambda rank, i: rank * ipt + i
    if arrangement == "striped":
        return lambda rank, i: rank + i * threads
    if arrangement == "warp_striped":
        # (rank - lane) is the warp's first rank, 32 * warp: its share of the tile starts at that times ipt.
        return lambda rank, i: (rank - rank % WARP_SIZE) * ipt + i * lanes + rank % WARP_SIZE
    raise ValueError(f"unknown arrangement {arrangement!r}")


@dataclass(frozen=True)
class ExchangePlan(ItemsPlan):
    """A validated block Exchange configuration; every field is a compile-time constant."""

    method: str
    warp_time_slicing: bool

    @property
    def scatter(self) -> bool:
        return self.method in SCATTER

    @property
    def flagged(self) -> bool:
        return self.method == "scatter_to_striped_flagged"

    @property
    def window(self) -> int:
        """Tile indices one slice exchanges: the whole tile, or time-sliced one warp's share (CUB's
        WarpTimeSlicing: the last slice of a partial last warp is shorter)."""
        return warp_lanes(self.threads) * self.items_per_thread if self.warp_time_slicing else self.tile

    @property
    def slices(self) -> int:
        return -(-self.tile // self.window)

    @property
    def scratch_items(self) -> int:
        """Shared-memory elements: one slice's window."""
        return self.window

    @property
    def block_barrier(self) -> bool:
        """Whether the store and load steps meet at a block barrier: every block method, and every time-sliced
        one (its warps take turns at one scratch); else each warp exchanges its own share at a warp barrier."""
        return self.method not in WARP_METHODS or self.warp_time_slicing

    @property
    def warp_mask(self) -> int:
        """The lanes a warp barrier waits for: all 32, or every thread of a block of fewer (the rules leave no
        partial last warp to a warp method)."""
        return FULL_MASK if self.threads >= WARP_SIZE else (1 << self.threads) - 1

    @property
    def bounded(self) -> bool:
        """Whether a store must check its tile index: against the slice's window when sliced, else only the
        guarded and flagged scatters' skipped items (a negative key); a permutation needs no check (as CUB)."""
        return self.warp_time_slicing or self.method in PARTIAL

    def stores(self, index: Any, flag: Any = None) -> Any:
        """Whether the store step writes the item bound for ``index`` (a tile index less the slice's start): one
        inside the window, and for the flagged scatter one whose ``flag`` is nonzero. Unsliced, a permutation's
        indices lie inside by contract, so only the skips are checked (a negative rank, a zero flag); a negative
        index is never inside, so sliced the guarded scatter's skips need no test of their own.

        >>> plan = ExchangePlan("int32", (64,), 2, "scatter_to_striped_guarded", True)
        >>> [plan.stores(index) for index in (-1, 0, 63, 64)]
        [False, True, True, False]
        """
        inside = self.loads(index) if self.warp_time_slicing else index >= 0
        if self.flagged:
            flagged = flag != 0
            return flagged & inside if self.warp_time_slicing else flagged
        return inside

    def loads(self, index: Any) -> Any:
        """Whether ``index`` (a tile index less the slice's start) lies in the slice's window."""
        return (index >= 0) & (index < self.window)

    def store_position(self) -> Position | None:
        """Where the input item of slot (rank, item) goes; None for a scatter (its rank says)."""
        source = sides(self.method)[0]
        return None if source is None else position(source, self.threads, self.items_per_thread)

    def load_position(self) -> Position:
        """The tile index whose item the output slot (rank, item) takes."""
        return position(sides(self.method)[1], self.threads, self.items_per_thread)


def exchange_plan(spec: coopcheck.KernelSpec) -> ExchangePlan:
    """The checked plan of a harness spec (raises ``coopcheck.InvalidParameter`` for a rejected static)."""
    check_spec(spec)
    return ExchangePlan(spec.dtype, spec.block, spec.items_per_thread, spec.algorithm,
                        spec.static("slicing") == "on")
