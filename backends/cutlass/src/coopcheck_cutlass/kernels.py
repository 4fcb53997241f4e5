"""The batched contract kernels of ``coopcheck.adapter`` for one specialization: a Load-only, Store-only, Exchange,
Shuffle, Reduce, Scan, Warp Reduce or Warp Scan ``@cute.kernel`` (one block per case instance; the ABIs are
``coopcheck.load_store``'s, ``coopcheck.exchange``'s, ``coopcheck.shuffle``'s, ``coopcheck.reduce``'s,
``coopcheck.scan``'s, ``coopcheck.warp_reduce``'s and ``coopcheck.warp_scan``'s) and the ``@cute.jit`` host function
launching it.

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
from coopcheck import warp_reduce, warp_scan
from coopcheck.exchange import OPERATIONS as EXCHANGE
from coopcheck.exchange import out_length
from coopcheck.reduce import OPERATIONS as REDUCE
from coopcheck.scan import OPERATIONS as SCAN
from coopcheck.scan import out_length as scan_out_length
from coopcheck.scan import tiles
from coopcheck.shuffle import OPERATIONS as SHUFFLE
from coopcheck.shuffle import out_length as shuffle_out_length
from cutlass.cute.runtime import make_ptr

from coopcheck_cutlass import block as coop_block
from coopcheck_cutlass import exchange as coop_exchange
from coopcheck_cutlass import reduce as coop_reduce
from coopcheck_cutlass import scan as coop_scan
from coopcheck_cutlass import shuffle as coop_shuffle
from coopcheck_cutlass import warp_reduce as coop_warp_reduce
from coopcheck_cutlass import warp_scan as coop_warp_scan
from coopcheck_cutlass.exchange_plan import ExchangePlan, exchange_plan
from coopcheck_cutlass.plan import Plan, spec_plan
from coopcheck_cutlass.reduce_plan import ReducePlan, reduce_plan
from coopcheck_cutlass.scan_plan import ScanPlan, scan_plan
from coopcheck_cutlass.shuffle_plan import ShufflePlan, shuffle_plan
from coopcheck_cutlass.warp_plan import WarpPlan, WarpReducePlan, WarpScanPlan, warp_reduce_plan, warp_scan_plan

#: Per-block control arrays of the ABI and their element types.
VALID, OFFSET, HAS_OOB = cutlass.Int32, cutlass.Int64, cutlass.Int32
#: The Exchange ABI's per-slot ranks and flags, the Shuffle ABI's per-block distance.
RANK = DISTANCE = cutlass.Int32
#: The Warp Reduce ABI's head or tail flag a thread.
FLAG = cutlass.Uint8


Parameters = tuple[tuple[str, type[cutlass.Numeric]], ...]
#: The scalars after the Load/Store kernels' pointers (the batch attributes of the same names).
REGION_AND_BLOCKS: Parameters = (("region", cutlass.Int64), ("n_blocks", cutlass.Int32))
#: The scalar after the Exchange and Shuffle kernels' pointers.
BLOCKS: Parameters = (("n_blocks", cutlass.Int32),)


@dataclass(frozen=True)
class Program:
    """A ``@cute.jit`` host function, its pointer parameters in order with their element types, then its
    scalar parameters with their types (each the batch attribute of its name)."""

    host: Callable[..., Any]
    pointers: Parameters
    scalars: Parameters = REGION_AND_BLOCKS

    def arguments(self, addresses: Mapping[str, int], scalars: Mapping[str, int]) -> tuple[Any, ...]:
        """The host function's arguments for device arrays at ``addresses`` and the ``scalars`` (by name)."""
        return (*(pointer(numeric, addresses[name]) for name, numeric in self.pointers),
                *(numeric(scalars[name]) for name, numeric in self.scalars))

    def batch_arguments(self, addresses: Mapping[str, int], batch: object) -> tuple[Any, ...]:
        """The arguments of one launch of ``batch`` (its scalars are its attributes of those names)."""
        return self.arguments(addresses, {name: getattr(batch, name) for name, _ in self.scalars})

    def placeholders(self) -> tuple[Any, ...]:
        """Arguments of the right types for ``cute.compile`` (no memory behind them)."""
        return self.arguments({name: 0 for name, _ in self.pointers}, {name: 0 for name, _ in self.scalars})


