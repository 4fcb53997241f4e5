"""The Block Exchange family's mutants: its reference model with one small, named deviation each.

Each overrides one step of :class:`ExchangeModel` (a deviation every family's model can have is made from
:mod:`.deviations`); they run on the family's own contract only (the Load/Store mutants on theirs), and each
must fail some of its pr cases, every failing case naming one of ``rules``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import deviations
from .deviations import MutantTraits, common_mutants
from .exchange_model import Call, ExchangeModel
from .model import Array, Scratch

EXCHANGE = ("block.exchange",)


class ExchangeMutant(MutantTraits, ExchangeModel):
    """An exchange model with one deviation; ``name`` is its pytest id."""

    family = EXCHANGE
    targets = EXCHANGE


class RanksInverted(ExchangeMutant):
    """A scatter gathers instead: each item is stored at its own output tile index, and each output slot loads
    the tile index its own rank names."""

    name = "exchange-ranks-inverted"
    rules = ("scatter-ranks",)
    diagnosis = "ranks-inverted"

    def positions(self, call: Call) -> tuple[Array, Array, Array]:
        store, stored, load = super().positions(call)
        if not call.spec.algorithm.startswith("scatter"):
            return store, stored, load
        return load, np.ones(load.shape, dtype=bool), call.ranks % call.spec.tile


class WarpStripedAsStriped(ExchangeMutant):
    """The warp-striped arrangement is mapped as the block-striped one (item i of rank r at r + i*threads)."""

    name = "exchange-warp-striped-as-striped"
    rules = ("warp-striped",)
    diagnosis = "warp-striped-as-striped"

    def warp_striped_index(self, call: Call, item: int) -> Array:
        return self.striped_index(call, item)


class GuardedWritesNegativeRanks(ExchangeMutant):
    """The guarded scatter drops its guard: an item of negative rank is stored too, where a negative index
    lands in an array that wraps it (rank + tile)."""

    name = "exchange-guarded-writes-negative-ranks"
    rules = ("guarded-skip",)
    diagnosis = "negative-ranks-written"

    def scatter_writes(self, call: Call) -> tuple[Array, Array]:
        if call.spec.algorithm != "scatter_to_striped_guarded":
            return super().scatter_writes(call)
        return call.ranks % call.spec.tile, np.ones(call.ranks.shape, dtype=bool)


class FlaggedIgnoresFlags(ExchangeMutant):
    """The flagged scatter stores every item at its rank, flagged or not."""

    name = "exchange-flagged-ignores-flags"
    rules = ("flagged-skip",)
    diagnosis = "flags-ignored"

    def scatter_writes(self, call: Call) -> tuple[Array, Array]:
        if call.spec.algorithm != "scatter_to_striped_flagged":
            return super().scatter_writes(call)
        return call.ranks, np.ones(call.ranks.shape, dtype=bool)


class TimeSliceReusesScratchWithoutBarrier(ExchangeMutant):
    """Time-sliced, no barrier precedes a slice's stores, so the next slice's writers may run ahead of this
    slice's readers: modelled by the schedule that breaks it (their stores land before this slice's loads)."""

    name = "exchange-time-slice-without-reuse-barrier"
    rules = ("time-slicing",)

    def run_slices(self, scratch: Scratch, slices: int, store: Callable[[int], None],
                   load: Callable[[int], None]) -> None:
        for s in range(slices):
            store(s)
            self.sync(scratch)
            if s + 1 < slices:
                store(s + 1)
                self.sync(scratch)
            load(s)


class InPlaceWithoutTemporary(ExchangeMutant):
    """Time-sliced, each slice's items go straight into the output: in place that overwrites input items that
    a later slice still has to store."""

    name = "exchange-in-place-without-temporary"
    rules = ("in-place",)

    def temporary(self, out: Array) -> Array:
        return out


class DirectionSwapped(ExchangeMutant):
    """The conversions run the other way: striped_to_blocked exchanges as blocked_to_striped, and so on."""

    name = "exchange-direction-swapped"
    rules = ("blocked-striped", "warp-striped")
    diagnosis = "direction-swapped"

    def sides(self, call: Call) -> tuple[Callable[[Call, int], Array], Callable[[Call, int], Array]]:
        source, output = super().sides(call)
        return output, source


class ScatterToOtherArrangement(ExchangeMutant):
    """scatter_to_blocked loads its output striped, and the striped scatters load theirs blocked."""

    name = "exchange-scatter-other-arrangement"
    rules = ("scatter-ranks",)
    diagnosis = "scatter-arrangement-swapped"

    def scatter_output(self, call: Call) -> Callable[[Call, int], Array]:
        return self.striped_index if call.spec.algorithm == "scatter_to_blocked" else self.blocked_index


class SeparateOutputClobbersInput(ExchangeMutant):
    """With a separate output the exchange runs in place on the input and copies the result out."""

    name = "exchange-separate-clobbers-input"
    rules = ("input-kept",)

    def exchange(self, call: Call, inp: Array, out: Array) -> None:
        super().exchange(call, inp, inp)
        if out is not inp:
            out[:] = inp


class RanksOverwritten(deviations.InputOverwritten, ExchangeMutant):
    """The launch hands the kernel the host's ranks buffer and the kernel clears it after use."""

    name = "exchange-ranks-overwritten"
    field = "ranks"


#: The deviations every family's model has (:mod:`.deviations`), named after this family.
RankYMajor, StaticsUnchecked, FloatCanonicalized, OutputTruncated = common_mutants(ExchangeMutant, "exchange")

EXCHANGE_MUTANTS: tuple[type[ExchangeMutant], ...] = (
    RanksInverted, WarpStripedAsStriped, GuardedWritesNegativeRanks, FlaggedIgnoresFlags,
    TimeSliceReusesScratchWithoutBarrier, InPlaceWithoutTemporary, RankYMajor, DirectionSwapped,
    ScatterToOtherArrangement, SeparateOutputClobbersInput, FloatCanonicalized, StaticsUnchecked,
    RanksOverwritten, OutputTruncated,
)
