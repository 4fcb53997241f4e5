"""The static plans of the warp families' calls (Warp Reduce, Warp Scan: the rules are :mod:`coopcheck.warp_reduce`'s
and :mod:`coopcheck.warp_scan`'s): the logical warps' geometry and the shuffles a lane makes.

Pure Python (no cutlass import). Logical warps cut each hardware warp from its lane 0, so every shuffle is one of the
hardware warp, over the mask of its lanes that exist, whatever the width (CUB's WarpMask leaves a non-power-of-two
logical warp past a hardware warp's first out of its own mask: NVIDIA/cccl#858). As CUB's WarpReduceShfl and
WarpScanShfl, a lane reads a partial at a distance of 1, 2, 4, ... below the width, every lane of the hardware warp
shuffling at every step (a source it does not use is its own logical warp's last lane or lane 0, never a lane past
the hardware warp's last); a guard says whether it applies the operator. Every index is a plain function of the rank
over :class:`Arithmetic`, which the DSL traces with run-time values and host tests evaluate on NumPy arrays, so the
sources, guards and operand order are checked without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import coopcheck
from coopcheck import warp_reduce, warp_scan
from coopcheck.vocabulary import WARP_SIZE

#: Every lane of a hardware warp, as a shuffle or ballot mask.
FULL_MASK = 0xFFFFFFFF


class Arithmetic(NamedTuple):
    """What the plans' index functions need past Python's operators: an elementwise minimum, 32-bit unsigned
    values (logical shifts, wrapping negation) and a population count; the DSL's and NumPy's."""

    minimum: Callable[[Any, Any], Any]
    unsigned: Callable[[Any], Any]
    popcount: Callable[[Any], Any]


@dataclass(frozen=True)
class WarpPlan:
    """A validated warp call: dtype, block, logical warp width and operator, every one compile-time."""

    dtype: str
    block: tuple[int, ...]
    width: int
    op: str

    @property
    def threads(self) -> int:
        return coopcheck.block_threads(self.block)

    @property
    def offsets(self) -> tuple[int, ...]:
        """The distances of the shuffle steps: 1, 2, 4, ... below the width (none at width 1)."""
        return tuple(1 << level for level in range((self.width - 1).bit_length()))

    def lane(self, rank: Any) -> Any:
        """The rank's lane in its logical warp."""
        return rank % WARP_SIZE % self.width

    def start(self, rank: Any) -> Any:
        """The hardware lane of the rank's logical warp's lane 0."""
        return rank % WARP_SIZE - self.lane(rank)

    def hardware_lanes(self, rank: Any, arith: Arithmetic) -> Any:
        """Lanes of the rank's hardware warp that exist (the block's last hardware warp may be partial)."""
        return arith.minimum(WARP_SIZE, self.threads - (rank - rank % WARP_SIZE))

    def present(self, rank: Any, arith: Arithmetic) -> Any:
        """Lanes of the rank's logical warp that exist (fewer than the width at the end of a hardware warp)."""
        return arith.minimum(self.width, self.hardware_lanes(rank, arith) - self.start(rank))

    def member_mask(self, rank: Any, arith: Arithmetic) -> Any:
        """The lanes of the rank's hardware warp that exist: every shuffle's and ballot's member mask."""
        return arith.unsigned(FULL_MASK) >> arith.unsigned(WARP_SIZE - self.hardware_lanes(rank, arith))

    def last_lane(self, rank: Any, arith: Arithmetic) -> Any:
        """The hardware lane of the rank's logical warp's last lane that exists."""
        return self.start(rank) + self.present(rank, arith) - 1


@dataclass(frozen=True)
class WarpReducePlan(WarpPlan):
    """CUB's WarpReduceShfl: each lane reduces down to its segment's end."""

    mode: str

    def valid_end(self, rank: Any, valid: Any, arith: Arithmetic) -> Any:
        """Mode reduce: the last valid lane, min(valid_items, lanes present) - 1 (-1: none)."""
        return arith.minimum(valid, self.present(rank, arith)) - 1

    def flagged_end(self, rank: Any, flags: Any, arith: Arithmetic) -> Any:
        """Modes head and tail: the last lane of the rank's segment, from the hardware warp's ballot of flags: the
        lane before the next head after it, or the next tail from it on, or the logical warp's last lane."""
        lane, present = self.lane(rank), self.present(rank, arith)
        mine = (flags >> arith.unsigned(self.start(rank))) & (
            arith.unsigned(FULL_MASK) >> arith.unsigned(WARP_SIZE - present))
        ahead = mine >> arith.unsigned(lane)  # a tail flag ends its own lane's segment
        if self.mode == "head":
            ahead = ahead >> arith.unsigned(1)  # a head flag starts the next segment
        lowest = ahead & (arith.unsigned(0) - ahead)
        distance = arith.popcount(lowest - arith.unsigned(1))  # trailing zeros: 32 where no flag is ahead
        return arith.minimum(lane + distance, present - 1)

    def source(self, rank: Any, offset: int, arith: Arithmetic) -> Any:
        """The hardware lane whose partial the rank reads at step ``offset``: ``offset`` lanes up, or its logical
        warp's last lane past that."""
        return arith.minimum(rank % WARP_SIZE + offset, self.last_lane(rank, arith))

    def takes(self, rank: Any, end: Any, offset: int) -> Any:
        """Whether the rank applies the operator at step ``offset``: the partial read lies within its segment."""
        return self.lane(rank) + offset <= end

    def operands(self, own: Any, read: Any) -> tuple[Any, Any]:
        """(earlier, later) in lane order: the partial read comes from a higher lane."""
        return own, read


@dataclass(frozen=True)
class WarpScanPlan(WarpPlan):
    """CUB's WarpScanShfl: each lane scans up from its logical warp's lane 0."""

    mode: str
    seed: str
    aggregate: str

    @property
    def inclusive(self) -> bool:
        return self.mode == "inclusive"

    @property
    def seeded(self) -> bool:
        """Whether the block's initial value prefixes every logical warp's scan."""
        return self.seed == "initial"

    def source(self, rank: Any, offset: int, arith: Arithmetic) -> Any:
        """The hardware lane whose partial the rank reads at step ``offset`` (its left neighbour's at offset 1):
        ``offset`` lanes down, or its logical warp's lane 0 below that."""
        return rank % WARP_SIZE - arith.minimum(offset, self.lane(rank))

    def takes(self, rank: Any, offset: int) -> Any:
        """Whether the rank applies the operator at step ``offset``: a lane ``offset`` below it exists."""
        return self.lane(rank) >= offset

    def operands(self, own: Any, read: Any) -> tuple[Any, Any]:
        """(earlier, later) in lane order: the partial read comes from a lower lane."""
        return read, own


def warp_reduce_plan(spec: coopcheck.KernelSpec) -> WarpReducePlan:
    """The checked plan of a harness spec (raises ``coopcheck.InvalidParameter`` for a rejected static)."""
    warp_reduce.check_spec(spec)
    return WarpReducePlan(spec.dtype, spec.block, warp_reduce.width(spec), str(spec.static("op")),
                          str(spec.static("mode")))


def warp_scan_plan(spec: coopcheck.KernelSpec) -> WarpScanPlan:
    """The checked plan of a harness spec (raises ``coopcheck.InvalidParameter`` for a rejected static)."""
    warp_scan.check_spec(spec)
    return WarpScanPlan(spec.dtype, spec.block, warp_scan.width(spec), str(spec.static("op")),
                        str(spec.static("mode")), str(spec.static("seed")), str(spec.static("aggregate")))