def pointer(numeric: type[cutlass.Numeric], address: int) -> Any:
    """A global pointer argument; compile-time placeholders and launch arguments must agree on
    the assumed alignment (one element: nothing wider is promised)."""
    return make_ptr(numeric, address, cute.AddressSpace.gmem, assumed_align=numeric.width // 8)


def build(spec: coopcheck.KernelSpec, name: str) -> Program:
    """The contract program of ``spec``; its kernel's entry name starts with ``name``."""
    if spec.operation in EXCHANGE:
        return _exchange_program(spec, exchange_plan(spec), name)
    if spec.operation in SHUFFLE:
        return _shuffle_program(spec, shuffle_plan(spec), name)
    if spec.operation in REDUCE:
        return _reduce_program(reduce_plan(spec), name)
    if spec.operation in SCAN:
        return _scan_program(spec, scan_plan(spec), name)
    if spec.operation in warp_reduce.OPERATIONS:
        return _warp_reduce_program(warp_reduce_plan(spec), name)
    if spec.operation in warp_scan.OPERATIONS:
        return _warp_scan_program(spec, warp_scan_plan(spec), name)
    plan = spec_plan(spec)
    make = _load_program if spec.operation == "block.load" else _store_program
    return make(spec, plan, name)


def _launch_block(block: tuple[int, ...]) -> tuple[int, int, int]:
    return (*block, *(1,) * (3 - len(block)))  # type: ignore[return-value]


def _launch(call: Any, n_blocks: Any, launch_block: tuple[int, int, int], one_block_an_sm: bool) -> None:
    """One block per case instance; ``one_block_an_sm``: and that all the kernel asks. ptxas's register target is
    a heuristic either way, and each way has spilled (local memory, which the contracts forbid). Free to aim at more
    blocks, it fitted Reduce's one- and two-byte min / max at ipt 16 on 65 threads in 31 registers and 8 spilled
    bytes, and Scan's float64 warp_scans sum at 1024 threads in 32 and 8; held to one, it spilled 8-byte warp_scans
    with a prefix callback at 1024 threads (64 registers, 8 or 16 bytes) until their warp prefixes went through the
    scratch (``ScanPlan.warp_scans``). Each family takes the way its kernels passed the host lane over ``full``
    with."""
    if one_block_an_sm:
        call.launch(grid=(n_blocks, 1, 1), block=launch_block, min_blocks_per_mp=1)
    else:
        call.launch(grid=(n_blocks, 1, 1), block=launch_block)


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
        _launch(kernel(src, init, dst, valid, offset, has_oob, oob, region, n_blocks), n_blocks, launch_block,
                one_block_an_sm=False)

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
        _launch(kernel(items_in, dst, valid, offset, region, n_blocks), n_blocks, launch_block, one_block_an_sm=False)

    _name(kernel, host, name)
    return Program(host, (("items", numeric), ("dst", numeric), ("valid", VALID), ("offset", OFFSET)))


def _payload(source: cute.Tensor, first: Any, plan: Plan | coop_block.MethodPlan | WarpPlan,
             numeric: type[cutlass.Numeric] | None = None, count: int | None = None) -> cute.Tensor:
    """This thread's payload (an rmem tensor of ``numeric``, by default the plan's dtype) read from
    ``source[first:first + count]`` (by default ``items_per_thread`` items)."""
    count = plan.items_per_thread if count is None else count
    items = cute.make_rmem_tensor(cute.make_layout(count), numeric or coop_block.NUMERIC[plan.dtype])
    for i in range(count):
        items[i] = source[first + i]
    return items


def _exchange_program(spec: coopcheck.KernelSpec, plan: ExchangePlan, name: str) -> Program:
    """The Exchange ABI: thread r of block b exchanges ``items[b*tile + r*ipt + i]`` (with their ranks and flags
    where the method reads them), writes the result to ``dst[b*out + r*ipt + i]`` and, with a separate output,
    its input items after the call to ``dst[b*out + tile + r*ipt + i]``."""
    numeric = coop_block.NUMERIC[plan.dtype]
    ipt, tile, launch_block = plan.items_per_thread, plan.tile, _launch_block(plan.block)
    inplace = spec.static("output") == "inplace"
    width = out_length(spec)

    @cute.kernel
    def kernel(items: cute.Pointer, ranks: cute.Pointer, flags: cute.Pointer, dst: cute.Pointer,
               n_blocks: cutlass.Int32) -> None:
        b, _, _ = cute.arch.block_idx()
        me = coop_block.rank(plan.block)
        first = b * tile + me * ipt
        held = _payload(cute.make_tensor(items, cute.make_layout(n_blocks * tile)), first, plan)
        held_ranks = held_flags = None
        if cutlass.const_expr(plan.scatter):  # only the scatters read ranks, only the flagged one flags
            held_ranks = _payload(cute.make_tensor(ranks, cute.make_layout(n_blocks * tile)), first, plan, RANK)
        if cutlass.const_expr(plan.flagged):
            held_flags = _payload(cute.make_tensor(flags, cute.make_layout(n_blocks * tile)), first, plan, RANK)
        out = held if inplace else cute.make_rmem_tensor(cute.make_layout(ipt), numeric)
        coop_exchange.block_exchange(held, out, block=plan.block, method=plan.method, ranks=held_ranks,
                                     flags=held_flags, warp_time_slicing=plan.warp_time_slicing)
        _write_back(cute.make_tensor(dst, cute.make_layout(n_blocks * width)), b * width + me * ipt, plan, held, out)

    host = _four_arrays_host(kernel, launch_block, one_block_an_sm=False)
    _name(kernel, host, name)
    return Program(host, (("items", numeric), ("ranks", RANK), ("flags", RANK), ("dst", numeric)), BLOCKS)


def _shuffle_program(spec: coopcheck.KernelSpec, plan: ShufflePlan, name: str) -> Program:
    """The Shuffle ABI: thread r of block b shuffles ``items[b*tile + r*ipt + i]`` (offset and rotate by
    ``distance[b]``) in place or into a separate output that starts as ``prior[b*(tile + threads) + r*ipt + i]``,
    writes the result to ``dst[b*out + r*ipt + i]``, with a separate output then its input items a tile later, and
    for the block item forms (which start as ``prior[b*(tile + threads) + tile + r]``) then its block item to
    ``dst[b*out + out - threads + r]``."""
    numeric = coop_block.NUMERIC[plan.dtype]
    ipt, tile, threads, launch_block = plan.items_per_thread, plan.tile, plan.threads, _launch_block(plan.block)
    inplace = spec.static("output") == "inplace"
    width, pool = shuffle_out_length(spec), plan.tile + plan.threads  # dst and prior elements per block

    @cute.kernel
    def kernel(items: cute.Pointer, prior: cute.Pointer, distance: cute.Pointer, dst: cute.Pointer,
               n_blocks: cutlass.Int32) -> None:
        b, _, _ = cute.arch.block_idx()
        me = coop_block.rank(plan.block)
        held = _payload(cute.make_tensor(items, cute.make_layout(n_blocks * tile)), b * tile + me * ipt, plan)
        priors = cute.make_tensor(prior, cute.make_layout(n_blocks * pool))
        out = held if inplace else _payload(priors, b * pool + me * ipt, plan)
        item = shift = None
        if cutlass.const_expr(plan.with_block_item):
            item = _payload(priors, b * pool + tile + me, plan, count=1)
        if cutlass.const_expr(plan.scalar):  # only offset and rotate take the distance
            shift = cute.make_tensor(distance, cute.make_layout(n_blocks))[b]
        coop_shuffle.block_shuffle(held, out, block=plan.block, method=plan.method, distance=shift, block_item=item)
        result = cute.make_tensor(dst, cute.make_layout(n_blocks * width))
        _write_back(result, b * width + me * ipt, plan, held, out)
        if cutlass.const_expr(plan.with_block_item):
            result[b * width + width - threads + me] = item[0]

    host = _four_arrays_host(kernel, launch_block, one_block_an_sm=False)
    _name(kernel, host, name)
    return Program(host, (("items", numeric), ("prior", numeric), ("distance", DISTANCE), ("dst", numeric)), BLOCKS)


def _reduce_program(plan: ReducePlan, name: str) -> Program:
    """The Reduce ABI: thread r of block b reduces ``items[b*tile + r*ipt + i]`` with ``valid[b]`` (the operator
    first also with ``sentinel[b]``) and writes its return value to ``dst[b*2*threads + r]``, its seen flag to
    ``dst[b*2*threads + threads + r]``."""
    numeric = coop_block.NUMERIC[plan.dtype]
    ipt, tile, threads, launch_block = plan.items_per_thread, plan.tile, plan.threads, _launch_block(plan.block)

    @cute.kernel
    def kernel(items: cute.Pointer, valid: cute.Pointer, sentinel: cute.Pointer, dst: cute.Pointer,
               n_blocks: cutlass.Int32) -> None:
        b, _, _ = cute.arch.block_idx()
        me = coop_block.rank(plan.block)
        held = _payload(cute.make_tensor(items, cute.make_layout(n_blocks * tile)), b * tile + me * ipt, plan)
        seen = cute.make_rmem_tensor(cute.make_layout(1), numeric)
        seen[0] = numeric(0)
        # through an rmem tensor of the dtype: a global uint tensor's element reads back signless (as int)
        mark = _payload(cute.make_tensor(sentinel, cute.make_layout(n_blocks)), b, plan, count=1)[0]
        result = coop_reduce.block_reduce(held, block=plan.block, algorithm=plan.algorithm, op=plan.op,
                                          valid_items=cute.make_tensor(valid, cute.make_layout(n_blocks))[b],
                                          sentinel=mark, seen=seen)
        out = cute.make_tensor(dst, cute.make_layout(n_blocks * 2 * threads))
        out[b * 2 * threads + me] = result
        out[b * 2 * threads + threads + me] = seen[0]

    host = _four_arrays_host(kernel, launch_block, one_block_an_sm=True)
    _name(kernel, host, name)
    return Program(host, (("items", numeric), ("valid", VALID), ("sentinel", numeric), ("dst", numeric)), BLOCKS)


class _RunningPrefix:
    """The Scan ABI's block prefix callback, one a thread: called with a tile's block aggregate it returns its
    running prefix, folds the aggregate into it, and keeps the aggregate and its call count for the output."""

    def __init__(self, plan: ScanPlan, start: Any) -> None:
        self.plan = plan
        self.state = cute.make_rmem_tensor(cute.make_layout(2), coop_block.NUMERIC[plan.dtype])  # prefix, argument
        self.state[0] = start
        self.state[1] = start
        self.calls = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Int32)
        self.calls[0] = cutlass.Int32(0)

    def __call__(self, aggregate: Any) -> Any:
        prefix = self.state[0]
        self.state[1] = aggregate
        coop_reduce.combine(self.plan, self.state, aggregate)
        self.calls[0] = self.calls[0] + 1
        return prefix


