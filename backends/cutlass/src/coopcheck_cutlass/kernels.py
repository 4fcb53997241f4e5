"""The batched contract kernels of ``coopcheck.adapter`` for one specialization: a Load-only or Store-only
``@cute.kernel`` (one block per case instance) and the ``@cute.jit`` host function launching it.

Arrays arrive as raw global pointers (so exact-size allocations of any origin can be passed) and
become tensors inside the kernel; the block shape and every static of the spec are compile-time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import coopcheck
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_ptr

from coopcheck_cutlass import block as coop_block
from coopcheck_cutlass.plan import Plan, spec_plan

#: Per-block control arrays of the ABI and their element types.
VALID, OFFSET, HAS_OOB = cutlass.Int32, cutlass.Int64, cutlass.Int32


@dataclass(frozen=True)
class Program:
    """A ``@cute.jit`` host function and its pointer parameters, in order, with their element types;
    two scalars follow them: ``region`` (Int64) and ``n_blocks`` (Int32)."""

    host: Callable[..., Any]
    pointers: tuple[tuple[str, type[cutlass.Numeric]], ...]

    def arguments(self, addresses: Mapping[str, int], region: int, n_blocks: int) -> tuple[Any, ...]:
        """The host function's arguments for device arrays at ``addresses`` (by parameter name)."""
        return (*(pointer(numeric, addresses[name]) for name, numeric in self.pointers),
                cutlass.Int64(region), cutlass.Int32(n_blocks))

    def placeholders(self) -> tuple[Any, ...]:
        """Arguments of the right types for ``cute.compile`` (no memory behind them)."""
        return self.arguments({name: 0 for name, _ in self.pointers}, 0, 0)


