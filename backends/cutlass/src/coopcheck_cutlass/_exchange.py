"""transpose and warp_transpose: global memory is read or written in the coalesced (striped or
warp-striped) order and the items are exchanged with the blocked payload through shared scratch.

Only valid items pass through the scratch, so an invalid payload slot keeps its own earlier value
(raw CUB moves other slots' values into it). A trailing barrier lets the caller reuse the scratch.
"""

from __future__ import annotations

from typing import Any

import cutlass.cute as cute
from coopcheck.vocabulary import WARP_SIZE

from coopcheck_cutlass._per_thread import Index, move, tile_index
from coopcheck_cutlass.plan import Plan


def coalesced_index(plan: Plan, rank: Any) -> Index:
    """Tile index of the i-th element a thread moves to or from global memory: striped over the
    block for transpose, striped over the thread's warp (a warp-contiguous segment) otherwise."""
    if plan.algorithm == "transpose":
        return lambda i: rank + i * plan.threads
    lane = rank % WARP_SIZE
    return lambda i: (rank - lane) * plan.items_per_thread + i * WARP_SIZE + lane


def sync(plan: Plan) -> None:
    """The barrier the exchange needs: the block for transpose, the thread's warp otherwise."""
    if plan.algorithm == "transpose":
        cute.arch.sync_threads()
    else:
        cute.arch.sync_warp()


@cute.jit
def load(plan: Plan, src: cute.Tensor, items: cute.Tensor, rank: Any, valid_items: Any, offset: Any,
         oob: Any, scratch: cute.Tensor) -> None:
    """Global (coalesced) -> scratch, barrier, scratch -> payload (blocked), barrier."""
    ipt = plan.items_per_thread
    coalesced = coalesced_index(plan, rank)
    move(scratch, coalesced, src, lambda i: offset + coalesced(i), coalesced, ipt, valid_items, None)
    sync(plan)
    mine = tile_index(plan, rank)  # the payload's arrangement: blocked
    move(items, lambda i: i, scratch, mine, mine, ipt, valid_items, oob)
    sync(plan)


@cute.jit
def store(plan: Plan, dst: cute.Tensor, items: cute.Tensor, rank: Any, valid_items: Any, offset: Any,
          scratch: cute.Tensor) -> None:
    """Payload (blocked) -> scratch, barrier, scratch -> global (coalesced), barrier."""
    ipt = plan.items_per_thread
    mine = tile_index(plan, rank)  # the payload's arrangement: blocked
    move(scratch, mine, items, lambda i: i, mine, ipt, valid_items, None)
    sync(plan)
    coalesced = coalesced_index(plan, rank)
    move(dst, lambda i: offset + coalesced(i), scratch, coalesced, coalesced, ipt, valid_items, None)
    sync(plan)
