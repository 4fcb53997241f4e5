"""What the adapter declares of the two warp families on a GPU: what cuda.coop 1.1.1's warp factories do not bind
(segments, valid_items, every scan but the exclusive sum without seed or aggregate), and the blocks that leave a
logical warp partial, where CUB promises nothing (its entrant threads a multiple of the width; NVIDIA/cccl#858's
geometry among them)."""

from __future__ import annotations

import itertools

import coopcheck
import pytest
from coopcheck_cccl import adapter as cccl


def _reduce(width: int, op: str = "sum", mode: str = "reduce", block: tuple[int, ...] = (49,),
            dtype: str = "int32") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("warp.reduce", dtype, block, 1, "any",
                                variant=(("width", str(width)), ("op", op), ("mode", mode)))


def _scan(width: int = 7, op: str = "sum", mode: str = "exclusive", seed: str = "none",
          aggregate: str = "off", block: tuple[int, ...] = (7,)) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("warp.scan", "int32", block, 1, "any", variant=(
        ("width", str(width)), ("op", op), ("mode", mode), ("seed", seed), ("aggregate", aggregate)))


def test_both_warp_families_are_built(on_a_gpu: cccl.CcclAdapter) -> None:
    assert on_a_gpu.operations >= coopcheck.warp_reduce.OPERATIONS | coopcheck.warp_scan.OPERATIONS


@pytest.mark.parametrize("block", [(1,), (7,), (32,), (49,), (100,), (1024,), (16, 8), (13, 5)])
def test_every_reduce_operator_is_taken_where_every_logical_warp_is_whole(on_a_gpu: cccl.CcclAdapter,
                                                                           block: tuple[int, ...]) -> None:
    for width, op in itertools.product(coopcheck.warp_reduce.WIDTHS, coopcheck.warp_reduce.OPERATORS):
        spec = _reduce(width, op, block=block)
        whole = coopcheck.warp_reduce.whole_logical_warps(spec.threads, width)
        assert on_a_gpu.unsupported_reason(spec) == (None if whole else cccl.WARP_ENTRANT_THREADS), spec
        assert on_a_gpu.unsupported_case(spec, {"lanes": "full"}) is None, spec


@pytest.mark.parametrize(("block", "width"), [
    ((1,), 4),  # one thread of a logical warp of 4 (0 on the H200 for min)
    ((49,), 2),  # the last hardware warp's 17 threads leave lane 48 alone
    ((100,), 8),  # 4 threads in the last hardware warp
    ((32,), 7),  # 28 lanes in four logical warps, then one of 4 (NVIDIA/cccl#858's geometry)
    ((16, 8), 24),  # each hardware warp: 24 lanes, then 8
])
def test_a_block_that_leaves_a_logical_warp_partial_is_declined_in_both_warp_families(
        on_a_gpu: cccl.CcclAdapter, block: tuple[int, ...], width: int) -> None:
    """CUB asks that "the number of entrant threads must be an multiple of" the logical warp width (the WarpReduce and
    WarpScan overviews): a partial logical warp's results are not CUB's to promise. On the H200 cuda.coop returned 0
    in such a warp's first lane for min and matmul (9 pr cases); a sum, whose absent lanes read as its identity,
    passed by that accident."""
    assert on_a_gpu.unsupported_reason(_reduce(width, "min", block=block)) == cccl.WARP_ENTRANT_THREADS
    assert on_a_gpu.unsupported_reason(_scan(width, block=block)) == cccl.WARP_ENTRANT_THREADS


@pytest.mark.parametrize("mode", ["head", "tail"])
def test_a_segmented_reduce_is_declared_not_supported(on_a_gpu: cccl.CcclAdapter, mode: str) -> None:
    for width in (1, 7, 32):
        assert on_a_gpu.unsupported_reason(_reduce(width, "max", mode)) == cccl.WARP_SEGMENTED


@pytest.mark.parametrize(("width", "lanes", "reason"), [
    (32, "full", None),
    (7, "full", None),
    (1, "one", None),  # one lane is every lane of width 1
    (2, "one", cccl.WARP_VALID_ITEMS),
    (16, "one", cccl.WARP_VALID_ITEMS),
    (1, "half", cccl.WARP_VALID_ITEMS),  # 0 lanes
    (8, "half", cccl.WARP_VALID_ITEMS),
    (24, "width-1", cccl.WARP_VALID_ITEMS),
    (1, "width-1", cccl.WARP_VALID_ITEMS),
    (4, "zero", cccl.WARP_VALID_ITEMS),
])
def test_a_reduce_with_fewer_valid_lanes_than_the_width_is_declared_not_supported(
        on_a_gpu: cccl.CcclAdapter, width: int, lanes: str, reason: str | None) -> None:
    assert on_a_gpu.unsupported_case(_reduce(width), {"lanes": lanes}) == reason


def test_the_exclusive_sum_without_seed_or_aggregate_is_taken_at_every_width(on_a_gpu: cccl.CcclAdapter) -> None:
    for width in coopcheck.warp_scan.WIDTHS:
        spec = _scan(width, block=(width,))
        assert on_a_gpu.unsupported_reason(spec) is None, spec
        assert on_a_gpu.unsupported_case(spec, {"init": "none"}) is None


def test_every_other_warp_scan_is_declared_not_supported(on_a_gpu: cccl.CcclAdapter) -> None:
    taken = []
    for op, mode, seed, aggregate in itertools.product(coopcheck.warp_scan.OPERATORS, coopcheck.warp_scan.MODES,
                                                       coopcheck.warp_scan.SEEDS, coopcheck.warp_scan.AGGREGATES):
        reason = on_a_gpu.unsupported_reason(_scan(7, op, mode, seed, aggregate))
        assert reason in (None, cccl.WARP_SCAN_ONE)
        if reason is None:
            taken.append((op, mode, seed, aggregate))
    assert taken == [("sum", "exclusive", "none", "off")]


def test_a_float16_warp_kernel_is_declared_not_supported(on_a_gpu: cccl.CcclAdapter) -> None:
    assert on_a_gpu.unsupported_reason(_reduce(8, block=(32,), dtype="float16")) == cccl.DTYPES_REFUSED["float16"]


@pytest.mark.parametrize("spec", [_reduce(8, "min", "head"), _scan(8, "sum", "inclusive")], ids=["head", "inclusive"])
def test_a_warp_kernel_declared_not_supported_does_not_compile(on_a_gpu: cccl.CcclAdapter,
                                                               spec: coopcheck.KernelSpec) -> None:
    with pytest.raises(NotImplementedError, match="binds"):
        on_a_gpu.compile(spec, arch="sm_90")


def test_the_width_is_part_of_the_kernel_key(on_a_gpu: cccl.CcclAdapter) -> None:
    assert len({on_a_gpu.kernel_key(_reduce(width)) for width in (7, 8)}) == 2
    assert len({on_a_gpu.kernel_key(_scan(width)) for width in (7, 8)}) == 2
