"""The device API used directly from ``@cute.kernel`` code: bad statics are refused while the kernel
is traced, naming the rule, and one scratch serves consecutive transposes, exchanges, shuffles and reductions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import coopcheck
import cutlass
import cutlass.cute as cute
import pytest
from coopcheck_cutlass import artifacts, block, exchange, reduce, shuffle
from coopcheck_cutlass.exchange_plan import ExchangePlan
from coopcheck_cutlass.kernels import pointer
from coopcheck_cutlass.plan import make_plan
from coopcheck_cutlass.reduce_plan import SYNC, ReducePlan, reduce_plan
from coopcheck_cutlass.shuffle_plan import ShufflePlan

Body = Callable[[cute.Tensor, cute.Tensor, Any], None]
SIZE = 1 << 16


def _compile(body: Body, numeric: type[cutlass.Numeric] = cutlass.Int32, shape: tuple[int, ...] = (128,),
             keep_in: Path | None = None) -> Any:
    """Compile a one-block kernel whose ``body(src, dst, n)`` calls the API (``n`` is a runtime Int32),
    keeping its PTX and cubin when given a folder."""
    launch_block = (*shape, *(1,) * (3 - len(shape)))

    @cute.kernel
    def kernel(src: cute.Pointer, dst: cute.Pointer, n: cutlass.Int32) -> None:
        body(cute.make_tensor(src, cute.make_layout(SIZE)), cute.make_tensor(dst, cute.make_layout(SIZE)), n)

    @cute.jit
    def host(src: cute.Pointer, dst: cute.Pointer, n: cutlass.Int32) -> None:
        kernel(src, dst, n).launch(grid=(1, 1, 1), block=launch_block)

    data = pointer(numeric, 0)
    keep = f" --keep-ptx --keep-cubin --dump-dir {keep_in}" if keep_in else ""
    return cute.compile(host, data, data, cutlass.Int32(0), options="--gpu-arch sm_90a" + keep)


def _payload(numeric: type[cutlass.Numeric] = cutlass.Int32, ipt: int = 4) -> cute.Tensor:
    return cute.make_rmem_tensor(cute.make_layout(ipt), numeric)


REFUSED: dict[str, tuple[Body, str, dict[str, Any]]] = {
    "warp_transpose on 100 threads": (
        lambda src, dst, n: block.load(src, _payload(), block=(100,), algorithm="warp_transpose"),
        "warp_multiple", {"shape": (100,)}),
    "static valid_items past the tile": (
        lambda src, dst, n: block.store(dst, _payload(), block=(128,), valid_items=513), "valid_items_range", {}),
    "negative static offset": (
        lambda src, dst, n: block.load(src, _payload(), block=(128,), valid_items=n, offset=-1),
        "offset_negative", {}),
    "oob_default that does not fit uint8": (
        lambda src, dst, n: block.load(src, _payload(cutlass.Uint8), block=(128,), valid_items=n, oob_default=300),
        "oob_default_value", {"numeric": cutlass.Uint8}),
    "bool oob_default": (
        lambda src, dst, n: block.load(src, _payload(), block=(128,), valid_items=n, oob_default=True),
        "oob_default_value", {}),
    "runtime oob_default of another type": (
        lambda src, dst, n: block.load(src, _payload(cutlass.Float32), block=(128,), valid_items=n, oob_default=n),
        "oob_default_value", {"numeric": cutlass.Float32}),
    "payload type unlike the source": (
        lambda src, dst, n: block.load(src, _payload(cutlass.Float32), block=(128,)), "dtype", {}),
    "payload type coop does not define": (
        lambda src, dst, n: block.store(dst, _payload(cutlass.BFloat16), block=(128,)), "dtype", {}),
    "scratch smaller than a tile": (
        lambda src, dst, n: block.load(src, _payload(), block=(128,), algorithm="transpose",
                                       temp_storage=cutlass.memory.SmemAllocator().allocate_tensor(
                                           cutlass.Int32, cute.make_layout(64))),
        "temp_storage", {}),
    "block the launch cannot have": (
        lambda src, dst, n: block.store(dst, _payload(), block=(128, 16)), "block", {}),
}


@pytest.mark.parametrize(("body", "rule", "kwargs"), REFUSED.values(), ids=REFUSED.keys())
def test_a_bad_static_is_refused_while_tracing(body: Body, rule: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        _compile(body, **kwargs)
    assert raised.value.rule == rule


def _two_transposes(src: cute.Tensor, dst: cute.Tensor, n: Any) -> None:
    plan = make_plan("block.load", dtype="int32", block=(128,), items_per_thread=4, algorithm="transpose")
    scratch = block.allocate_temp_storage(plan)
    items = _payload()
    block.load(src, items, block=(128,), algorithm="transpose", valid_items=n, oob_default=0, temp_storage=scratch)
    block.store(dst, items, block=(128,), algorithm="transpose", valid_items=n, temp_storage=scratch)


def test_consecutive_transposes_share_one_scratch(tmp_path: Path) -> None:
    compiled = artifacts.collect(_compile(_two_transposes, keep_in=tmp_path), "sm_90a")
    assert compiled.dynamic_shared_bytes == 128 * 4 * 4
    assert compiled.ptx is not None and compiled.ptx.count("bar.sync") == 4


def _ranks() -> cute.Tensor:
    return _payload(cutlass.Int32, 4)


EXCHANGE_REFUSED: dict[str, tuple[Body, str]] = {
    "warp method on a partial last warp": (
        lambda src, dst, n: exchange.block_exchange(_payload(), _payload(), block=(100,),
                                                    method="warp_striped_to_blocked"), "exchange_warp_multiple"),
    "unknown method": (
        lambda src, dst, n: exchange.block_exchange(_payload(), _payload(), block=(128,), method="transpose"),
        "exchange_method"),
    "scatter without ranks": (
        lambda src, dst, n: exchange.block_exchange(_payload(), _payload(), block=(128,), method="scatter_to_striped"),
        "exchange_ranks"),
    "flagged scatter without flags": (
        lambda src, dst, n: exchange.block_exchange(_payload(), _payload(), block=(128,), ranks=_ranks(),
                                                    method="scatter_to_striped_flagged"), "exchange_ranks"),
    "output of another type": (
        lambda src, dst, n: exchange.block_exchange(_payload(), _payload(cutlass.Float32), block=(128,),
                                                    method="striped_to_blocked"), "dtype"),
    "scratch smaller than a warp's share": (
        lambda src, dst, n: exchange.block_exchange(
            _payload(), _payload(), block=(128,), method="striped_to_blocked", warp_time_slicing=True,
            temp_storage=cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Int32, cute.make_layout(127))),
        "temp_storage"),
}


@pytest.mark.parametrize(("body", "rule"), EXCHANGE_REFUSED.values(), ids=EXCHANGE_REFUSED.keys())
def test_a_bad_exchange_static_is_refused_while_tracing(body: Body, rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        _compile(body)
    assert raised.value.rule == rule


def _two_exchanges(src: cute.Tensor, dst: cute.Tensor, n: Any) -> None:
    scratch = block.allocate_temp_storage(ExchangePlan("int32", (128,), 4, "striped_to_blocked", True))
    items = _payload()
    for i in range(4):
        items[i] = src[cute.arch.thread_idx()[0] * 4 + i]
    exchange.block_exchange(items, items, block=(128,), method="striped_to_blocked", warp_time_slicing=True,
                            temp_storage=scratch)
    exchange.block_exchange(items, items, block=(128,), method="blocked_to_striped", warp_time_slicing=True,
                            temp_storage=scratch)
    for i in range(4):
        dst[cute.arch.thread_idx()[0] * 4 + i] = items[i]


def test_consecutive_time_sliced_exchanges_share_one_warps_share_of_scratch(tmp_path: Path) -> None:
    compiled = artifacts.collect(_compile(_two_exchanges, keep_in=tmp_path), "sm_90a")
    assert compiled.dynamic_shared_bytes == 32 * 4 * 4
    # each exchange loops over its 4 slices at run time: one loop body of 2 barriers, twice
    assert compiled.ptx is not None and compiled.ptx.count("bar.sync") == 2 * 2


def _item() -> cute.Tensor:
    return _payload(cutlass.Int32, 1)


SHUFFLE_REFUSED: dict[str, tuple[Body, str]] = {
    "unknown method": (
        lambda src, dst, n: shuffle.block_shuffle(_item(), _item(), block=(128,), method="shift"), "shuffle_method"),
    "offset of several items": (
        lambda src, dst, n: shuffle.block_shuffle(_payload(), _payload(), block=(128,), method="offset", distance=n),
        "shuffle_scalar"),
    "static offset outside the block": (
        lambda src, dst, n: shuffle.block_shuffle(_item(), _item(), block=(128,), method="offset", distance=-128),
        "shuffle_offset_distance"),
    "rotate by a full turn": (
        lambda src, dst, n: shuffle.block_shuffle(_item(), _item(), block=(128,), method="rotate", distance=128),
        "shuffle_rotate_distance"),
    "rotate by a bool": (
        lambda src, dst, n: shuffle.block_shuffle(_item(), _item(), block=(128,), method="rotate", distance=True),
        "shuffle_rotate_distance"),
    "rotate without a distance": (
        lambda src, dst, n: shuffle.block_shuffle(_item(), _item(), block=(128,), method="rotate"),
        "shuffle_rotate_distance"),
    "runtime distance of a float": (
        lambda src, dst, n: shuffle.block_shuffle(_item(), _item(), block=(128,), method="offset",
                                                  distance=cutlass.Float32(n)), "shuffle_offset_distance"),
    "up with a distance": (
        lambda src, dst, n: shuffle.block_shuffle(_payload(), _payload(), block=(128,), method="up", distance=n),
        "shuffle_no_distance"),
    "up_suffix without its block item": (
        lambda src, dst, n: shuffle.block_shuffle(_payload(), _payload(), block=(128,), method="up_suffix"),
        "block_item"),
    "block item of another type": (
        lambda src, dst, n: shuffle.block_shuffle(_payload(), _payload(), block=(128,), method="down_prefix",
                                                  block_item=_payload(cutlass.Float32, 1)), "block_item"),
    "output of another type": (
        lambda src, dst, n: shuffle.block_shuffle(_payload(), _payload(cutlass.Float32), block=(128,), method="down"),
        "dtype"),
    "scratch smaller than a block": (
        lambda src, dst, n: shuffle.block_shuffle(
            _payload(), _payload(), block=(128,), method="down",
            temp_storage=cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Int32, cute.make_layout(127))),
        "temp_storage"),
    "block the launch cannot have": (
        lambda src, dst, n: shuffle.block_shuffle(_payload(), _payload(), block=(64, 32), method="up"), "block"),
}


@pytest.mark.parametrize(("body", "rule"), SHUFFLE_REFUSED.values(), ids=SHUFFLE_REFUSED.keys())
def test_a_bad_shuffle_static_is_refused_while_tracing(body: Body, rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        _compile(body)
    assert raised.value.rule == rule


def _rotate_then_up_suffix(src: cute.Tensor, dst: cute.Tensor, n: Any) -> None:
    scratch = block.allocate_temp_storage(ShufflePlan("int32", (128,), 1, "rotate"))
    me = cute.arch.thread_idx()[0]
    items, suffix = _item(), _item()
    items[0] = src[me]
    shuffle.block_shuffle(items, items, block=(128,), method="rotate", distance=n, temp_storage=scratch)
    shuffle.block_shuffle(items, items, block=(128,), method="up_suffix", block_item=suffix, temp_storage=scratch)
    dst[me] = items[0]
    dst[128 + me] = suffix[0]


def test_consecutive_shuffles_share_one_scratch_of_one_item_a_thread(tmp_path: Path) -> None:
    compiled = artifacts.collect(_compile(_rotate_then_up_suffix, keep_in=tmp_path), "sm_90a")
    assert compiled.dynamic_shared_bytes == 128 * 4
    assert compiled.ptx is not None and compiled.ptx.count("bar.sync") == 2 * 2  # 2 barriers, twice


REDUCE_REFUSED: dict[str, tuple[Body, str]] = {
    "unknown operator": (
        lambda src, dst, n: reduce.block_reduce(_payload(), block=(128,), algorithm="raking", op="prod"),
        "reduce_operator"),
    "non-commutative operator with raking_commutative_only": (
        lambda src, dst, n: reduce.block_reduce(_payload(), block=(128,), algorithm="raking_commutative_only",
                                                op="matmul"), "reduce_commutative"),
    "matmul of floats": (
        lambda src, dst, n: reduce.block_reduce(_payload(cutlass.Float32), block=(128,), algorithm="raking",
                                                op="matmul"), "reduce_integer_operator"),
    "first without its seen flag": (
        lambda src, dst, n: reduce.block_reduce(_payload(), block=(128,), algorithm="raking", op="first",
                                                sentinel=n), "reduce_operator"),
}  # a scratch too small: the check the Exchange and Shuffle share (block.method_scratch), tested with them


@pytest.mark.parametrize("case", REDUCE_REFUSED)
def test_a_bad_reduce_static_is_refused_while_tracing(case: str) -> None:
    body, rule = REDUCE_REFUSED[case]
    with pytest.raises(coopcheck.InvalidParameter, check=lambda error: error.rule == rule):
        _compile(body)


def _sum_then_max(src: cute.Tensor, dst: cute.Tensor, n: Any) -> None:
    scratch = block.allocate_temp_storage(ReducePlan("int32", (128,), 4, "raking", "sum"))
    me = cute.arch.thread_idx()[0]
    items = _payload()
    for i in range(4):
        items[i] = src[me * 4 + i]
    total = reduce.block_reduce(items, block=(128,), algorithm="raking", op="sum", valid_items=n,
                                temp_storage=scratch)
    largest = reduce.block_reduce(items, block=(128,), algorithm="warp_reductions", op="max", temp_storage=scratch)
    dst[me] = total
    dst[128 + me] = largest


def test_consecutive_reductions_share_one_scratch_of_one_item_a_thread(tmp_path: Path) -> None:
    compiled = artifacts.collect(_compile(_sum_then_max, keep_in=tmp_path), "sm_90a")
    assert compiled.dynamic_shared_bytes == 128 * 4
    barriers = [sum(step.kind == SYNC for step in reduce_plan(coopcheck.KernelSpec(
        "block.reduce", "int32", (128,), 4, algorithm, variant=(("op", "sum"),))).schedule)
        for algorithm in ("raking", "warp_reductions")]
    assert compiled.ptx is not None and compiled.ptx.count("bar.sync") == sum(barriers)
