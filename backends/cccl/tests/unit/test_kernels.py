"""What the contract kernels take: a batch of full tiles without oob_default, or a refusal before any launch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import SimpleNamespace

import coopcheck
import numpy as np
import pytest
from coopcheck_cccl import kernels

SPEC = coopcheck.KernelSpec("block.load", "int32", (16, 8), 4, "striped")
TILE = SPEC.tile


def _load(valid: list[int], has_oob: list[int]) -> coopcheck.LoadBatch:
    n = len(valid)
    return coopcheck.LoadBatch(src=np.zeros(n * TILE, np.int32), init=np.zeros(n * TILE, np.int32),
                               valid=np.array(valid, np.int32), offset=np.zeros(n, np.int64),
                               has_oob=np.array(has_oob, np.int32), oob=np.zeros(n, np.int32), region=TILE)


def _store(valid: list[int]) -> coopcheck.StoreBatch:
    n = len(valid)
    return coopcheck.StoreBatch(items=np.zeros(n * TILE, np.int32), dst=np.zeros(n * TILE, np.int32),
                                valid=np.array(valid, np.int32), offset=np.zeros(n, np.int64), region=TILE)


@pytest.mark.parametrize("batch", [_load([TILE, TILE], [0, 0]), _store([TILE])], ids=["load", "store"])
def test_full_tiles_are_taken(batch: coopcheck.LoadBatch | coopcheck.StoreBatch) -> None:
    kernels.full_tiles_only(SPEC, batch)


@pytest.mark.parametrize(("batch", "message"), [
    (_load([TILE, TILE - 1], [0, 0]), r"block 1 asks for 511 valid items: the cccl kernels take full tiles \(512\)"),
    (_store([0]), r"block 0 asks for 0 valid items"),
    (_load([TILE, TILE], [0, 1]), r"a block asks for an oob_default: the cccl kernels take none"),
], ids=["partial-load", "empty-store", "oob-default"])
def test_a_batch_the_kernels_cannot_honour_is_refused_before_any_launch(
        batch: coopcheck.LoadBatch | coopcheck.StoreBatch, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        kernels.launch(None, SPEC, batch, 0)  # type: ignore[arg-type]  # refused before the kernel is touched


def _reduce_batch(ipt: int, valid: list[int]) -> coopcheck.ReduceBatch:
    n, tile = len(valid), 64 * ipt
    return coopcheck.ReduceBatch(items=np.zeros(n * tile, np.int32), valid=np.array(valid, np.int32),
                                 sentinel=np.zeros(n, np.int32), tile=tile)


def test_reduce_takes_partial_tiles_with_one_item_a_thread() -> None:
    spec = coopcheck.KernelSpec("block.reduce", "int32", (64,), 1, "raking", variant=(("op", "sum"),))
    kernels.full_tiles_only(spec, _reduce_batch(1, [64, 0, 1, 63]))


def test_a_reduce_batch_of_partial_tiles_of_several_items_a_thread_is_refused_before_any_launch() -> None:
    spec = coopcheck.KernelSpec("block.reduce", "int32", (64,), 4, "raking", variant=(("op", "sum"),))
    kernels.full_tiles_only(spec, _reduce_batch(4, [256, 256]))
    with pytest.raises(ValueError, match=r"block 1 asks for 255 valid items: the cccl kernels take full tiles \(256\)"):
        kernels.launch(None, spec, _reduce_batch(4, [256, 255]), 0)  # type: ignore[arg-type]


def _warp_spec(width: int, block: tuple[int, ...]) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("warp.reduce", "int32", block, 1, "any",
                                variant=(("width", str(width)), ("op", "sum"), ("mode", "reduce")))


def _warp_batch(threads: int, valid: list[int]) -> coopcheck.WarpReduceBatch:
    n = len(valid)
    return coopcheck.WarpReduceBatch(items=np.zeros(n * threads, np.int32), flags=np.zeros(n * threads, np.uint8),
                                     valid=np.array(valid, np.int32), sentinel=np.zeros(n, np.int32), threads=threads)


def test_a_warp_reduce_batch_with_fewer_valid_lanes_than_the_width_is_refused_before_any_launch() -> None:
    spec = _warp_spec(7, (49,))
    kernels.every_lane_valid(spec, _warp_batch(49, [7, 7]))
    with pytest.raises(ValueError, match=r"block 1 asks for 3 valid lanes: .* every lane of the width \(7\) only"):
        kernels.launch(None, spec, _warp_batch(49, [7, 3]), 0)  # type: ignore[arg-type]


@pytest.mark.parametrize(("width", "block", "warps"), [
    (32, (1024,), 32), (7, (49,), 8), (24, (100,), 7), (1, (13, 5), 65), (8, (7,), 1), (16, (100,), 7)])
def test_every_logical_warp_of_a_block_has_its_own_temp_storage(width: int, block: tuple[int, ...],
                                                                warps: int) -> None:
    spec = _warp_spec(width, block)
    assert kernels.logical_warps_in_block(spec) == warps
    assert kernels.shared_bytes(spec, 1) == 16 * warps  # an empty TempStorage still takes an aligned slot
    assert kernels.shared_bytes(spec, 17) == 32 * warps


def test_a_block_primitive_takes_its_own_temp_storage_bytes() -> None:
    assert kernels.shared_bytes(SPEC, 1234) == 1234


class _SmallGridDispatcher:
    """A numba dispatcher as a batched launch configures it: numba warns of the grid under 128 blocks."""

    def __getitem__(self, config: object) -> Callable[..., None]:
        warnings.warn("\x1b[1mGrid size 2 will likely result in GPU under-utilization due to low occupancy.\x1b[0m",
                      UserWarning, stacklevel=2)
        return lambda *arrays: None


class _HostArrays:
    """``numba.cuda`` for a launch without a GPU: device arrays are host arrays."""

    @staticmethod
    def to_device(array: np.ndarray) -> np.ndarray:
        return array

    @staticmethod
    def device_array(size: int, dtype: np.dtype) -> SimpleNamespace:
        return SimpleNamespace(copy_to_host=lambda: np.zeros(size, dtype))


def test_a_launch_keeps_numbas_small_grid_warning_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """One block per case instance is the grid the harness asks for: a GPU lane printed numba's warning for every
    cccl launch."""
    monkeypatch.setattr(kernels, "cuda", _HostArrays)
    kernel = kernels.Kernel(_SmallGridDispatcher(), None)  # type: ignore[arg-type]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = kernels.launch(kernel, SPEC, _load([TILE, TILE], [0, 0]), 0)
    assert [str(w.message) for w in caught] == []
    assert out.shape == (2 * TILE,)