def _scan_program(spec: coopcheck.KernelSpec, plan: ScanPlan, name: str) -> Program:
    """The Scan ABI: thread r of block b scans tile k's ``items[(b*tiles + k)*tile + r*ipt + i]`` (seeded by
    ``initial[b]``, or by a running prefix that starts there) into ``dst[b*out + k*tile + r*ipt + i]``, writes the
    tile's block aggregate (with the callback: its argument) to ``dst[b*out + tiles*tile + k*threads + r]`` and its
    callback calls to ``dst[b*out + tiles*(tile + threads) + r]``. The items go in and out through global memory:
    16 of them held across the scan would crowd a 1024-thread block's 64 registers a thread."""
    numeric = coop_block.NUMERIC[plan.dtype]
    ipt, tile, threads, launch_block = plan.items_per_thread, plan.tile, plan.threads, _launch_block(plan.block)
    n_tiles, width = tiles(spec), scan_out_length(spec)

    @cute.kernel
    def kernel(items: cute.Pointer, initial: cute.Pointer, dst: cute.Pointer, n_blocks: cutlass.Int32) -> None:
        b, _, _ = cute.arch.block_idx()
        me = coop_block.rank(plan.block)
        seed = _payload(cute.make_tensor(initial, cute.make_layout(n_blocks)), b, plan, count=1)
        result = cute.make_tensor(dst, cute.make_layout(n_blocks * width))
        scratch = coop_block.allocate_temp_storage(plan)
        given, running = None, None
        if cutlass.const_expr(plan.seed == "initial"):
            given = seed[0]
        if cutlass.const_expr(plan.seed == "prefix"):
            running = _RunningPrefix(plan, seed[0])
        for k in cutlass.range_constexpr(n_tiles):
            held = cute.make_tensor(items + ((b * n_tiles + k) * tile + me * ipt), cute.make_layout(ipt))
            out = cute.make_tensor(dst + (b * width + k * tile + me * ipt), cute.make_layout(ipt))
            aggregate = coop_scan.block_scan(held, out, block=plan.block, algorithm=plan.algorithm, op=plan.op,
                                             mode=plan.mode, initial=given, prefix_op=running, temp_storage=scratch,
                                             dtype=plan.dtype)
            if cutlass.const_expr(running is not None):
                aggregate = running.state[1]
            result[b * width + n_tiles * tile + k * threads + me] = aggregate
        calls = cutlass.Int32(0)
        if cutlass.const_expr(running is not None):
            calls = running.calls[0]
        result[b * width + width - threads + me] = numeric(calls)

    @cute.jit
    def host(items: cute.Pointer, initial: cute.Pointer, dst: cute.Pointer, n_blocks: cutlass.Int32) -> None:
        _launch(kernel(items, initial, dst, n_blocks), n_blocks, launch_block, one_block_an_sm=True)

    _name(kernel, host, name)
    return Program(host, (("items", numeric), ("initial", numeric), ("dst", numeric)), BLOCKS)


