"""What the warp families' device code shares: the DSL's :class:`~coopcheck_cutlass.warp_plan.Arithmetic` and a
bit-exact shuffle of one item."""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass._mlir import ir
from cutlass._mlir.dialects import llvm

from coopcheck_cutlass.block import rank
from coopcheck_cutlass.warp_plan import Arithmetic, WarpPlan

#: The plans' index arithmetic on run-time values.
DEVICE = Arithmetic(minimum=cutlass.min, unsigned=cutlass.Uint32, popcount=cute.arch.popc)


def shuffle(plan: WarpPlan, value: Any, lane: Any, mask: Any) -> Any:
    """``value`` of hardware lane ``lane`` among the lanes of ``mask``, bit for bit: the DSL widens a float16 to
    float32 to shuffle it (a signalling NaN would come back quiet), so its bits travel as an int16."""
    if plan.dtype != "float16":
        return cute.arch.shuffle_sync(value, lane, mask=mask)
    bits = cutlass.Int16(llvm.bitcast(ir.IntegerType.get_signless(16), value.ir_value()))
    moved = cute.arch.shuffle_sync(bits, lane, mask=mask)
    return cutlass.Float16(llvm.bitcast(ir.F16Type.get(), moved.ir_value()))


def geometry(plan: WarpPlan) -> tuple[Any, Any]:
    """This thread's rank and its hardware warp's member mask."""
    me = rank(plan.block)
    return me, plan.member_mask(me, DEVICE)
