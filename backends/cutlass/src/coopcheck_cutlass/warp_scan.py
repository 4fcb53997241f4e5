"""Warp Scan for CuTe DSL kernel code: CUB's WarpScan (InclusiveScan, ExclusiveScan, with or without an initial value,
with the warp aggregate) over logical warps of 1 to 32 lanes and the operators of :mod:`coopcheck.scan` (the static
plan and the shuffles' sources and guards: :mod:`coopcheck_cutlass.warp_plan`).

dtype, block, width, operator, mode and seed are compile-time; the initial value is a run-time value. Each lane scans
up as CUB's WarpScanShfl::InclusiveScan: at distance s it shuffles lane l - s's partial and applies op(that one, its
own) (the plan's operand order) where lane l - s exists, so lane l holds the scan of lanes 0 to l in lane order. Two
more shuffles give its logical warp's last lane's scan (the aggregate, without the seed) and, for an exclusive scan,
its left neighbour's (lane 0: the initial value, or 0 without one); the initial value is applied left of the scan.
Shuffles synchronize the hardware warp only: no shared memory, no block barrier. Example, inside a ``@cute.kernel``
launched with block (128, 1, 1)::

    acc = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Int32)
    acc[0] = item
    total = warp_scan.warp_scan(acc, block=(128,), width=7, op="sum", mode="exclusive", initial=seed)
"""

from __future__ import annotations

from typing import Any

import coopcheck

from coopcheck_cutlass import REQUIRES

coopcheck.require("cutlass", REQUIRES)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402

from coopcheck_cutlass._warp import DEVICE, geometry, shuffle  # noqa: E402
from coopcheck_cutlass.block import NUMERIC, dtype_name  # noqa: E402
from coopcheck_cutlass.reduce import combine  # noqa: E402
from coopcheck_cutlass.warp_plan import WarpScanPlan, warp_scan_plan  # noqa: E402


def warp_scan(acc: cute.Tensor, *, block: tuple[int, ...], width: int, op: str, mode: str,
              initial: Any = None) -> Any:
    """Scan ``acc[0]`` (an rmem tensor of one item, this thread's) over its logical warp into ``acc[0]``; return the
    logical warp's aggregate (the seed not among it), in every lane.

    Every thread of the block calls it together. With ``initial`` (a value of the dtype, uniform over the block)
    every logical warp's scan starts from it; without, an exclusive scan's lane 0 holds 0. Raises
    ``coopcheck.InvalidParameter`` while tracing for bad static parameters.
    """
    plan = warp_scan_plan(coopcheck.KernelSpec("warp.scan", dtype_name(acc.element_type), block, 1, "any", variant=(
        ("width", str(width)), ("op", op), ("mode", mode), ("seed", "none" if initial is None else "initial"),
        ("aggregate", "on"))))
    return _scan(plan, acc, initial)


@cute.jit
def _scan(plan: WarpScanPlan, acc: cute.Tensor, initial: Any) -> Any:
    me, mask = geometry(plan)
    for k in cutlass.range_constexpr(len(plan.offsets)):
        offset = plan.offsets[k]
        read = shuffle(plan, acc[0], plan.source(me, offset, DEVICE), mask)
        if plan.takes(me, offset):
            acc[0], later = plan.operands(acc[0], read)
            combine(plan, acc, later)
    aggregate = shuffle(plan, acc[0], plan.last_lane(me, DEVICE), mask)
    if cutlass.const_expr(not plan.inclusive):
        left = shuffle(plan, acc[0], plan.source(me, 1, DEVICE), mask)
        if plan.takes(me, 1):
            acc[0] = left
            if cutlass.const_expr(plan.seeded):
                _prefix(plan, acc, initial)
        elif cutlass.const_expr(plan.seeded):
            acc[0] = initial
        else:
            acc[0] = NUMERIC[plan.dtype](0)
    elif cutlass.const_expr(plan.seeded):
        _prefix(plan, acc, initial)
    return aggregate


@cute.jit
def _prefix(plan: WarpScanPlan, acc: cute.Tensor, initial: Any) -> None:
    """``acc[0] = op(initial, acc[0])``: the seed left of the scan."""
    scanned = acc[0]
    acc[0] = initial
    combine(plan, acc, scanned)
