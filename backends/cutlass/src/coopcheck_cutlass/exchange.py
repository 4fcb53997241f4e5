"""Block Exchange for CuTe DSL kernel code: CUB's eight methods, with and without warp time-slicing (the
arrangements and rules are :mod:`coopcheck.exchange`'s; the static plan and index arithmetic
:mod:`coopcheck_cutlass.exchange_plan`'s).

Every static, the block shape included, is compile-time. A method is one store step (each item into shared
scratch at its tile index, or at its rank) and one load step (each output item from its tile index) across a
barrier: a block barrier for the block methods, a warp barrier for the warp methods, whose warps each exchange
their own share of the tile. Time-sliced, the tile passes through one warp's share of scratch a slice at a time
(block barriers between them), and an in-place call gathers into a temporary until the last slice, so every
input item is read before its slot is overwritten. Stores are bounded by the slice's window, so the guarded and
flagged scatters stay inside the scratch time-sliced too (CUB's do not: NVIDIA/cccl#870). A trailing barrier
lets the caller reuse the scratch. Example, inside a ``@cute.kernel`` launched with block (128, 1, 1)::

    items = cute.make_rmem_tensor(cute.make_layout(4), cutlass.Int32)
    ranks = cute.make_rmem_tensor(cute.make_layout(4), cutlass.Int32)
    ...
    exchange.block_exchange(items, items, block=(128,), method="scatter_to_striped", ranks=ranks)
"""

from __future__ import annotations

from typing import Any

import coopcheck

from coopcheck_cutlass import REQUIRES

coopcheck.require("cutlass", REQUIRES)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402

from coopcheck_cutlass.block import NUMERIC, check_payload, dtype_name, method_scratch, rank  # noqa: E402
from coopcheck_cutlass.exchange_plan import ExchangePlan, exchange_plan  # noqa: E402


def block_exchange(
    items_in: cute.Tensor,
    items_out: cute.Tensor,
    *,
    block: tuple[int, ...],
    method: str,
    ranks: cute.Tensor | None = None,
    flags: cute.Tensor | None = None,
    warp_time_slicing: bool = False,
    temp_storage: cute.Tensor | None = None,
) -> None:
    """Exchange this thread's items ``items_in`` into ``items_out`` (the same tensor: in place) with ``method``.

    Every thread of the block calls it together. The scatter methods read the Int32 rmem tensors ``ranks`` (and
    ``flags``, the flagged one: nonzero scatters the item). Raises ``coopcheck.InvalidParameter`` while tracing
    for bad static parameters.
    """
    plan = _plan(items_in, block, method, warp_time_slicing)
    for name, needed, given in (("ranks", plan.scatter, ranks), ("flags", plan.flagged, flags)):
        if needed and (given is None or cute.size(given) != plan.items_per_thread):
            raise coopcheck.InvalidParameter("exchange_ranks", f"{method} needs {name}, one per item")
    check_payload(plan, "items_out", items_out)
    scratch = method_scratch(plan, temp_storage)
    inplace = items_out is items_in
    # In place, a sliced exchange gathers into a temporary: a later slice still reads the input items.
    target = (cute.make_rmem_tensor(cute.make_layout(plan.items_per_thread), NUMERIC[plan.dtype])
              if inplace and plan.warp_time_slicing else items_out)
    _exchange(plan, items_in, target, ranks, flags, rank(block), scratch)
    if target is not items_out:
        for i in range(plan.items_per_thread):
            items_out[i] = target[i]


def _plan(items: cute.Tensor, block: tuple[int, ...], method: str, warp_time_slicing: bool) -> ExchangePlan:
    slicing = "on" if warp_time_slicing else "off"
    return exchange_plan(coopcheck.KernelSpec("block.exchange", dtype_name(items.element_type), block,
                                              cute.size(items), method,
                                              variant=(("slicing", slicing), ("output", "inplace"))))


def _sync(plan: ExchangePlan) -> None:
    """The barrier between a slice's stores and its loads, and before its scratch is reused."""
    if plan.block_barrier:
        cute.arch.sync_threads()
    else:
        cute.arch.sync_warp(plan.warp_mask)


@cute.jit
def _exchange(plan: ExchangePlan, items_in: cute.Tensor, target: cute.Tensor, ranks: Any, flags: Any, me: Any,
              scratch: cute.Tensor) -> None:
    """The whole tile at once, or time-sliced one window after another in a run-time loop: unrolled (32 slices at
    1024 threads), ptxas kept the items of one-byte kernels in local memory."""
    if cutlass.const_expr(plan.warp_time_slicing):
        for s in cutlass.range(plan.slices, unroll=1):
            _slice(plan, items_in, target, ranks, flags, me, scratch, s * plan.window)
    else:
        _slice(plan, items_in, target, ranks, flags, me, scratch, 0)


@cute.jit
def _slice(plan: ExchangePlan, items_in: cute.Tensor, target: cute.Tensor, ranks: Any, flags: Any, me: Any,
           scratch: cute.Tensor, lo: Any) -> None:
    """One window from tile index ``lo``: its stores, a barrier, its loads, a barrier (the last one lets the caller
    reuse the scratch)."""
    _store(plan, scratch, items_in, ranks, flags, me, lo)
    _sync(plan)
    _load(plan, scratch, target, me, lo)
    _sync(plan)


@cute.jit
def _store(plan: ExchangePlan, scratch: cute.Tensor, items: cute.Tensor, ranks: Any, flags: Any, me: Any,
           lo: Any) -> None:
    """Every item whose tile index (its rank, for a scatter) lies in the slice's window (from ``lo``, a run-time
    value) into ``scratch[index - lo]``; a negative index is never inside it: the items the guarded and flagged
    scatters skip."""
    store_at = plan.store_position()
    for i in cutlass.range_constexpr(plan.items_per_thread):
        index = (ranks[i] if store_at is None else store_at(me, i)) - lo
        if cutlass.const_expr(not plan.bounded):
            scratch[index] = items[i]
        else:
            if plan.stores(index, flags[i] if plan.flagged else None):
                scratch[index] = items[i]


@cute.jit
def _load(plan: ExchangePlan, scratch: cute.Tensor, target: cute.Tensor, me: Any, lo: Any) -> None:
    """Every output item whose tile index lies in the slice's window from ``scratch[index - lo]``."""
    load_from = plan.load_position()
    for i in cutlass.range_constexpr(plan.items_per_thread):
        index = load_from(me, i) - lo
        if cutlass.const_expr(not plan.warp_time_slicing):
            target[i] = scratch[index]
        else:
            if plan.loads(index):
                target[i] = scratch[index]
