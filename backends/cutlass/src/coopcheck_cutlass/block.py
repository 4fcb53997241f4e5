"""Block Load and Store for CuTe DSL kernel code: one call moves a tile between global memory and
every thread's register payload, with coop's algorithms, valid prefix, offset and oob default.

The payload is an rmem tensor of ``items_per_thread`` elements; ``block`` is the launch's block
shape, which the DSL fixes at compile time. Static parameters are checked while the kernel is traced
(``coopcheck.InvalidParameter``); ``valid_items``, ``offset`` and ``oob_default`` may also be runtime
values, uniform over the block. Example, inside a ``@cute.kernel`` launched with block (128, 1, 1)::

    items = cute.make_rmem_tensor(cute.make_layout(4), cutlass.Int32)
    block.load(src, items, block=(128,), algorithm="striped", valid_items=n, oob_default=0)
    block.store(dst, items, block=(128,), algorithm="transpose", valid_items=n)
"""

from __future__ import annotations

from typing import Any

import coopcheck

from coopcheck_cutlass import REQUIRES

coopcheck.require("cutlass", REQUIRES)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.memory import SmemAllocator  # noqa: E402

from coopcheck_cutlass import _exchange, _per_thread  # noqa: E402
from coopcheck_cutlass.exchange_plan import ExchangePlan  # noqa: E402
from coopcheck_cutlass.plan import SCRATCH_ALIGN, Plan, check_oob_value, make_plan  # noqa: E402
from coopcheck_cutlass.reduce_plan import ReducePlan  # noqa: E402
from coopcheck_cutlass.scan_plan import ScanPlan  # noqa: E402
from coopcheck_cutlass.shuffle_plan import ShufflePlan  # noqa: E402

#: The DSL numeric type of each coop dtype.
NUMERIC: dict[str, type[cutlass.Numeric]] = {
    "uint8": cutlass.Uint8, "int8": cutlass.Int8, "int16": cutlass.Int16, "uint16": cutlass.Uint16,
    "int32": cutlass.Int32, "uint32": cutlass.Uint32, "int64": cutlass.Int64, "uint64": cutlass.Uint64,
    "float16": cutlass.Float16, "float32": cutlass.Float32, "float64": cutlass.Float64,
}
_DTYPE_OF = {numeric: name for name, numeric in NUMERIC.items()}


def dtype_name(numeric: type) -> str:
    """The coop dtype of a DSL numeric type; refuses types coop does not define."""
    if numeric not in _DTYPE_OF:
        raise coopcheck.InvalidParameter(
            "dtype", f"{coopcheck.vocabulary.STATIC_RULES['dtype']} (got DSL type {numeric})"
        )
    return _DTYPE_OF[numeric]


def rank(block: tuple[int, ...]) -> cutlass.Int32:
    """This thread's rank in a block of shape ``block``: x + bx*(y + by*z)."""
    x, y, z = cute.arch.thread_idx()
    if len(block) == 1:
        return x
    if len(block) == 2:
        return x + block[0] * y
    return x + block[0] * (y + block[1] * z)


#: The plans of the families that exchange items between threads, each call with one method (Reduce's and Scan's:
#: algorithm).
MethodPlan = ExchangePlan | ShufflePlan | ReducePlan | ScanPlan


def allocate_temp_storage(plan: Plan | MethodPlan, allocator: SmemAllocator | None = None) -> cute.Tensor | None:
    """The shared scratch ``plan`` needs (None for direct, striped and vectorize; an Exchange's is the whole tile,
    or time-sliced one warp's share of it; a Shuffle's and a Reduce's one item a thread; a Scan's its plan's).

    Allocate it once and pass it as ``temp_storage`` to calls that may share it; the transposes, exchanges and
    shuffles end with a barrier, so consecutive calls can reuse one scratch.
    """
    if not plan.scratch_items:
        return None
    allocator = allocator if allocator is not None else SmemAllocator()
    return allocator.allocate_tensor(
        NUMERIC[plan.dtype], cute.make_layout(plan.scratch_items), byte_alignment=SCRATCH_ALIGN
    )


def load(
    src: cute.Tensor,
    items: cute.Tensor,
    *,
    block: tuple[int, ...],
    algorithm: str = "direct",
    valid_items: Any = None,
    oob_default: Any = None,
    offset: Any = 0,
    temp_storage: cute.Tensor | None = None,
) -> None:
    """Fill this thread's payload ``items`` from ``src[offset:]``.

    Items whose tile index is below ``valid_items`` (all when None) are read; the other slots take
    ``oob_default`` when given and otherwise keep their earlier values, for every algorithm.
    """
    plan = _plan("block.load", items, block, algorithm, valid_items, offset, oob_default is not None)
    _check_element_type(plan, "src", src)
    oob = _oob_value(plan, oob_default)
    me = rank(block)
    if plan.scratch_items:
        scratch = _scratch(plan, temp_storage)
        _exchange.load(plan, src, items, me, valid_items, offset, oob, scratch)
    else:
        _per_thread.load(plan, src, items, me, valid_items, offset, oob)