def _warp_reduce_program(plan: WarpReducePlan, name: str) -> Program:
    """The Warp Reduce ABI: thread r of block b reduces ``items[b*threads + r]`` (with its flag ``flags[b*threads +
    r]``, or ``valid[b]``; the operator first also with ``sentinel[b]``) and writes its return value to
    ``dst[b*2*threads + r]``, its seen flag to ``dst[b*2*threads + threads + r]``."""
    numeric = coop_block.NUMERIC[plan.dtype]
    threads, launch_block = plan.threads, _launch_block(plan.block)

    @cute.kernel
    def kernel(items: cute.Pointer, flags: cute.Pointer, valid: cute.Pointer, sentinel: cute.Pointer,
               dst: cute.Pointer, n_blocks: cutlass.Int32) -> None:
        b, _, _ = cute.arch.block_idx()
        me = coop_block.rank(plan.block)
        acc = _payload(cute.make_tensor(items, cute.make_layout(n_blocks * threads)), b * threads + me, plan, count=1)
        seen = cute.make_rmem_tensor(cute.make_layout(1), numeric)
        seen[0] = numeric(0)
        # through an rmem tensor of the dtype: a global uint tensor's element reads back signless (as int)
        mark = _payload(cute.make_tensor(sentinel, cute.make_layout(n_blocks)), b, plan, count=1)[0]
        flag = None
        if cutlass.const_expr(plan.mode != "reduce"):
            flag = cute.make_tensor(flags, cute.make_layout(n_blocks * threads))[b * threads + me]
        coop_warp_reduce.warp_reduce(acc, block=plan.block, width=plan.width, op=plan.op, mode=plan.mode, flag=flag,
                                     valid_items=cute.make_tensor(valid, cute.make_layout(n_blocks))[b],
                                     sentinel=mark, seen=seen)
        out = cute.make_tensor(dst, cute.make_layout(n_blocks * 2 * threads))
        out[b * 2 * threads + me] = acc[0]
        out[b * 2 * threads + threads + me] = seen[0]

    @cute.jit
    def host(items: cute.Pointer, flags: cute.Pointer, valid: cute.Pointer, sentinel: cute.Pointer,
             dst: cute.Pointer, n_blocks: cutlass.Int32) -> None:
        _launch(kernel(items, flags, valid, sentinel, dst, n_blocks), n_blocks, launch_block, one_block_an_sm=True)

    _name(kernel, host, name)
    return Program(host, (("items", numeric), ("flags", FLAG), ("valid", VALID), ("sentinel", numeric),
                          ("dst", numeric)), BLOCKS)


