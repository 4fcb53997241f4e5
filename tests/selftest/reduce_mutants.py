"""The Block Reduce family's mutants: its reference model with one small, named deviation each.

Each overrides one step of :class:`ReduceModel` (a deviation every family's model can have is made from
:mod:`.deviations`); they run on the family's own contract only, and each must fail some of its pr cases, every
failing case naming one of ``rules``.
"""

from __future__ import annotations

import numpy as np

from . import deviations
from .deviations import MutantTraits, common_mutants, wrong_identity
from .model import Array, Scratch
from .reduce_model import Call, ReduceModel

REDUCE = ("block.reduce",)


class ReduceMutant(MutantTraits, ReduceModel):
    """A reduce model with one deviation; ``name`` is its pytest id."""

    family = REDUCE
    targets = REDUCE


class WrongIdentity(ReduceMutant):
    """Invalid items are replaced by a wrong identity and the whole tile reduced: min pads with the dtype's
    lowest value, max with its highest (each the other's identity), sum with 1, matmul with the zero matrix, first
    with 1."""

    name = "reduce-wrong-identity"
    rules = ("valid-prefix",)

    def prepare(self, call: Call, items: Array) -> tuple[Array, Array]:
        valid = self.item_valid(call)
        return np.where(valid, items, wrong_identity(call.op, items.dtype)), np.ones(valid.shape, dtype=bool)


class InvalidApplied(ReduceMutant):
    """valid_items is ignored: the operator is applied to every item of the tile, invalid ones included."""

    name = "reduce-invalid-item-applied"
    rules = ("valid-prefix", "invalid-never-applied")
    diagnosis = "invalid-included"

    def item_valid(self, call: Call) -> Array:
        return np.ones((len(call.rank), call.spec.items_per_thread), dtype=bool)


class OperandsReversed(ReduceMutant):
    """Every application of the operator takes its operands the other way round: op(later, earlier)."""

    name = "reduce-operands-reversed"
    rules = ("tile-order",)
    diagnosis = "operands-reversed"

    def combine(self, call: Call, lanes: Array, a: Array, b: Array) -> Array:
        return self.operator(call, lanes, b, a)


class ResultInWrongThread(ReduceMutant):
    """The block's result ends in its last thread, which swaps its value with thread 0's."""

    name = "reduce-result-in-wrong-thread"
    rules = ("thread-0",)
    diagnosis = "result-in-last-thread"

    def returned(self, call: Call, result: Array) -> Array:
        last = call.spec.threads - 1
        swapped = result.copy()
        first, final = np.flatnonzero(call.rank == 0), np.flatnonzero(call.rank == last)
        swapped[first], swapped[final] = result[final], result[first]
        return swapped


class WithoutBarrier(ReduceMutant):
    """No barrier between the scratch stores and the loads: another thread's partial is not there yet (a race
    racecheck reports on a GPU)."""

    name = "reduce-without-barrier"
    rules = ("block-reduction",)

    def sync(self, scratch: Scratch) -> None:
        pass


class ItemsOverwritten(deviations.InputOverwritten, ReduceMutant):
    """The launch hands the kernel the host's items buffer and the kernel clears it after use."""

    name = "reduce-items-overwritten"
    field = "items"


#: The deviations every family's model has (:mod:`.deviations`), named after this family.
RankYMajor, StaticsUnchecked, FloatCanonicalized, OutputTruncated = common_mutants(ReduceMutant, "reduce")
FloatCanonicalized.rules = ("float-min-max", "bit-exact")
RankYMajor.rules = ("rank-order", "invalid-never-applied")  # its operator also takes other threads' invalid items

REDUCE_MUTANTS: tuple[type[ReduceMutant], ...] = (
    WrongIdentity, InvalidApplied, OperandsReversed, ResultInWrongThread, WithoutBarrier, RankYMajor,
    FloatCanonicalized, StaticsUnchecked, ItemsOverwritten, OutputTruncated,
)
