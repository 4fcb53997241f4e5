"""Block Reduce for CuTe DSL kernel code: CUB's raking, raking_commutative_only and warp_reductions over the
operators sum, min, max, matmul and first (the algorithms, operators and rules are :mod:`coopcheck.reduce`'s; the
static plan and schedule :mod:`coopcheck_cutlass.reduce_plan`'s).

Every static, the block shape included, is compile-time; ``valid_items`` is a Python int or a runtime integer,
uniform over the block. A thread reduces its valid items in order, then runs the plan's schedule: guarded steps
through a shared scratch of one item a thread across block barriers, so that no operator ever sees an invalid item
(NVIDIA/cub#74). Float min and max are CUDA's fminf / fmaxf (a NaN operand ignored) but select an operand bit for
bit, as every selecting operator here; a trailing barrier lets the caller reuse the scratch. Example, inside a
``@cute.kernel`` launched with block (128, 1, 1)::

    items = cute.make_rmem_tensor(cute.make_layout(4), cutlass.Int32)
    ...
    total = reduce.block_reduce(items, block=(128,), algorithm="raking", op="sum", valid_items=n)  # in thread 0
"""

from __future__ import annotations

from typing import Any

import coopcheck

from coopcheck_cutlass import REQUIRES

coopcheck.require("cutlass", REQUIRES)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402

from coopcheck_cutlass.block import NUMERIC, dtype_name, method_scratch, rank, same_storage  # noqa: E402
from coopcheck_cutlass.plan import DTYPE_BYTES  # noqa: E402
from coopcheck_cutlass.reduce_plan import FOLD, LOAD, STORE, SYNC, ReducePlan, Step, reduce_plan  # noqa: E402
from coopcheck_cutlass.scan_plan import ScanPlan  # noqa: E402
from coopcheck_cutlass.warp_plan import WarpPlan  # noqa: E402

#: The plans whose operator :func:`combine` applies (Reduce's, Scan's and the warp families': an ``op`` and a
#: ``dtype``).
OperatorPlan = ReducePlan | ScanPlan | WarpPlan


def block_reduce(
    items: cute.Tensor,
    *,
    block: tuple[int, ...],
    algorithm: str,
    op: str,
    valid_items: Any = None,
    sentinel: Any = None,
    seen: cute.Tensor | None = None,
    temp_storage: cute.Tensor | None = None,
) -> Any:
    """Reduce the valid items of the block's tile (this thread's ``items`` at tile index rank * ipt + i) with
    ``op``; the value returned is the result in thread 0 for ``valid_items`` >= 1 (all items when None).

    Every thread of the block calls it together. The operator first also takes the block's ``sentinel`` and sets
    ``seen`` (an rmem tensor of one item) to 1 where an operand equals it. Raises ``coopcheck.InvalidParameter``
    while tracing for bad static parameters.
    """
    plan = reduce_plan(coopcheck.KernelSpec("block.reduce", dtype_name(items.element_type), block,
                                            cute.size(items), algorithm, variant=(("op", op),)))
    if plan.op == "first" and (sentinel is None or seen is None or cute.size(seen) != 1
                               or not same_storage(seen.element_type, plan.dtype)):
        raise coopcheck.InvalidParameter("reduce_operator", f"first needs a sentinel and seen, one {plan.dtype}")
    valid = plan.tile if valid_items is None else valid_items
    acc = cute.make_rmem_tensor(cute.make_layout(1), NUMERIC[plan.dtype])
    _reduce(plan, items, acc, seen, sentinel, rank(block), valid, method_scratch(plan, temp_storage))
    return acc[0]


@cute.jit
def _reduce(plan: ReducePlan, items: cute.Tensor, acc: cute.Tensor, seen: Any, sentinel: Any, me: Any, valid: Any,
            scratch: cute.Tensor) -> None:
    """This thread's valid items in order, then the schedule (raking_commutative_only: its fallback for a partial
    tile, a branch uniform over the block)."""
    acc[0] = items[0]
    for i in cutlass.range_constexpr(1, plan.items_per_thread):
        if plan.item_valid(me, i, valid):
            combine(plan, acc, items[i], seen, sentinel)
    if cutlass.const_expr(plan.commutative_path):
        if plan.full(valid):
            _run(plan, plan.schedule, acc, seen, sentinel, me, valid, scratch)
        else:
            _run(plan, plan.fallback, acc, seen, sentinel, me, valid, scratch)
    else:
        _run(plan, plan.schedule, acc, seen, sentinel, me, valid, scratch)


