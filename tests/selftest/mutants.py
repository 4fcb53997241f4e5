"""The mutants: the reference model with one small, named deviation each, as real backends get wrong.

Each mutant overrides one step of :class:`ReferenceModel`; ``targets`` names the contracts it breaks:
their pr-profile cases must catch it and the other contracts' cases must not notice it.
"""

from __future__ import annotations

import coopcheck
import numpy as np
from coopcheck.vocabulary import WARP_SIZE

from .deviations import MutantTraits, common_mutants
from .model import Array, Call, ReferenceModel, Scratch

LOAD = ("block.load",)
STORE = ("block.store",)
BOTH = LOAD + STORE


class Mutant(MutantTraits, ReferenceModel):
    """A reference model with one deviation; ``name`` is its pytest id."""

    family = BOTH
    targets = BOTH


class IgnoresValidItems(Mutant):
    """Every item counts as valid: Load reads the whole tile, Store writes it."""

    name = "ignores-valid-items"
    rules = ("valid-prefix",)
    diagnosis = "past-valid"

    def is_valid(self, call: Call, index: Array) -> Array:
        return np.ones(index.shape, dtype=bool)


class TransposeMovesInvalidSlots(Mutant):
    """Load transpose trusts the exchange for every slot, so an invalid slot receives the earlier value
    of the slot that held its tile index in striped order (what raw CUB does)."""

    name = "transpose-moves-invalid-slots"
    rules = ("invalid-keep",)
    targets = LOAD

    def transposed_slot(self, call: Call, index: Array, exchanged: Array,
                        old: Array) -> Array:
        return exchanged


class FullTilePathAtTileMinusOne(Mutant):
    """The unguarded full-tile path is taken from valid_items >= tile - 1 on (off by one)."""

    name = "full-tile-path-at-tile-1"
    rules = ("valid-prefix",)
    diagnosis = "past-valid"

    def is_valid(self, call: Call, index: Array) -> Array:
        return (index < call.valid) | (call.valid >= call.spec.tile - 1)


class GuardInclusive(Mutant):
    """The guard is index <= valid_items: one item past the valid prefix moves too."""

    name = "guard-inclusive"
    rules = ("valid-prefix",)
    diagnosis = "past-valid"

    def is_valid(self, call: Call, index: Array) -> Array:
        return index <= call.valid


class StripedAsBlocked(Mutant):
    """The striped arrangement is mapped as blocked (item i of rank r at r*ipt + i)."""

    name = "striped-as-blocked"
    rules = ("arrangement",)
    diagnosis = "striped-as-blocked"

    def striped_index(self, call: Call, item: int) -> Array:
        return self.blocked_index(call, item)


