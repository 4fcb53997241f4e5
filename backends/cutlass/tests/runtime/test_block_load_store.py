"""Representative kernels on a GPU against the NumPy oracle of the ABI: one batched launch per kernel
crosses valid_items {0, 1, partial, tile-1, tile} x offset {0, 1 (misaligned), 16} (x oob_default
{none, value} for Load), and a second launch with other data reuses the same compile."""

from __future__ import annotations

import itertools

import coopcheck
import numpy as np
import pytest

from harness.oracles.block_load_store import block_failures, region, snapshot
from harness.oracles.values import pattern

ARCH = "sm_90"
OFFSETS = (0, 1, 16)
MAX_REPORTED = 5


def _valid_classes(tile: int) -> list[int]:
    return sorted({0, 1, tile // 2 + 1, tile - 1, tile})


def _load_batch(spec: coopcheck.KernelSpec, seed: int) -> coopcheck.LoadBatch:
    controls = list(itertools.product(_valid_classes(spec.tile), (0, 1), OFFSETS))
    reg, seeds = region(spec), [seed * 1000 + b for b in range(len(controls))]
    return coopcheck.LoadBatch(
        src=np.concatenate([pattern(spec.dtype, reg, "src", s) for s in seeds]),
        init=np.concatenate([pattern(spec.dtype, spec.tile, "sentinel", s) for s in seeds]),
        valid=np.array([v for v, _, _ in controls], np.int32),
        has_oob=np.array([h for _, h, _ in controls], np.int32),
        offset=np.array([o for _, _, o in controls], np.int64),
        oob=np.concatenate([pattern(spec.dtype, 1, "oob", s) for s in seeds]),
        region=reg,
    )


def _store_batch(spec: coopcheck.KernelSpec, seed: int) -> coopcheck.StoreBatch:
    controls = list(itertools.product(_valid_classes(spec.tile), OFFSETS))
    reg, seeds = region(spec), [seed * 1000 + b for b in range(len(controls))]
    return coopcheck.StoreBatch(
        items=np.concatenate([pattern(spec.dtype, spec.tile, "src", s) for s in seeds]),
        dst=np.concatenate([pattern(spec.dtype, reg, "sentinel", s) for s in seeds]),
        valid=np.array([v for v, _ in controls], np.int32),
        offset=np.array([o for _, o in controls], np.int64),
        region=reg,
    )


@pytest.mark.parametrize("seed", [1, 2])
def test_the_kernel_matches_the_oracle(representative: coopcheck.KernelSpec, seed: int,
                                       adapter: coopcheck.Adapter) -> None:
    spec = representative
    compiled = adapter.compile(spec, arch=ARCH)
    batch = _load_batch(spec, seed) if spec.operation == "block.load" else _store_batch(spec, seed)
    before = snapshot(batch)
    failures = block_failures(spec, before, adapter.launch(compiled, spec, batch))
    assert not failures, f"{compiled.artifacts.kernel_name}: " + "\n".join(failures[:MAX_REPORTED])
