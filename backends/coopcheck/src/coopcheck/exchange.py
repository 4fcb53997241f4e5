"""The kernel ABI of the Block Exchange family, written down once: what a backend's kernel builder receives.

Exchange kernel, one block per case instance (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``);
``rank = x + bx * (y + by * z)``, ``tile = threads * ipt``, and slot ``(r, i)`` of a block is ``r*ipt + i``:

* thread ``r`` of block ``b`` starts with the items ``items[b*tile + r*ipt + i]``, and for the scatter methods
  their ranks ``ranks[b*tile + r*ipt + i]`` (and for the flagged one their flags, nonzero: scatter it);
* it calls ``spec.algorithm`` of a block exchange specialized on (dtype, block, ipt, warp time-slicing when
  ``spec.static("slicing") == "on"``), on its items in place (``spec.static("output") == "inplace"``) or from
  them into a second array of its own (``"separate"``);
* it writes the exchanged items to ``dst[b*out + r*ipt + i]`` and, with a separate output, the input items as
  they are after the call to ``dst[b*out + tile + r*ipt + i]``: ``out`` is :func:`out_length`.

The arrangements (the tile index that slot ``(r, i)`` holds): blocked ``r*ipt + i``; striped ``r + i*threads``;
warp-striped ``w*32*ipt + i*W + l`` for lane ``l = r % 32`` of warp ``w = r // 32``, ``W = min(threads, 32)``.
striped_to_blocked takes striped items to blocked ones, blocked_to_striped the reverse, and the warp methods
likewise with warp-striped. A scatter method puts the item of slot ``s`` at tile index ``ranks[s]`` of the
output arrangement (blocked for scatter_to_blocked, striped for the others): the ranks of a tile are a
permutation, except that scatter_to_striped_guarded skips every item whose rank is negative and
scatter_to_striped_flagged every item whose flag is 0; what a tile index no item went to holds is unspecified.
Time-slicing changes nothing in the result, only the scratch: one warp's share of the tile at a time.

Worked example (striped_to_blocked, 2 threads, ipt=2): rank 0 holds tile indices [0, 2], rank 1 [1, 3]; after
the call rank 0 holds [0, 1] and rank 1 [2, 3].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coopcheck.adapter import KernelSpec
from coopcheck.vocabulary import (
    EXCHANGE_METHODS,
    STATIC_RULES,
    WARP_SIZE,
    InvalidParameter,
    block_threads,
    check_block,
    check_choice,
    check_dtype,
    check_items_per_thread,
    check_operation,
)

#: The operations of this family (the contracts' ``operation``), for a backend's declaration.
OPERATIONS = frozenset({"block.exchange"})
METHODS = EXCHANGE_METHODS
#: The methods that exchange through ranks; of those, the two that skip some items.
SCATTER = ("scatter_to_blocked", "scatter_to_striped", "scatter_to_striped_guarded", "scatter_to_striped_flagged")
PARTIAL = ("scatter_to_striped_guarded", "scatter_to_striped_flagged")
#: The methods whose one side is warp-striped: each warp exchanges its own share of the tile.
WARP_METHODS = ("warp_striped_to_blocked", "blocked_to_warp_striped")
#: The values of the family's own kernel axes (``spec.static(name)``).
SLICING = ("off", "on")
OUTPUTS = ("inplace", "separate")


@dataclass
class ExchangeBatch:
    """Arguments of one batched Exchange launch (NumPy arrays on the host; see the module ABI)."""

    items: Any  # dtype[n_blocks * tile]
    ranks: Any  # int32[n_blocks * tile]
    flags: Any  # int32[n_blocks * tile]
    tile: int

    @property
    def n_blocks(self) -> int:
        return len(self.items) // self.tile


def warp_lanes(threads: int) -> int:
    """Lanes of a warp as the warp-striped arrangement counts them: 32, or the whole of a smaller block."""
    return min(threads, WARP_SIZE)


def out_length(spec: KernelSpec) -> int:
    """Elements of ``dst`` per block: the exchanged items, then with a separate output the input items."""
    return spec.tile * (2 if spec.static("output") == "separate" else 1)


def check_spec(spec: KernelSpec) -> None:
    """Raise :class:`coopcheck.InvalidParameter` for the first static rule an Exchange spec breaks.

    >>> try:
    ...     check_spec(KernelSpec("block.exchange", "int32", (100,), 2, "warp_striped_to_blocked",
    ...                           variant=(("slicing", "on"), ("output", "inplace"))))
    ... except InvalidParameter as exc:
    ...     print(exc.rule)
    exchange_warp_multiple
    """
    check_operation(spec.operation, OPERATIONS)
    check_dtype(spec.dtype)
    check_choice("exchange_method", spec.algorithm, METHODS)
    check_choice("exchange_slicing", spec.static("slicing"), SLICING)
    check_choice("exchange_output", spec.static("output"), OUTPUTS)
    check_items_per_thread(spec.items_per_thread)
    check_block(spec.block)
    threads = block_threads(spec.block)
    if spec.algorithm in WARP_METHODS and threads > WARP_SIZE and threads % WARP_SIZE:
        raise InvalidParameter("exchange_warp_multiple", f"{STATIC_RULES['exchange_warp_multiple']} "
                                                         f"(got {threads} threads)")
