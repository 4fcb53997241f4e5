"""The public factories: static parameters are refused with coop's rule names, before any compile."""

from __future__ import annotations

import coopcheck
import coopcheck_numba
import pytest

FACTORIES = {"block.load": coopcheck_numba.block_load, "block.store": coopcheck_numba.block_store}


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
@pytest.mark.parametrize(
    ("args", "block", "rule"),
    [
        (("int32", 0, "direct"), None, "items_per_thread"),
        (("int32", -2, "striped"), None, "items_per_thread"),
        (("int32", True, "direct"), None, "items_per_thread"),  # bool is not an int here
        (("int32", 4.0, "direct"), None, "items_per_thread"),
        (("int128", 4, "direct"), None, "dtype"),
        (("float32", 4, "blocked"), None, "algorithm"),
        (("int32", 4, "warp_transpose"), (100,), "warp_multiple"),
        (("float32", 2, "warp_transpose"), (5, 3, 2), "warp_multiple"),
    ],
    ids=["ipt-zero", "ipt-negative", "ipt-bool", "ipt-float", "dtype", "algorithm", "warp-100", "warp-5x3x2"],
)
def test_factory_refuses_bad_statics(operation: str, args: tuple, block: tuple | None, rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as refused:
        FACTORIES[operation](*args, block=block)
    assert refused.value.rule == rule


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
@pytest.mark.parametrize("block", [None, (32,), (16, 2), (8, 2, 2)])
def test_warp_transpose_accepts_whole_warps(operation: str, block: tuple[int, ...] | None) -> None:
    assert callable(FACTORIES[operation]("int32", 4, "warp_transpose", block=block))


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
def test_one_device_function_serves_every_block_shape(operation: str) -> None:
    # The block shape is a run-time value: declaring it must not multiply specializations.
    factory = FACTORIES[operation]
    shapes = [factory("float16", 3, "transpose", block=b) for b in ((64,), (16, 4), (4, 4, 4), None)]
    assert all(f is shapes[0] for f in shapes)
    assert factory("float16", 3, "striped") is not shapes[0]


@pytest.mark.parametrize(
    ("dtype", "ipt", "algorithm", "threads", "expected"),
    [
        ("float64", 16, "transpose", 1024, 131072),  # past 48 KiB: the launch must opt in
        ("uint8", 7, "warp_transpose", 96, 672),
        ("int16", 3, "transpose", 30, 180),
        ("int64", 16, "direct", 1024, 0),
        ("int64", 16, "striped", 1024, 0),
        ("int64", 16, "vectorize", 1024, 0),
    ],
)
def test_shared_bytes_is_one_tile_for_the_transposes_only(
    dtype: str, ipt: int, algorithm: str, threads: int, expected: int
) -> None:
    assert coopcheck_numba.shared_bytes(dtype, ipt, algorithm, threads) == expected


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'block_sort'"):
        coopcheck_numba.block_sort  # noqa: B018
