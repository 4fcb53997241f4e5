"""What the contract kernels take: a batch of full tiles without oob_default, or a refusal before any launch."""

from __future__ import annotations

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