def store(
    dst: cute.Tensor,
    items: cute.Tensor,
    *,
    block: tuple[int, ...],
    algorithm: str = "direct",
    valid_items: Any = None,
    offset: Any = 0,
    temp_storage: cute.Tensor | None = None,
) -> None:
    """Write the valid items of this thread's payload ``items`` to ``dst[offset:]``; nothing else."""
    plan = _plan("block.store", items, block, algorithm, valid_items, offset, False)
    _check_element_type(plan, "dst", dst)
    me = rank(block)
    if plan.scratch_items:
        scratch = _scratch(plan, temp_storage)
        _exchange.store(plan, dst, items, me, valid_items, offset, scratch)
    else:
        _per_thread.store(plan, dst, items, me, valid_items, offset)


def _static(value: Any) -> int | None:
    """A Python int is a compile-time constant the static rules check; DSL values are runtime."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _plan(operation: str, items: cute.Tensor, block: tuple[int, ...], algorithm: str, valid_items: Any,
          offset: Any, oob_default: bool) -> Plan:
    ipt = cute.size(items)
    return make_plan(
        operation, dtype=dtype_name(items.element_type), block=block,
        items_per_thread=ipt, algorithm=algorithm,
        oob_default=oob_default, valid_items=_static(valid_items), offset=_static(offset),
    )


def same_storage(numeric: type[cutlass.Numeric], dtype: str) -> bool:
    """Whether ``numeric`` stores like ``dtype``: global pointers are signless in the DSL (a uint8
    tensor reports Int8), and a move only needs the same bits."""
    return bool(numeric.mlir_type == NUMERIC[dtype].mlir_type)


def check_payload(plan: ExchangePlan | ShufflePlan | ScanPlan, name: str, tensor: cute.Tensor) -> None:
    """Refuse a payload tensor (an Exchange's, a Shuffle's or a Scan's output) unlike the items: another type or
    size."""
    if not same_storage(tensor.element_type, plan.dtype) or cute.size(tensor) != plan.items_per_thread:
        raise coopcheck.InvalidParameter(
            "dtype", f"{name} holds {cute.size(tensor)} x {tensor.element_type}, but the items "
                     f"{plan.items_per_thread} x {plan.dtype}")


def method_scratch(plan: MethodPlan, temp_storage: cute.Tensor | None) -> cute.Tensor:
    """The scratch of an Exchange, Shuffle, Reduce or Scan call: ``temp_storage`` when it holds the plan's scratch
    items of its dtype (else ``coopcheck.InvalidParameter``, rule ``temp_storage``), a new allocation when None."""
    if temp_storage is None:
        scratch = allocate_temp_storage(plan)
        assert scratch is not None  # every method exchanges through scratch
        return scratch
    if not same_storage(temp_storage.element_type, plan.dtype) or cute.size(temp_storage) < plan.scratch_items:
        raise coopcheck.InvalidParameter(
            "temp_storage", f"{plan.method} needs {plan.scratch_items} scratch items of {plan.dtype} "
                            f"(got {cute.size(temp_storage)} x {temp_storage.element_type})")
    return temp_storage


def _check_element_type(plan: Plan, name: str, tensor: cute.Tensor) -> None:
    if not same_storage(tensor.element_type, plan.dtype):
        raise coopcheck.InvalidParameter(
            "dtype", f"{name} holds {tensor.element_type} but the payload holds {plan.dtype}"
        )


def _oob_value(plan: Plan, oob_default: Any) -> Any:
    """``oob_default`` as a value of the payload type: a Python number must fit it, a runtime value
    must already have it (no silent conversion)."""
    if oob_default is None:
        return None
    numeric = NUMERIC[plan.dtype]
    if isinstance(oob_default, cutlass.Numeric):
        if not same_storage(type(oob_default), plan.dtype):
            raise coopcheck.InvalidParameter(
                "oob_default_value", f"a runtime oob_default must be {plan.dtype} (got {type(oob_default)})"
            )
        return oob_default
    check_oob_value(plan.dtype, oob_default)
    return numeric(oob_default)


def _scratch(plan: Plan, temp_storage: cute.Tensor | None) -> cute.Tensor:
    if temp_storage is None:
        scratch = allocate_temp_storage(plan)
        assert scratch is not None  # plan.scratch_items > 0
        return scratch
    _check_element_type(plan, "temp_storage", temp_storage)
    if cute.size(temp_storage) < plan.scratch_items:
        raise coopcheck.InvalidParameter(
            "temp_storage",
            f"{plan.algorithm} needs {plan.scratch_items} scratch items (got {cute.size(temp_storage)})",
        )
    return temp_storage