def pointer(numeric: type[cutlass.Numeric], address: int) -> Any:
    """A global pointer argument; compile-time placeholders and launch arguments must agree on
    the assumed alignment (one element: nothing wider is promised)."""
    return make_ptr(numeric, address, cute.AddressSpace.gmem, assumed_align=numeric.width // 8)


def build(spec: coopcheck.KernelSpec, name: str) -> Program:
    """The contract program of ``spec``; its kernel's entry name starts with ``name``."""
    plan = spec_plan(spec)
    make = _load_program if spec.operation == "block.load" else _store_program
    return make(spec, plan, name)


def _launch_block(block: tuple[int, ...]) -> tuple[int, int, int]:
    return (*block, *(1,) * (3 - len(block)))  # type: ignore[return-value]


def _load_program(spec: coopcheck.KernelSpec, plan: Plan, name: str) -> Program:
    numeric = coop_block.NUMERIC[plan.dtype]
    ipt, tile, launch_block = plan.items_per_thread, plan.tile, _launch_block(plan.block)

    @cute.kernel
    def kernel(src: cute.Pointer, init: cute.Pointer, dst: cute.Pointer, valid: cute.Pointer,
               offset: cute.Pointer, has_oob: cute.Pointer, oob: cute.Pointer, region: cutlass.Int64,
               n_blocks: cutlass.Int32) -> None:
        b, _, _ = cute.arch.block_idx()
        me = coop_block.rank(plan.block)
        payload = cute.make_tensor(init, cute.make_layout(n_blocks * tile))
        out = cute.make_tensor(dst, cute.make_layout(n_blocks * tile))
        n_valid, start = _controls(spec, valid, offset, n_blocks, b)
        source = cute.make_tensor(src + b * region, cute.make_layout(region))
        flags = cute.make_tensor(has_oob, cute.make_layout(n_blocks))
        defaults = cute.make_tensor(oob, cute.make_layout(n_blocks))

        first = b * tile + me * ipt
        items = _payload(payload, first, plan)
        scratch = coop_block.allocate_temp_storage(plan)
        # The ABI passes oob_default only where has_oob is set: two calls sharing one scratch.
        if flags[b] != 0:
            coop_block.load(source, items, block=plan.block, algorithm=plan.algorithm, valid_items=n_valid,
                            offset=start, oob_default=defaults[b], temp_storage=scratch)
        else:
            coop_block.load(source, items, block=plan.block, algorithm=plan.algorithm, valid_items=n_valid,
                            offset=start, temp_storage=scratch)
        for i in cutlass.range_constexpr(ipt):
            out[first + i] = items[i]

    @cute.jit
    def host(src: cute.Pointer, init: cute.Pointer, dst: cute.Pointer, valid: cute.Pointer,
             offset: cute.Pointer, has_oob: cute.Pointer, oob: cute.Pointer, region: cutlass.Int64,
             n_blocks: cutlass.Int32) -> None:
        kernel(src, init, dst, valid, offset, has_oob, oob, region, n_blocks).launch(
            grid=(n_blocks, 1, 1), block=launch_block
        )

    _name(kernel, host, name)
    return Program(host, (("src", numeric), ("init", numeric), ("dst", numeric), ("valid", VALID),
                          ("offset", OFFSET), ("has_oob", HAS_OOB), ("oob", numeric)))


def _store_program(spec: coopcheck.KernelSpec, plan: Plan, name: str) -> Program:
    numeric = coop_block.NUMERIC[plan.dtype]
    ipt, tile, launch_block = plan.items_per_thread, plan.tile, _launch_block(plan.block)

    @cute.kernel
    def kernel(items_in: cute.Pointer, dst: cute.Pointer, valid: cute.Pointer, offset: cute.Pointer,
               region: cutlass.Int64, n_blocks: cutlass.Int32) -> None:
        b, _, _ = cute.arch.block_idx()
        me = coop_block.rank(plan.block)
        payload = cute.make_tensor(items_in, cute.make_layout(n_blocks * tile))
        n_valid, start = _controls(spec, valid, offset, n_blocks, b)
        target = cute.make_tensor(dst + b * region, cute.make_layout(region))

        items = _payload(payload, b * tile + me * ipt, plan)
        coop_block.store(target, items, block=plan.block, algorithm=plan.algorithm, valid_items=n_valid,
                         offset=start)

    @cute.jit
    def host(items_in: cute.Pointer, dst: cute.Pointer, valid: cute.Pointer, offset: cute.Pointer,
             region: cutlass.Int64, n_blocks: cutlass.Int32) -> None:
        kernel(items_in, dst, valid, offset, region, n_blocks).launch(grid=(n_blocks, 1, 1), block=launch_block)

    _name(kernel, host, name)
    return Program(host, (("items", numeric), ("dst", numeric), ("valid", VALID), ("offset", OFFSET)))


def _payload(source: cute.Tensor, first: Any, plan: Plan) -> cute.Tensor:
    """This thread's payload (an rmem tensor) read from ``source[first:first + ipt]``."""
    items = cute.make_rmem_tensor(cute.make_layout(plan.items_per_thread), coop_block.NUMERIC[plan.dtype])
    for i in range(plan.items_per_thread):
        items[i] = source[first + i]
    return items


def _controls(spec: coopcheck.KernelSpec, valid: cute.Pointer, offset: cute.Pointer, n_blocks: Any,
              b: Any) -> tuple[Any, Any]:
    """Block ``b``'s valid_items and offset: the spec's compile-time value where it sets one (only
    rejection cases do), else the block's entry of the runtime array."""
    n_valid = spec.static("static_valid_items")
    if n_valid is None:
        n_valid = cute.make_tensor(valid, cute.make_layout(n_blocks))[b]
    start = spec.static("static_offset")
    if start is None:
        start = cute.make_tensor(offset, cute.make_layout(n_blocks))[b]
    return n_valid, start


def _name(kernel: Any, host: Any, name: str) -> None:
    """Name the kernel entry (and the host function, which names the dump files) after the spec."""
    kernel.set_name_prefix(name, remove_cutlass_symbol=True, keep_mangled_name=False)
    host.set_name_prefix(name, remove_cutlass_symbol=True, keep_mangled_name=False)

