"""Block Shuffle for CuTe DSL kernel code: CUB's Offset, Rotate, Up and Down, and Up / Down with their block item
(the methods and rules are :mod:`coopcheck.shuffle`'s; the static plan and index arithmetic
:mod:`coopcheck_cutlass.shuffle_plan`'s).

Every static, the block shape included, is compile-time; offset's and rotate's distance is a Python int (checked
while tracing) or a runtime integer, uniform over the block. As CUB's BlockShuffle, each thread stores one item in
a shared scratch of one item a thread and, after a block barrier, takes another thread's; up and down move the
thread's other items one step against the shift's direction, so a call in place reads every item before it
overwrites it. A trailing barrier lets the caller reuse the scratch (CUB leaves that to the caller). Example,
inside a ``@cute.kernel`` launched with block (128, 1, 1)::

    items = cute.make_rmem_tensor(cute.make_layout(4), cutlass.Int32)
    suffix = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Int32)
    ...
    shuffle.block_shuffle(items, items, block=(128,), method="up_suffix", block_item=suffix)
"""

from __future__ import annotations

from typing import Any

import coopcheck
from coopcheck.vocabulary import STATIC_RULES

from coopcheck_cutlass import REQUIRES

coopcheck.require("cutlass", REQUIRES)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402

from coopcheck_cutlass.block import check_payload, dtype_name, method_scratch, rank, same_storage  # noqa: E402
from coopcheck_cutlass.shuffle_plan import ShufflePlan, shuffle_plan  # noqa: E402


def block_shuffle(
    items_in: cute.Tensor,
    items_out: cute.Tensor,
    *,
    block: tuple[int, ...],
    method: str,
    distance: Any = None,
    block_item: cute.Tensor | None = None,
    temp_storage: cute.Tensor | None = None,
) -> None:
    """Shuffle this thread's items ``items_in`` into ``items_out`` (the same tensor: in place) with ``method``.

    Every thread of the block calls it together. offset and rotate (one item a thread) take ``distance``; up and
    down take none. up_suffix and down_prefix write the block item (CUB's block_suffix / block_prefix) into
    ``block_item``, an rmem tensor of one item. An output slot the method leaves alone keeps its value. Raises
    ``coopcheck.InvalidParameter`` while tracing for bad static parameters.
    """
    plan = _plan(items_in, block, method, distance)
    check_payload(plan, "items_out", items_out)
    if plan.with_block_item and (block_item is None or not same_storage(block_item.element_type, plan.dtype)
                                 or cute.size(block_item) != 1):
        raise coopcheck.InvalidParameter("block_item", f"{method} needs block_item, one item of {plan.dtype}")
    _shuffle(plan, items_in, items_out, rank(block), distance, block_item, method_scratch(plan, temp_storage))


def _plan(items: cute.Tensor, block: tuple[int, ...], method: str, distance: Any) -> ShufflePlan:
    """The checked plan; a Python distance is checked as the harness's static one, a runtime one by its type."""
    runtime = isinstance(distance, cutlass.Numeric)
    statics = () if runtime or distance is None else (("static_distance", distance),)
    plan = shuffle_plan(coopcheck.KernelSpec("block.shuffle", dtype_name(items.element_type), block,
                                             cute.size(items), method, statics=statics,
                                             variant=(("output", "inplace"),)))
    if plan.scalar and not (statics or isinstance(distance, cutlass.Integer)):
        rule = f"shuffle_{method}_distance"
        raise coopcheck.InvalidParameter(rule, f"{STATIC_RULES[rule]} (got {distance!r})")
    if not plan.scalar and runtime:
        raise coopcheck.InvalidParameter("shuffle_no_distance", f"{STATIC_RULES['shuffle_no_distance']} "
                                                                f"(got a runtime {type(distance).__name__})")
    return plan


@cute.jit
def _shuffle(plan: ShufflePlan, items_in: cute.Tensor, items_out: cute.Tensor, me: Any, distance: Any,
             block_item: Any, scratch: cute.Tensor) -> None:
    """Store the handed item at this thread's rank, barrier, move the thread's own items, take the source's
    entry where it lies in the block (and the block item), barrier (the caller may then reuse the scratch)."""
    scratch[me] = items_in[plan.handed]
    cute.arch.sync_threads()
    for k in cutlass.range_constexpr(len(plan.moves)):
        items_out[plan.moves[k][0]] = items_in[plan.moves[k][1]]
    source = plan.source(me, distance)
    if cutlass.const_expr(plan.bounded):
        if plan.takes(source):
            items_out[plan.taken] = scratch[source]
    else:
        items_out[plan.taken] = scratch[source]
    if cutlass.const_expr(plan.with_block_item):
        block_item[0] = scratch[plan.block_item_rank]
    cute.arch.sync_threads()
