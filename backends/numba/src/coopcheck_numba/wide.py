"""Wide (vector) memory accesses for the ``vectorize`` algorithm, and the operand type check.

numba cannot tell the compiler that an address is 16-byte aligned, so its scalar accesses never
merge into ``LDG.E.128``. The intrinsics here move ``width`` items as one aligned integer of up to
128 bits between memory and the thread's local ``items`` array; going through the array (not
through per-item extracts, which the backend narrows back into scalar loads) keeps the access wide
and the bits exact. Under numba's CUDA simulator, where intrinsics cannot run, :func:`for_target`
hands out plain-Python equivalents.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

#: The widest access one thread can make: 128 bits.
MAX_VECTOR_BYTES = 16


def vector_width(itemsize: int, items_per_thread: int) -> int:
    """Items per wide access: the largest power of two that divides ``items_per_thread`` and fits
    in 16 bytes (1: there is no wide access to make).

    >>> vector_width(4, 8), vector_width(8, 4), vector_width(1, 16), vector_width(4, 3)
    (4, 2, 16, 1)
    """
    width = 1
    while items_per_thread % (width * 2) == 0 and width * 2 * itemsize <= MAX_VECTOR_BYTES:
        width *= 2
    return width


class WideOps(NamedTuple):
    """The device callables that the ``vectorize`` algorithm needs for one access width."""

    #: ``address(array, index) -> int64``: the byte address of ``array[index]``.
    address: Callable[..., Any]
    #: ``load(src, index, items, first)``: ``items[first:first+width] = src[index:index+width]``,
    #: as one access that ``src[index]``'s alignment must allow.
    load: Callable[..., Any]
    #: ``store(dst, index, items, first)``: ``dst[index:index+width] = items[first:first+width]``.
    store: Callable[..., Any]


def for_target(width: int, simulated: bool) -> WideOps:
    """The wide accesses of ``width`` items: compiled, or plain Python when ``simulated``."""
    return _simulated_ops(width) if simulated else _compiled_ops(width)


def operand_check(dtype: Any, label: str, simulated: bool) -> Callable[..., Any]:
    """A device callable ``check(memory, items)`` refusing operands that are not 1-D C-contiguous
    arrays of ``dtype`` (wide accesses and the shared scratch assume both); compiled code refuses
    them at typing time, so a mismatch never reaches the GPU."""
    return _simulated_check(dtype, label) if simulated else _compiled_check(dtype, label)


def _simulated_ops(width: int) -> WideOps:
    def address(array: Any, index: int) -> int:
        return int(array.__array_interface__["data"][0]) + int(index) * array.itemsize

    def load(src: Any, index: int, items: Any, first: int) -> None:
        items[first:first + width] = src[index:index + width]

    def store(dst: Any, index: int, items: Any, first: int) -> None:
        dst[index:index + width] = items[first:first + width]

    return WideOps(address, load, store)


def _simulated_check(dtype: Any, label: str) -> Callable[..., Any]:
    import numpy as np

    expected = np.dtype(str(dtype))

    def check(memory: Any, items: Any) -> None:
        for name, array in (("memory operand", memory), ("items", items)):
            if array.dtype != expected or array.ndim != 1:
                raise TypeError(f"{label}: {name} must be a 1-D {expected} array, "
                                f"got {array.ndim}-D {array.dtype}")

    return check


@functools.cache
def _compiled_ops(width: int) -> WideOps:
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic

    def element_pointer(context: Any, builder: Any, arrty: Any, array: Any, index: Any) -> Any:
        data = context.make_array(arrty)(context, builder, array).data
        return builder.gep(data, [index])

    def wide_type(context: Any, arrty: Any) -> tuple[ir.Type, int, int]:
        """(pointer to the wide integer, its size, the size of one item)."""
        itemsize = context.get_abi_sizeof(context.get_data_type(arrty.dtype))
        nbytes = width * itemsize
        # Up to 64 bits one integer; 128 bits two i64 lanes (ld.global.v2.u64).
        lanes = ir.IntType(nbytes * 8) if nbytes <= 8 else ir.VectorType(ir.IntType(64), nbytes // 8)
        return lanes.as_pointer(), nbytes, itemsize

    def copy(context: Any, builder: Any, sig: Any, args: Any, to_items: bool) -> Any:
        memty, _, itemsty, _ = sig.args
        pointer, nbytes, itemsize = wide_type(context, memty)
        memory = builder.bitcast(element_pointer(context, builder, memty, args[0], args[1]), pointer)
        slot = builder.bitcast(element_pointer(context, builder, itemsty, args[2], args[3]), pointer)
        # The caller proved ``memory`` aligned to the whole access; ``items`` is only item-aligned.
        if to_items:
            builder.store(builder.load(memory, align=nbytes), slot, align=itemsize)
        else:
            builder.store(builder.load(slot, align=itemsize), memory, align=nbytes)
        return context.get_dummy_value()

    @intrinsic
    def address(typingctx: Any, array: Any, index: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            pointer = element_pointer(context, builder, sig.args[0], args[0], args[1])
            return builder.ptrtoint(pointer, ir.IntType(64))

        return types.int64(array, index), codegen

    @intrinsic
    def load(typingctx: Any, src: Any, index: Any, items: Any, first: Any) -> Any:
        return types.void(src, index, items, first), functools.partial(copy, to_items=True)

    @intrinsic
    def store(typingctx: Any, dst: Any, index: Any, items: Any, first: Any) -> Any:
        return types.void(dst, index, items, first), functools.partial(copy, to_items=False)

    return WideOps(address, load, store)


def _compiled_check(dtype: Any, label: str) -> Callable[..., Any]:
    from numba.cuda import types
    from numba.cuda.core.errors import TypingError
    from numba.cuda.extending import intrinsic

    @intrinsic
    def check(typingctx: Any, memory: Any, items: Any) -> Any:
        for name, arrty in (("memory operand", memory), ("items", items)):
            if not (isinstance(arrty, types.Array) and arrty.dtype == dtype and arrty.ndim == 1
                    and arrty.layout == "C"):
                raise TypingError(f"{label}: {name} must be a 1-D C-contiguous {dtype} array, "
                                  f"got {arrty}")

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            return context.get_dummy_value()

        return types.void(memory, items), codegen

    return check
