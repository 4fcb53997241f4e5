"""The Block Shuffle family's mutants: its reference model with one small, named deviation each.

Each overrides one step of :class:`ShuffleModel` (a deviation every family's model can have is made from
:mod:`.deviations`); they run on the family's own contract only, and each must fail some of its pr cases, every
failing case naming one of ``rules``.
"""

from __future__ import annotations

import coopcheck
import numpy as np

from . import deviations
from .deviations import MutantTraits, common_mutants
from .model import Array, Scratch
from .shuffle_model import Call, ShuffleModel

SHUFFLE = ("block.shuffle",)


class ShuffleMutant(MutantTraits, ShuffleModel):
    """A shuffle model with one deviation; ``name`` is its pytest id."""

    family = SHUFFLE
    targets = SHUFFLE


class DistanceNegated(ShuffleMutant):
    """offset and rotate read the thread ``rank - distance`` (the sign of the distance flipped; rotate wraps it
    from below)."""

    name = "shuffle-distance-negated"
    rules = ("offset", "rotate")
    diagnosis = "distance-negated"

    def source(self, call: Call) -> tuple[Array, Array]:
        if call.method == "rotate":
            src = call.rank - call.distance
            return np.where(src < 0, src + call.spec.threads, src), np.ones(src.shape, dtype=bool)
        return super().source(Call(call.spec, call.method, call.block, call.rank, -call.distance))


class RotateWithoutWrap(ShuffleMutant):
    """rotate reads ``rank + distance`` as offset does: a thread past the last keeps its output."""

    name = "shuffle-rotate-without-wrap"
    rules = ("rotate",)
    diagnosis = "rotate-unwrapped"

    def source(self, call: Call) -> tuple[Array, Array]:
        return super().source(Call(call.spec, "offset", call.block, call.rank, call.distance))


class OffsetWraps(ShuffleMutant):
    """offset wraps a source outside the block around it, writing outputs CUB leaves as they were."""

    name = "shuffle-offset-wraps"
    rules = ("offset-outside",)
    diagnosis = "offset-wrapped"

    def source(self, call: Call) -> tuple[Array, Array]:
        src = (call.rank + call.distance) % call.spec.threads
        return src, np.ones(src.shape, dtype=bool)


class CarryFromOwnThread(ShuffleMutant):
    """up's item 0 (down's last item) is read from the thread's own scratch entry, not its neighbour's."""

    name = "shuffle-carry-from-own-thread"
    rules = ("shift",)
    diagnosis = "carry-own-thread"

    def carry(self, call: Call, up: bool) -> tuple[Array, Array]:
        _, reads = super().carry(call, up)
        return call.rank, reads


class EdgeWritten(ShuffleMutant):
    """up's thread 0 (down's last thread) also reads a neighbour, the one at the other end: a rotation."""

    name = "shuffle-edge-written"
    rules = ("shift-edge",)
    diagnosis = "shift-rotated"

    def carry(self, call: Call, up: bool) -> tuple[Array, Array]:
        src, _ = super().carry(call, up)
        return src % call.spec.threads, np.ones(src.shape, dtype=bool)


class BlockItemFromWrongThread(ShuffleMutant):
    """block_suffix is read from thread 0's scratch entry, block_prefix from the last thread's."""

    name = "shuffle-block-item-from-wrong-thread"
    rules = ("block-item",)
    diagnosis = "block-item-from-wrong-thread"

    def block_source(self, call: Call) -> int:
        return call.spec.threads - 1 - super().block_source(call)


class UntouchedOverwritten(ShuffleMutant):
    """With a separate output the output starts as a copy of the input, so an output CUB leaves as it was
    holds the thread's own item."""

    name = "shuffle-untouched-overwritten"
    rules = ("offset-outside", "shift-edge")
    diagnosis = "untouched-overwritten"

    def shuffle(self, call: Call, inp: Array, out: Array, block_item: Array) -> None:
        out[:] = inp
        super().shuffle(call, inp, out, block_item)


class WithoutBarrier(ShuffleMutant):
    """No barrier between the scratch stores and the loads: another thread's item is not there yet (a race
    racecheck reports on a GPU)."""

    name = "shuffle-without-barrier"
    rules = ("offset", "rotate", "shift", "block-item")

    def sync(self, scratch: Scratch) -> None:
        pass


class ShiftWithTheShift(ShuffleMutant):
    """up and down move the items within a thread in the shift's own order: in place, an item is overwritten
    before it moves on."""

    name = "shuffle-shift-order-in-place"
    rules = ("in-place",)

    def shift_order(self, ipt: int, up: bool) -> range:
        return range(1, ipt) if up else range(ipt - 2, -1, -1)


class DirectionSwapped(ShuffleMutant):
    """up runs as down and down as up (their block item forms too)."""

    name = "shuffle-direction-swapped"
    rules = ("shift", "block-item")
    diagnosis = "direction-swapped"

    def method(self, spec: coopcheck.KernelSpec) -> str:
        swapped = {"up": "down", "down": "up", "up_suffix": "down_prefix", "down_prefix": "up_suffix"}
        return swapped.get(spec.algorithm, spec.algorithm)


class SeparateClobbersInput(ShuffleMutant):
    """With a separate output the result is also copied into the input array."""

    name = "shuffle-separate-clobbers-input"
    rules = ("input-kept",)

    def shuffle(self, call: Call, inp: Array, out: Array, block_item: Array) -> None:
        super().shuffle(call, inp, out, block_item)
        inp[:] = out


class PriorOverwritten(deviations.InputOverwritten, ShuffleMutant):
    """The launch hands the kernel the host's prior buffer and the kernel clears it after use."""

    name = "shuffle-prior-overwritten"
    field = "prior"


#: The deviations every family's model has (:mod:`.deviations`), named after this family.
RankYMajor, StaticsUnchecked, FloatCanonicalized, OutputTruncated = common_mutants(ShuffleMutant, "shuffle")

SHUFFLE_MUTANTS: tuple[type[ShuffleMutant], ...] = (
    DistanceNegated, RotateWithoutWrap, OffsetWraps, CarryFromOwnThread, EdgeWritten, BlockItemFromWrongThread,
    UntouchedOverwritten, WithoutBarrier, ShiftWithTheShift, DirectionSwapped, RankYMajor, SeparateClobbersInput,
    FloatCanonicalized, StaticsUnchecked, PriorOverwritten, OutputTruncated,
)