@cute.jit
def _run(plan: ReducePlan, steps: tuple[Step, ...], acc: cute.Tensor, seen: Any, sentinel: Any, me: Any,
         valid: Any, scratch: cute.Tensor) -> None:
    """Each step of ``steps`` in the threads its guard admits; a barrier where the schedule has one."""
    for k in cutlass.range_constexpr(len(steps)):
        step = steps[k]
        if cutlass.const_expr(step.kind == SYNC):
            cute.arch.sync_threads()
        elif step.when(me, valid):
            if cutlass.const_expr(step.kind == STORE):
                scratch[step.slot(me)] = acc[0]
            elif cutlass.const_expr(step.kind == LOAD):
                acc[0] = scratch[step.slot(me)]
            elif cutlass.const_expr(step.kind == FOLD):
                combine(plan, acc, scratch[step.slot(me)], seen, sentinel)
                if cutlass.const_expr(step.keep is not None):
                    scratch[step.keep(me)] = acc[0]


@cute.jit
def combine(plan: OperatorPlan, acc: cute.Tensor, later: Any, seen: Any = None, sentinel: Any = None,
            at: cutlass.Constexpr[int] = 0) -> None:
    """``acc[at] = op(acc[at], later)``: ``acc[at]`` holds the earlier items of the tile, ``later`` the later ones
    (Scan's registers share it; only Reduce's first takes ``seen`` and ``sentinel``)."""
    earlier = acc[at]
    if cutlass.const_expr(plan.op == "sum"):
        acc[at] = NUMERIC[plan.dtype](earlier + later)
    elif cutlass.const_expr(plan.op == "matmul"):
        acc[at] = _matmul(plan, earlier, later)
    elif cutlass.const_expr(plan.op == "first"):
        if earlier == sentinel:
            seen[0] = NUMERIC[plan.dtype](1)
        if later == sentinel:
            seen[0] = NUMERIC[plan.dtype](1)
        if earlier == 0:
            acc[at] = later
    else:
        _select_extreme(plan, acc, at, earlier, later)


@cute.jit
def _select_extreme(plan: OperatorPlan, acc: cute.Tensor, at: cutlass.Constexpr[int], earlier: Any,
                    later: Any) -> None:
    """min / max selecting ``later`` over ``acc[at]`` where it is more extreme; floats as fminf / fmaxf (a NaN
    operand ignored unless both are), the operand kept bit for bit (no canonical NaN)."""
    if cutlass.const_expr(plan.dtype.startswith("float")):
        if earlier != earlier:  # NaN: the other operand, a NaN too only if both are
            acc[at] = later
        elif later == later:
            _select_ordered(plan, acc, at, earlier, later)
    else:
        _select_ordered(plan, acc, at, earlier, later)


@cute.jit
def _select_ordered(plan: OperatorPlan, acc: cute.Tensor, at: cutlass.Constexpr[int], earlier: Any,
                    later: Any) -> None:
    if cutlass.const_expr(plan.op == "min"):
        if later < earlier:
            acc[at] = later
    elif earlier < later:
        acc[at] = later


def _matmul(plan: OperatorPlan, a: Any, b: Any) -> Any:
    """``a @ b`` of the items' 2x2 matrices of k = bits / 4-bit entries (entry 0 the lowest), modulo 2**k: each
    entry in 32 bits, whose wrapping sums keep its low k <= 16 bits exact."""
    width = DTYPE_BYTES[plan.dtype] * 8
    k, wide = width // 4, cutlass.Uint64 if width == 64 else cutlass.Uint32
    mask = (1 << k) - 1
    x, y = wide(a), wide(b)
    e = [cutlass.Uint32((x >> (j * k)) & mask) for j in range(4)]
    f = [cutlass.Uint32((y >> (j * k)) & mask) for j in range(4)]
    c = (e[0] * f[0] + e[1] * f[2], e[0] * f[1] + e[1] * f[3], e[2] * f[0] + e[3] * f[2], e[2] * f[1] + e[3] * f[3])
    packed = wide(c[0] & mask)
    for j in range(1, 4):
        packed = packed | (wide(c[j] & mask) << (j * k))
    return NUMERIC[plan.dtype](packed)