def _warp_scan_program(spec: coopcheck.KernelSpec, plan: WarpScanPlan, name: str) -> Program:
    """The Warp Scan ABI: thread r of block b scans ``items[b*threads + r]`` (seeded by ``initial[b]`` where the spec
    says) into ``dst[b*out + r]`` and, with the aggregate on, writes its logical warp's aggregate to ``dst[b*out +
    threads + r]``."""
    numeric = coop_block.NUMERIC[plan.dtype]
    threads, launch_block, width = plan.threads, _launch_block(plan.block), warp_scan.out_length(spec)
    aggregates = warp_scan.aggregates(spec)

    @cute.kernel
    def kernel(items: cute.Pointer, initial: cute.Pointer, dst: cute.Pointer, n_blocks: cutlass.Int32) -> None:
        b, _, _ = cute.arch.block_idx()
        me = coop_block.rank(plan.block)
        acc = _payload(cute.make_tensor(items, cute.make_layout(n_blocks * threads)), b * threads + me, plan, count=1)
        seed = None
        if cutlass.const_expr(plan.seeded):
            seed = _payload(cute.make_tensor(initial, cute.make_layout(n_blocks)), b, plan, count=1)[0]
        aggregate = coop_warp_scan.warp_scan(acc, block=plan.block, width=plan.width, op=plan.op, mode=plan.mode,
                                             initial=seed)
        out = cute.make_tensor(dst, cute.make_layout(n_blocks * width))
        out[b * width + me] = acc[0]
        if cutlass.const_expr(aggregates):
            out[b * width + threads + me] = aggregate

    @cute.jit
    def host(items: cute.Pointer, initial: cute.Pointer, dst: cute.Pointer, n_blocks: cutlass.Int32) -> None:
        _launch(kernel(items, initial, dst, n_blocks), n_blocks, launch_block, one_block_an_sm=True)

    _name(kernel, host, name)
    return Program(host, (("items", numeric), ("initial", numeric), ("dst", numeric)), BLOCKS)


def _four_arrays_host(kernel: Any, launch_block: tuple[int, int, int], one_block_an_sm: bool) -> Any:
    """The host function of a kernel taking four arrays, then the block count (the Exchange, Shuffle and Reduce ABIs):
    launched as :func:`_launch` says."""
    @cute.jit
    def host(first: cute.Pointer, second: cute.Pointer, third: cute.Pointer, fourth: cute.Pointer,
             n_blocks: cutlass.Int32) -> None:
        _launch(kernel(first, second, third, fourth, n_blocks), n_blocks, launch_block, one_block_an_sm)

    return host


def _write_back(result: cute.Tensor, first: Any, plan: coop_block.MethodPlan, held: cute.Tensor,
                out: cute.Tensor) -> None:
    """The output items (in place: ``held`` itself) to ``result[first:first + ipt]``; with a separate output then
    the input items as the call left them, a tile later (the Exchange and Shuffle ABIs alike)."""
    for i in range(plan.items_per_thread):
        result[first + i] = out[i]
    if out is not held:
        for i in range(plan.items_per_thread):
            result[first + plan.tile + i] = held[i]


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

