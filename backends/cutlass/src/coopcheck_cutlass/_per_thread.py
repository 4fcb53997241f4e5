"""Per-thread item moves for direct, striped and vectorize: every thread touches only its own items,
so these use no shared memory and no barrier. The guarded ``move`` is also the transposes' step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cutlass
import cutlass.cute as cute

from coopcheck_cutlass.plan import DTYPE_BYTES, Plan

Index = Callable[[int], Any]


@cute.jit
def move(
    dst: cute.Tensor,
    dst_at: Index,
    src: cute.Tensor,
    src_at: Index,
    tile_of: Index,
    count: cutlass.Constexpr[int],
    valid_items: Any,
    fill: Any,
) -> None:
    """``dst[dst_at(i)] = src[src_at(i)]`` for each item i whose tile index ``tile_of(i)`` is below
    ``valid_items`` (every item when it is None); the others get ``fill``, or keep their value."""
    for i in cutlass.range_constexpr(count):
        if cutlass.const_expr(valid_items is None):
            dst[dst_at(i)] = src[src_at(i)]
        else:
            if tile_of(i) < valid_items:
                dst[dst_at(i)] = src[src_at(i)]
            else:
                if cutlass.const_expr(fill is not None):
                    dst[dst_at(i)] = fill


def tile_index(plan: Plan, rank: Any) -> Index:
    """Tile index of item i of ``rank``: striped (r + i*threads) or blocked (r*ipt + i)."""
    if plan.striped:
        return lambda i: rank + i * plan.threads
    return lambda i: rank * plan.items_per_thread + i


@cute.jit
def load(plan: Plan, src: cute.Tensor, items: cute.Tensor, rank: Any, valid_items: Any, offset: Any,
         oob: Any) -> None:
    """Fill ``items`` from ``src[offset:]`` with the direct, striped or vectorize arrangement."""
    if cutlass.const_expr(plan.algorithm == "vectorize" and plan.vector_items > 1):
        first = offset + rank * plan.items_per_thread
        if _wide_ok(plan, src, first, rank, valid_items):
            cute.autovec_copy(_wide_chunk(plan, src, first), items)
        else:
            _scalar_load(plan, src, items, rank, valid_items, offset, oob)
    else:
        _scalar_load(plan, src, items, rank, valid_items, offset, oob)


@cute.jit
def store(plan: Plan, dst: cute.Tensor, items: cute.Tensor, rank: Any, valid_items: Any,
          offset: Any) -> None:
    """Write the valid ``items`` to ``dst[offset:]`` with the direct, striped or vectorize arrangement."""
    if cutlass.const_expr(plan.algorithm == "vectorize" and plan.vector_items > 1):
        first = offset + rank * plan.items_per_thread
        if _wide_ok(plan, dst, first, rank, valid_items):
            cute.autovec_copy(items, _wide_chunk(plan, dst, first))
        else:
            _scalar_store(plan, dst, items, rank, valid_items, offset)
    else:
        _scalar_store(plan, dst, items, rank, valid_items, offset)


def _scalar_load(plan: Plan, src: cute.Tensor, items: cute.Tensor, rank: Any, valid_items: Any, offset: Any,
                 oob: Any) -> None:
    tile_of = tile_index(plan, rank)
    move(items, lambda i: i, src, lambda i: offset + tile_of(i), tile_of, plan.items_per_thread, valid_items, oob)


def _scalar_store(plan: Plan, dst: cute.Tensor, items: cute.Tensor, rank: Any, valid_items: Any,
                  offset: Any) -> None:
    tile_of = tile_index(plan, rank)
    move(dst, lambda i: offset + tile_of(i), items, lambda i: i, tile_of, plan.items_per_thread, valid_items, None)


def _vector_bytes(plan: Plan) -> int:
    return plan.vector_items * DTYPE_BYTES[plan.dtype]


def _wide_ok(plan: Plan, mem: cute.Tensor, first: Any, rank: Any, valid_items: Any) -> Any:
    """Whether this thread's chunk starts on a wide-access boundary and holds only valid items.

    Every chunk is ipt elements long and ipt is a multiple of the vector, so all threads of a
    block agree on alignment; a misaligned ``offset`` sends the whole block to the scalar path.
    """
    aligned = (mem.iterator + first).toint() % _vector_bytes(plan) == 0
    if valid_items is None:
        return aligned
    return aligned & ((rank + 1) * plan.items_per_thread <= valid_items)


def _wide_chunk(plan: Plan, mem: cute.Tensor, first: Any) -> cute.Tensor:
    """This thread's ipt elements as a tensor whose pointer is known to be vector-aligned."""
    address = (mem.iterator + first).toint()
    ptr = cute.make_ptr(mem.element_type, address, cute.AddressSpace.gmem, assumed_align=_vector_bytes(plan))
    return cute.make_tensor(ptr, cute.make_layout(plan.items_per_thread))
