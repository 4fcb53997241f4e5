"""The kernel ABI of the Load/Store family, written down once: what a backend's kernel builder receives.

Load kernel, one block per case instance (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``);
``rank = x + bx * (y + by * z)``, ``tile = threads * ipt``:

* thread ``rank`` of block ``b`` starts with payload ``init[b*tile + rank*ipt + i]``;
* it calls block Load on ``src[b*region + offset[b]:]`` with ``valid[b]`` valid items, passing
  ``oob_default=oob[b]`` when ``has_oob[b]`` is nonzero and no default otherwise;
* it writes every payload slot to ``dst[b*tile + rank*ipt + i]``.

Store kernel: thread ``rank`` of block ``b`` holds ``items[b*tile + rank*ipt + i]`` and calls
block Store on ``dst[b*region + offset[b]:]`` with ``valid[b]`` valid items; the harness fills
``dst`` with per-slot sentinels first, so every stray write shows.

Statics (set only by rejection cases, read with ``spec.static(name)``): ``static_valid_items``,
``static_offset``, ``store_oob_default``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coopcheck.adapter import KernelSpec
from coopcheck.vocabulary import check_static

#: The operations of this family (the contracts' ``operation``), for a backend's declaration.
OPERATIONS = frozenset({"block.load", "block.store"})


@dataclass
class LoadBatch:
    """Arguments of one batched Load launch (NumPy arrays on the host; see the module ABI)."""

    src: Any
    init: Any
    valid: Any  # int32[n_blocks]
    offset: Any  # int64[n_blocks]
    has_oob: Any  # int32[n_blocks]
    oob: Any  # dtype[n_blocks]
    region: int

    @property
    def n_blocks(self) -> int:
        return len(self.valid)


@dataclass
class StoreBatch:
    """Arguments of one batched Store launch; ``dst`` arrives sentinel-filled."""

    items: Any
    dst: Any
    valid: Any
    offset: Any
    region: int

    @property
    def n_blocks(self) -> int:
        return len(self.valid)


def check_spec(spec: KernelSpec) -> None:
    """:func:`coopcheck.check_static` on a Load/Store spec, its statics included."""
    check_static(spec.operation, block=spec.block, items_per_thread=spec.items_per_thread,
                 algorithm=spec.algorithm, dtype=spec.dtype, oob_default=spec.static("store_oob_default", False),
                 valid_items=spec.static("static_valid_items"), offset=spec.static("static_offset"))
