"""Warp Reduce for CuTe DSL kernel code: CUB's WarpReduce (Reduce with valid_items, HeadSegmentedReduce,
TailSegmentedReduce) over logical warps of 1 to 32 lanes and the operators of :mod:`coopcheck.reduce` (the static plan
and the shuffles' sources and guards: :mod:`coopcheck_cutlass.warp_plan`).

dtype, block, width, operator and mode are compile-time; valid_items and the flags are run-time values. Each lane
finds its segment's last lane (valid_items, or the next head or tail flag in its hardware warp's ballot), then
reduces down as CUB's WarpReduceShfl: at distance s it shuffles lane l + s's partial and applies op(its own, that
one) (the plan's operand order) where lane l + s is within its segment, so a segment's first lane ends with the fold
of its items in lane order and no operator meets a lane past its end (NVIDIA/cub#74). Shuffles and ballots
synchronize the hardware warp only: no shared memory, no block barrier. Example, inside a ``@cute.kernel`` launched
with block (128, 1, 1)::

    acc = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Int32)
    acc[0] = item
    warp_reduce.warp_reduce(acc, block=(128,), width=8, op="sum", mode="head", flag=head)  # each segment's first lane
"""

from __future__ import annotations

from typing import Any

import coopcheck

from coopcheck_cutlass import REQUIRES

coopcheck.require("cutlass", REQUIRES)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402

from coopcheck_cutlass._warp import DEVICE, geometry, shuffle  # noqa: E402
from coopcheck_cutlass.block import dtype_name  # noqa: E402
from coopcheck_cutlass.reduce import combine  # noqa: E402
from coopcheck_cutlass.warp_plan import WarpReducePlan, warp_reduce_plan  # noqa: E402


def warp_reduce(acc: cute.Tensor, *, block: tuple[int, ...], width: int, op: str, mode: str, flag: Any = None,
                valid_items: Any = None, sentinel: Any = None, seen: cute.Tensor | None = None) -> None:
    """Reduce ``acc[0]`` (an rmem tensor of one item, this thread's) over its segment into ``acc[0]``, defined in the
    segment's first lane (mode ``reduce``: lane 0 of a logical warp with a valid lane).

    Every thread of the block calls it together. Mode ``reduce`` reads ``valid_items`` (the logical warp's valid
    lanes; all when None), modes ``head`` and ``tail`` the thread's ``flag``. The operator first also takes the
    block's ``sentinel`` and sets ``seen`` (an rmem tensor of one item) to 1 where an operand equals it. Raises
    ``coopcheck.InvalidParameter`` while tracing for bad static parameters.
    """
    plan = warp_reduce_plan(coopcheck.KernelSpec("warp.reduce", dtype_name(acc.element_type), block, 1, "any",
                                                 variant=(("width", str(width)), ("op", op), ("mode", mode))))
    if plan.mode != "reduce" and flag is None:
        raise coopcheck.InvalidParameter("warp_reduce_mode", f"mode {plan.mode} needs the thread's flag")
    valid = width if valid_items is None else valid_items
    _reduce(plan, acc, flag, valid, seen, sentinel)


@cute.jit
def _reduce(plan: WarpReducePlan, acc: cute.Tensor, flag: Any, valid: Any, seen: Any, sentinel: Any) -> None:
    me, mask = geometry(plan)
    end = cutlass.Int32(0)
    if cutlass.const_expr(plan.mode == "reduce"):
        end = plan.valid_end(me, valid, DEVICE)
    else:
        flags = cutlass.Uint32(cute.arch.vote_ballot_sync(flag != 0, mask))
        end = cutlass.Int32(plan.flagged_end(me, flags, DEVICE))
    for k in cutlass.range_constexpr(len(plan.offsets)):
        offset = plan.offsets[k]
        read = shuffle(plan, acc[0], plan.source(me, offset, DEVICE), mask)
        if plan.takes(me, end, offset):
            acc[0], later = plan.operands(acc[0], read)
            combine(plan, acc, later, seen, sentinel)