class StorePastValidPrefix(Mutant):
    """Store guards whole threads: valid_items rounded up to a multiple of items_per_thread is written."""

    name = "store-past-valid-prefix"
    rules = ("valid-prefix",)
    diagnosis = "past-valid"
    targets = STORE

    def is_valid(self, call: Call, index: Array) -> Array:
        if call.spec.operation != "block.store":
            return super().is_valid(call, index)
        ipt = call.spec.items_per_thread
        return index < -(-call.valid // ipt) * ipt


class OobDefaultWhenAbsent(Mutant):
    """Load fills invalid slots with the oob value even when the caller passed no oob_default."""

    name = "oob-default-when-absent"
    rules = ("invalid-keep",)
    diagnosis = "oob-when-absent"
    targets = LOAD

    def invalid_slot(self, call: Call, old: Array) -> Array:
        return call.oob.copy()


class OobDefaultNotApplied(Mutant):
    """Load ignores oob_default: invalid slots keep their earlier value."""

    name = "oob-default-not-applied"
    rules = ("oob-fill",)
    diagnosis = "oob-ignored"
    targets = LOAD

    def invalid_slot(self, call: Call, old: Array) -> Array:
        return old


class OffsetIgnored(Mutant):
    """The offset argument is dropped: the tile starts at the base pointer."""

    name = "offset-ignored"
    rules = ("offset",)
    diagnosis = "offset-ignored"

    def tile_offset(self, offset: Array, itemsize: int) -> Array:
        return np.zeros_like(offset, dtype=np.int64)


class OffsetInBytes(Mutant):
    """The offset is taken in bytes, not elements."""

    name = "offset-in-bytes"
    rules = ("offset",)
    diagnosis = "offset-in-bytes"

    def tile_offset(self, offset: Array, itemsize: int) -> Array:
        return offset.astype(np.int64) // itemsize


class ThirtyTwoBitRegisters(Mutant):
    """Registers are 32 bits wide whatever the dtype: 64-bit integers lose their high bits, float64 its
    precision."""

    name = "dtype-through-32-bits"
    rules = ("bit-exact",)

    def register(self, values: Array) -> Array:
        if values.dtype.itemsize <= 4:
            return values
        narrow = np.dtype(np.float32) if values.dtype.kind == "f" else np.dtype(f"{values.dtype.kind}4")
        with np.errstate(invalid="ignore", over="ignore"):  # NaN and huge sources: the cast is the point
            return values.astype(narrow).astype(values.dtype)


class VectorizeIgnoresAlignment(Mutant):
    """vectorize issues wide accesses at any offset, and the hardware drops the address's low bits."""

    name = "vectorize-misaligned-wide"
    rules = ("vectorize-fallback",)

    def wide_access(self, addr: Array, width: int) -> tuple[Array, Array]:
        return np.ones(addr.shape, dtype=bool), addr - addr % width


class VectorizeWidePartialChunk(Mutant):
    """vectorize moves a whole chunk wide when only its first item is valid."""

    name = "vectorize-wide-partial-chunk"
    rules = ("valid-prefix",)
    diagnosis = "past-valid"

    def chunk_valid(self, call: Call, index: Array, width: int) -> Array:
        return self.is_valid(call, index)


class InvalidSlotsZeroed(Mutant):
    """Load zero-fills the payload before reading, so invalid slots without oob_default hold 0."""

    name = "invalid-slots-zeroed"
    rules = ("invalid-keep",)
    targets = LOAD

    def invalid_slot(self, call: Call, old: Array) -> Array:
        return np.where(call.has_oob, call.oob, np.zeros_like(old))


class LastThreadSkipped(Mutant):
    """The thread of the highest rank does not take part (a ``rank < threads - 1`` loop bound)."""

    name = "last-thread-skipped"
    rules = ("arrangement",)
    diagnosis = "skipped-thread"

    def takes_part(self, call: Call) -> Array:
        return call.rank < call.spec.threads - 1


class TransposeWithoutBarrier(Mutant):
    """The transpose family reads its scratch without the barrier: other threads' items are stale."""

    name = "transpose-without-barrier"
    rules = ("arrangement",)

    def sync(self, scratch: Scratch) -> None:
        pass


class WarpOriginIgnored(Mutant):
    """warp_transpose forgets the warp's tile origin: every warp exchanges the first warp's items."""

    name = "warp-origin-ignored"
    # In a partial tile the other warps' invalid slots receive the first warp's items: invalid-keep / oob-fill.
    rules = ("arrangement", "invalid-keep", "oob-fill")

    def warp_origin(self, call: Call) -> Array:
        return np.zeros_like(call.rank)


class TopBitsDropped(Mutant):
    """Integer items lose their two top bits on the way through (a narrowing mask, a signed shift): only
    data that sets those bits shows it."""

    name = "top-bits-dropped"
    rules = ("bit-exact",)
    diagnosis = "high-bits-dropped"

    def register(self, values: Array) -> Array:
        if values.dtype.kind == "f":
            return values
        raw = values.view(np.dtype(f"uint{values.dtype.itemsize * 8}"))
        top = raw.dtype.type(0b11 << (values.dtype.itemsize * 8 - 2))
        return (raw & ~top).view(values.dtype)


class ResultIntoInputs(Mutant):
    """Load zero-fills invalid slots and writes its result into the caller's ``init`` (returning it), Store
    clears its ``items`` after the store: a judge that read the inputs after the launch would see nothing."""

    name = "result-into-inputs"
    rules = ("inputs-unmodified",)

    def invalid_slot(self, call: Call, old: Array) -> Array:
        return np.where(call.has_oob, call.oob, np.zeros_like(old))

    def launch(self, spec: coopcheck.KernelSpec, batch: coopcheck.LoadBatch | coopcheck.StoreBatch) -> Array:
        out = super().launch(spec, batch)
        if isinstance(batch, coopcheck.LoadBatch):
            batch.init[:] = out
            return np.asarray(batch.init)
        batch.items[:] = 0
        return out


class OutputWidened(Mutant):
    """The launch returns its result widened to 64 bits (int64 / float64): same values, another ABI."""

    name = "output-widened"
    rules = ("output-abi",)

    def launch(self, spec: coopcheck.KernelSpec, batch: coopcheck.LoadBatch | coopcheck.StoreBatch) -> Array:
        out = super().launch(spec, batch)
        with np.errstate(invalid="ignore"):
            return out.astype(np.float64 if out.dtype.kind == "f" else np.int64)


class ThreeDimWideIptDropsLast(Mutant):
    """On 3-D blocks with 7 or more items per thread the guard counts one valid item too few: a bug of one
    pair of kernel axes (block x ipt), which only an all-pairs profile is sure to meet."""

    name = "3d-wide-ipt-guard"
    rules = ("valid-prefix",)
    diagnosis = "valid-off-by-one"

    def is_valid(self, call: Call, index: Array) -> Array:
        spec = call.spec
        if len(spec.block) == 3 and spec.items_per_thread >= 7:
            return index < call.valid - 1
        return super().is_valid(call, index)


class WarpShareBoundary(Mutant):
    """valid_items one past a whole number of warp shares (32 * ipt) loses that last item: a boundary that
    sampled valid_items almost never hits."""

    name = "warp-share-boundary"
    rules = ("valid-prefix",)
    diagnosis = "valid-off-by-one"

    def is_valid(self, call: Call, index: Array) -> Array:
        share = WARP_SIZE * call.spec.items_per_thread
        valid = np.where((call.valid > share) & (call.valid % share == 1), call.valid - 1, call.valid)
        return index < valid


class SecondBlockSkipsItsLastThread(Mutant):
    """In the second block of the grid the last thread does not take part: a bug of a block's position in the
    launch, charged to whichever case the seeded block order puts there."""

    name = "second-block-last-thread"
    rules = ("arrangement",)
    diagnosis = "skipped-thread"

    def takes_part(self, call: Call) -> Array:
        return ~((call.block == 1) & (call.rank == call.spec.threads - 1))


class FirstBlocksOffsetForAll(Mutant):
    """Every block starts its tile at the first block's offset (a per-launch parameter read once)."""

    name = "first-blocks-offset"
    rules = ("offset",)
    diagnosis = "other-block-offset"

    def tile_offset(self, offset: Array, itemsize: int) -> Array:
        return np.full_like(offset, offset[0], dtype=np.int64)


#: The deviations every family's model has (:mod:`.deviations`), Load/Store's of them named as they are.
RankYMajor, StaticsUnchecked, FloatCanonicalized, OutputTruncated = common_mutants(Mutant)

MUTANTS: tuple[type[Mutant], ...] = (
    IgnoresValidItems, TransposeMovesInvalidSlots, FullTilePathAtTileMinusOne, GuardInclusive,
    StripedAsBlocked, RankYMajor, StorePastValidPrefix, OobDefaultWhenAbsent, OobDefaultNotApplied,
    OffsetIgnored, OffsetInBytes, ThirtyTwoBitRegisters, VectorizeIgnoresAlignment, VectorizeWidePartialChunk,
    InvalidSlotsZeroed, LastThreadSkipped,
    TransposeWithoutBarrier, WarpOriginIgnored, StaticsUnchecked, FloatCanonicalized,
    TopBitsDropped, ResultIntoInputs, OutputTruncated, OutputWidened, ThreeDimWideIptDropsLast, WarpShareBoundary,
    SecondBlockSkipsItsLastThread, FirstBlocksOffsetForAll,
)
