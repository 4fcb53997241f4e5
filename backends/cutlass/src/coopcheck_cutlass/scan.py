"""Block Scan for CuTe DSL kernel code: CUB's raking, raking_memoize and warp_scans, inclusive or exclusive, over the
operators sum, min, max and matmul, with no seed, an initial value or a block prefix callback (the algorithms,
operators and rules are :mod:`coopcheck.scan`'s; the static plan and schedule :mod:`coopcheck_cutlass.scan_plan`'s).

Every static, the block shape included, is compile-time. A thread folds its items in order into its partial, runs
the plan's schedule (the partials scanned through a shared scratch across block barriers, every thread left with its
exclusive prefix and the block aggregate), then scans its items from that prefix; a trailing barrier lets the caller
reuse the scratch. The items may be an rmem tensor or any other (a global-memory view keeps them out of registers),
the output the items themselves. Example, inside a ``@cute.kernel`` launched with block (128, 1, 1)::

    items = cute.make_rmem_tensor(cute.make_layout(4), cutlass.Int32)
    ...
    total = scan.block_scan(items, items, block=(128,), algorithm="raking", op="sum", mode="exclusive")
    scan.block_scan(items, items, block=(128,), algorithm="warp_scans", op="max", mode="inclusive",
                    prefix_op=running)  # running(aggregate) -> the tile's prefix, called by the first warp
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import coopcheck

from coopcheck_cutlass import REQUIRES

coopcheck.require("cutlass", REQUIRES)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402

from coopcheck_cutlass.block import NUMERIC, check_payload, dtype_name, method_scratch, rank  # noqa: E402
from coopcheck_cutlass.reduce import combine  # noqa: E402
from coopcheck_cutlass.scan_plan import (  # noqa: E402
    CALL,
    COPY,
    GET,
    JOIN,
    PUT,
    SYNC,
    A,
    S,
    ScanPlan,
    Step,
    X,
    scan_plan,
)


def block_scan(
    items: cute.Tensor,
    output: cute.Tensor,
    *,
    block: tuple[int, ...],
    algorithm: str,
    op: str,
    mode: str,
    initial: Any = None,
    prefix_op: Callable[[Any], Any] | None = None,
    temp_storage: cute.Tensor | None = None,
    dtype: str | None = None,
) -> Any:
    """Scan the block's tile (this thread's ``items`` at tile index rank * ipt + i) into ``output``; return the
    block aggregate (the operator over the tile's items, no seed among them), in every thread.

    Every thread of the block calls it together. The seed is ``initial`` (a value of the dtype, uniform over the
    block) or what ``prefix_op`` returns in thread 0: CUB's block prefix callback, called with the block aggregate
    by the threads CUB calls it in (raking's raking threads, warp_scans' first warp). Without either, an exclusive
    scan's first output is 0. ``dtype`` is the items' coop dtype, by default their tensor's element type: name it
    for a global-memory view of unsigned items, whose element type the DSL makes signless. Raises
    ``coopcheck.InvalidParameter`` while tracing for bad static parameters.
    """
    if initial is not None and prefix_op is not None:
        raise coopcheck.InvalidParameter("scan_seed", "a scan takes an initial value or a block prefix callback, "
                                                      "not both")
    seed = "prefix" if prefix_op is not None else "none" if initial is None else "initial"
    plan = scan_plan(coopcheck.KernelSpec("block.scan", dtype or dtype_name(items.element_type), block,
                                          cute.size(items), algorithm,
                                          variant=(("op", op), ("mode", mode), ("seed", seed))))
    check_payload(plan, "items", items)
    check_payload(plan, "output", output)
    regs = cute.make_rmem_tensor(cute.make_layout(plan.registers), NUMERIC[plan.dtype])
    if initial is not None:
        regs[S] = initial
    _scan(plan, plan.schedule, items, output, regs, rank(block), method_scratch(plan, temp_storage), prefix_op)
    return regs[A]


@cute.jit
def _scan(plan: ScanPlan, steps: tuple[Step, ...], items: cute.Tensor, output: cute.Tensor, regs: cute.Tensor,
          me: Any, scratch: cute.Tensor, prefix_op: Any) -> None:
    """The thread's partial, the schedule, then its items scanned from the exclusive prefix in :data:`X`."""
    numeric = NUMERIC[plan.dtype]
    regs[X] = numeric(items[0])  # a global uint tensor's element reads back signless: the dtype again
    for i in cutlass.range_constexpr(1, plan.items_per_thread):
        combine(plan, regs, numeric(items[i]), None, None, X)
    for step in steps:  # a Python loop over the plan's steps: unrolled while tracing
        if cutlass.const_expr(step.kind == SYNC):
            cute.arch.sync_threads()
        elif step.when(me):  # a Python True where every thread takes the step
            _act(plan, step, regs, me, scratch, prefix_op)
    for i in cutlass.range_constexpr(plan.items_per_thread):
        item = numeric(items[i])  # read before the write: the output may be the items
        if cutlass.const_expr(i == 0 and not plan.seeded):
            if me == 0:  # no prefix: the scan starts at the item (an exclusive one writes 0 first)
                if cutlass.const_expr(plan.inclusive):
                    output[0] = item
                else:
                    output[0] = numeric(0)
                regs[X] = item
            else:
                _scan_item(plan, output, regs, item, i)
        else:
            _scan_item(plan, output, regs, item, i)


@cute.jit
def _act(plan: ScanPlan, step: Step, regs: cute.Tensor, me: Any, scratch: cute.Tensor, prefix_op: Any) -> None:
    """One step in a thread its guard admits."""
    if cutlass.const_expr(step.kind == PUT):
        scratch[step.slot(me)] = regs[step.src]
    elif cutlass.const_expr(step.kind == GET):
        regs[step.to] = scratch[step.slot(me)]
    elif cutlass.const_expr(step.kind == JOIN):
        later = regs[step.right]
        if cutlass.const_expr(step.to != step.left):
            regs[step.to] = regs[step.left]
        combine(plan, regs, later, None, None, step.to)
    elif cutlass.const_expr(step.kind == COPY):
        regs[step.to] = regs[step.src]
    elif cutlass.const_expr(step.kind == CALL):
        regs[S] = prefix_op(regs[A])


def _scan_item(plan: ScanPlan, output: cute.Tensor, regs: cute.Tensor, item: Any, i: int) -> None:
    """Item ``i`` of the thread from the running prefix in :data:`X`: inclusive, the prefix with it; exclusive, the
    prefix before it."""
    if plan.inclusive:
        combine(plan, regs, item, None, None, X)
        output[i] = regs[X]
    else:
        output[i] = regs[X]
        combine(plan, regs, item, None, None, X)
