"""Oracle for block Load and Store: builds one batched launch's inputs and judges each block.

Worked example (Load, 2 threads, ipt=2, striped, valid_items=3, no oob_default): rank 0 owns tile
indices 0 and 2, rank 1 owns 1 and 3, so the payload out is [src[0], src[2], src[1], init[3]]:
slot 3 is invalid and must keep its own earlier value.
"""

from __future__ import annotations

from dataclasses import dataclass

import coop
import numpy as np

from harness.cases import Case
from harness.oracles.values import pattern, raw_view

#: Spare elements per block region: room for the largest offset class (32) plus alignment.
REGION_SLACK = 32
REGION_ALIGN = 16
MAX_DETAIL = 8

PLACED, UNTOUCHED, OOB_FILL, PREFIX, ELSEWHERE = range(5)
CHECK_NAMES = {
    PLACED: "valid-items-placed",
    UNTOUCHED: "invalid-slots-untouched",
    OOB_FILL: "oob-default-fills",
    PREFIX: "valid-prefix-written",
    ELSEWHERE: "nothing-else-written",
}
WHY = {
    PLACED: "valid item",
    UNTOUCHED: "slot left as it was",
    OOB_FILL: "oob_default",
    PREFIX: "valid item stored",
    ELSEWHERE: "element left as it was",
}


@dataclass(frozen=True)
class Violation:
    """One wrong element; ``check`` names the oracle check (contracts map it to rules)."""

    check: str
    index: int
    got: str
    expected: str
    why: str

    def __str__(self) -> str:
        return f"out[{self.index}]={self.got}, but should be {self.expected} ({self.why})"


def region(spec: coop.KernelSpec) -> int:
    """Elements per block region of src (Load) or dst (Store); keeps every block 16-byte aligned."""
    return -(-(spec.tile + REGION_SLACK) // REGION_ALIGN) * REGION_ALIGN


def tile_index(spec: coop.KernelSpec) -> np.ndarray:
    """Tile index of payload slot (rank, i), flattened in slot order rank*ipt + i."""
    ipt, threads = spec.items_per_thread, spec.threads
    rank = np.arange(threads)[:, None]
    item = np.arange(ipt)[None, :]
    idx = rank + item * threads if spec.algorithm == "striped" else rank * ipt + item
    return idx.reshape(-1)


def _batch_columns(cases: list[Case], global_seed: int) -> tuple[np.ndarray, np.ndarray]:
    valid = np.array([c.valid_items(global_seed) for c in cases], dtype=np.int32)
    offset = np.array([c.offset() for c in cases], dtype=np.int64)
    return valid, offset


def build_load(spec: coop.KernelSpec, cases: list[Case], global_seed: int) -> coop.LoadBatch:
    """Inputs of one Load launch, one block per case, every value drawn from the case's seed."""
    seeds = [c.seed(global_seed) for c in cases]
    reg, tile = region(spec), spec.tile
    valid, offset = _batch_columns(cases, global_seed)
    return coop.LoadBatch(
        src=np.concatenate([pattern(spec.dtype, reg, "src", s) for s in seeds]),
        init=np.concatenate([pattern(spec.dtype, tile, "sentinel", s) for s in seeds]),
        valid=valid,
        offset=offset,
        has_oob=np.array([c.has_oob() for c in cases], dtype=np.int32),
        oob=np.concatenate([pattern(spec.dtype, 1, "oob", s) for s in seeds]),
        region=reg,
    )


def build_store(spec: coop.KernelSpec, cases: list[Case], global_seed: int) -> coop.StoreBatch:
    """Inputs of one Store launch; ``dst`` holds per-element sentinels."""
    seeds = [c.seed(global_seed) for c in cases]
    reg, tile = region(spec), spec.tile
    valid, offset = _batch_columns(cases, global_seed)
    return coop.StoreBatch(
        items=np.concatenate([pattern(spec.dtype, tile, "src", s) for s in seeds]),
        dst=np.concatenate([pattern(spec.dtype, reg, "sentinel", s) for s in seeds]),
        valid=valid,
        offset=offset,
        region=reg,
    )


def expected_load(spec: coop.KernelSpec, batch: coop.LoadBatch, block: int) -> tuple[np.ndarray, np.ndarray]:
    """(expected payload of ``block`` in slot order, check id per slot)."""
    tile, reg = spec.tile, batch.region
    idx = tile_index(spec)
    valid = idx < batch.valid[block]
    start = block * reg + int(batch.offset[block])
    src = batch.src[start:start + tile]
    init = batch.init[block * tile:(block + 1) * tile]
    if batch.has_oob[block]:
        fallback, check = np.full(tile, batch.oob[block], dtype=init.dtype), OOB_FILL
    else:
        fallback, check = init, UNTOUCHED
    expected = np.where(valid, src[np.minimum(idx, tile - 1)], fallback)
    return expected, np.where(valid, PLACED, check)


def expected_store(spec: coop.KernelSpec, batch: coop.StoreBatch, block: int,
                   sentinels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(expected dst region of ``block``, check id per element); ``sentinels`` is dst before launch."""
    tile, reg = spec.tile, batch.region
    n_valid, off = int(batch.valid[block]), int(batch.offset[block])
    items = batch.items[block * tile:(block + 1) * tile]
    slot_of_index = np.empty(tile, dtype=np.int64)
    slot_of_index[tile_index(spec)] = np.arange(tile)
    expected = sentinels[block * reg:(block + 1) * reg].copy()
    expected[off:off + n_valid] = items[slot_of_index[:n_valid]]
    checks = np.full(reg, ELSEWHERE)
    checks[off:off + n_valid] = PREFIX
    return expected, checks


@dataclass(frozen=True)
class Judgement:
    """The first few violations of one block, the total count and every check that failed."""

    violations: tuple[Violation, ...]
    total: int
    checks: tuple[str, ...]

    def __bool__(self) -> bool:
        return self.total == 0


def compare(got: np.ndarray, expected: np.ndarray, checks: np.ndarray) -> Judgement:
    """Vectorized bit-exact comparison; per-index detail is built only for mismatches."""
    if got.shape != expected.shape:
        raise ValueError(f"output has shape {got.shape}, expected {expected.shape}")
    bad = np.flatnonzero(raw_view(np.ascontiguousarray(got)) != raw_view(expected))
    details = tuple(
        Violation(CHECK_NAMES[int(checks[i])], int(i), repr(got[i].item()), repr(expected[i].item()),
                  WHY[int(checks[i])])
        for i in bad[:MAX_DETAIL]
    )
    failed = tuple(sorted({CHECK_NAMES[int(c)] for c in np.unique(checks[bad])}))
    return Judgement(details, len(bad), failed)


def judge_load(spec: coop.KernelSpec, batch: coop.LoadBatch, out: np.ndarray, block: int) -> Judgement:
    tile = spec.tile
    expected, checks = expected_load(spec, batch, block)
    return compare(out[block * tile:(block + 1) * tile], expected, checks)


def judge_store(spec: coop.KernelSpec, batch: coop.StoreBatch, sentinels: np.ndarray, out: np.ndarray,
                block: int) -> Judgement:
    reg = batch.region
    expected, checks = expected_store(spec, batch, block, sentinels)
    return compare(out[block * reg:(block + 1) * reg], expected, checks)
