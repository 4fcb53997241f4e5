"""The contract kernels, launched through the adapter, against a NumPy reading of the batched ABI.

One launch per kernel: its blocks are the cases (valid_items 0 / 1 / partial / tile-1 / tile x
offset zero / aligned / misaligned x, for Load, with and without oob_default). Payloads and
destinations start as per-slot sentinels (an odd-multiplier hash of the slot, so no two slots in
a window of 256 share one), data is random bits, and every comparison is bit for bit. Two more
kernels exchange more than the 48 KiB of dynamic shared memory a launch gets without opting in.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import coopcheck
import numpy as np
import pytest

#: (algorithm, dtype, block, items_per_thread): every algorithm on 1-D, 2-D and 3-D blocks, every
#: dtype, block sizes that are and are not warp multiples, wide and scalar-only vectorize.
KERNELS = [
    ("direct", "uint8", (5, 3, 2), 3),
    ("direct", "float64", (16, 4), 1),
    ("direct", "int16", (32,), 16),
    ("striped", "int8", (8, 2, 2), 4),
    ("striped", "float16", (5, 3, 2), 7),
    ("striped", "uint64", (64,), 2),
    ("vectorize", "int32", (32,), 4),  # 16-byte accesses
    ("vectorize", "uint8", (4, 4, 4), 16),  # 16-byte accesses, 3-D
    ("vectorize", "float16", (5, 3, 2), 2),  # 4-byte accesses, 30 threads
    ("vectorize", "int64", (16, 4), 3),  # no wide access: always the scalar path
    ("transpose", "float32", (5, 3, 2), 3),
    ("transpose", "uint16", (16, 4), 8),
    ("transpose", "int64", (8, 2, 2), 1),
    ("warp_transpose", "uint32", (16, 4), 3),
    ("warp_transpose", "float64", (8, 2, 2), 4),
    ("warp_transpose", "int8", (64,), 16),
]
#: Transposes whose scratch passes the 48 KiB a launch gets without opting in (128 and 64 KiB).
LARGE_SCRATCH = [("transpose", "float64", (1024,), 16), ("warp_transpose", "uint64", (32, 32), 8)]
WIDEST = 16  # bytes: the "aligned" offset keeps the widest access aligned


def _specs(operation: str, kernels: list[tuple[str, str, tuple[int, ...], int]]) -> list[coopcheck.KernelSpec]:
    return [coopcheck.KernelSpec(operation, dtype, block, ipt, alg) for alg, dtype, block, ipt in kernels]


def _id(spec: coopcheck.KernelSpec) -> str:
    return coopcheck.kernel_symbol(spec, include_block=True)


@dataclass(frozen=True)
class Case:
    """One block of the launch."""

    valid: int
    offset: int
    oob: bool

    def label(self, spec: coopcheck.KernelSpec) -> str:
        text = f"valid={self.valid}/{spec.tile},offset={self.offset}"
        return text + (",oob=value" if self.oob else "") if spec.operation == "block.load" else text


def _cases(spec: coopcheck.KernelSpec) -> list[Case]:
    tile, itemsize = spec.tile, np.dtype(spec.dtype).itemsize
    valid = (0, 1, tile // 3 + 1, tile - 1, tile)
    offsets = (0, WIDEST // itemsize if itemsize < WIDEST else 2, 1)  # zero, aligned, misaligned
    oobs = (False, True) if spec.operation == "block.load" else (False,)
    return [Case(v, o, d) for v, o, d in product(valid, offsets, oobs)]


def _region(spec: coopcheck.KernelSpec) -> int:
    # A multiple of 16 elements, so that every block's region starts as aligned as the allocation.
    return -(-(spec.tile + 2 * WIDEST) // 16) * 16


def _bits(dtype: str) -> np.dtype:
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def _random(spec: coopcheck.KernelSpec, n: int, seed: int) -> np.ndarray:
    bits = _bits(spec.dtype)
    return np.random.default_rng(seed).integers(0, np.iinfo(bits).max, n, dtype=bits, endpoint=True)


def _sentinels(spec: coopcheck.KernelSpec, n: int) -> np.ndarray:
    hashed = np.arange(n, dtype=np.uint64) * np.uint64(2654435761) + np.uint64(12345)  # wraps mod 2**64
    return hashed.astype(_bits(spec.dtype))  # keeps the low bits


def _tile_index(spec: coopcheck.KernelSpec) -> np.ndarray:
    """Tile index of each payload slot ``rank*ipt + i``: blocked, or striped for ``striped``."""
    rank, item = np.divmod(np.arange(spec.tile), spec.items_per_thread)
    return rank + item * spec.threads if spec.algorithm == "striped" else rank * spec.items_per_thread + item


def _assert_bits_equal(spec: coopcheck.KernelSpec, cases: list[Case], got: np.ndarray, want: np.ndarray,
                       per_block: int) -> None:
    got, want = got.view(want.dtype), want
    wrong = np.flatnonzero(got != want)
    if wrong.size:
        lines = [f"[{i}] (block {i // per_block}: {cases[i // per_block].label(spec)}) "
                 f"= {got[i]:#x}, should be {want[i]:#x}" for i in wrong[:8]]
        pytest.fail(f"{_id(spec)}: {wrong.size} wrong element(s)\n" + "\n".join(lines), pytrace=False)


def _check_load(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec, cases: list[Case]) -> None:
    tile, region = spec.tile, _region(spec)
    src = _random(spec, len(cases) * region, seed=1)
    init = _sentinels(spec, len(cases) * tile)
    oob = _random(spec, len(cases), seed=2)
    batch = coopcheck.LoadBatch(
        src=src.view(spec.dtype), init=init.view(spec.dtype), region=region,
        valid=np.array([c.valid for c in cases], np.int32),
        offset=np.array([c.offset for c in cases], np.int64),
        has_oob=np.array([c.oob for c in cases], np.int32), oob=oob.view(spec.dtype),
    )
    got = adapter.launch(adapter.compile(spec, arch="sm_90"), spec, batch)

    want = init.copy()
    index = _tile_index(spec)
    for b, case in enumerate(cases):
        slots = want[b * tile:(b + 1) * tile]
        valid = index < case.valid
        slots[valid] = src[b * region + case.offset + index[valid]]
        if case.oob:
            slots[~valid] = oob[b]
    _assert_bits_equal(spec, cases, np.asarray(got), want, tile)


def _check_store(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec, cases: list[Case]) -> None:
    tile, region = spec.tile, _region(spec)
    items = _random(spec, len(cases) * tile, seed=3)
    dst = _sentinels(spec, len(cases) * region)
    batch = coopcheck.StoreBatch(
        items=items.view(spec.dtype), dst=dst.view(spec.dtype).copy(), region=region,
        valid=np.array([c.valid for c in cases], np.int32),
        offset=np.array([c.offset for c in cases], np.int64),
    )
    got = adapter.launch(adapter.compile(spec, arch="sm_90"), spec, batch)

    want = dst.copy()
    index = _tile_index(spec)
    for b, case in enumerate(cases):
        valid = index < case.valid
        want[b * region + case.offset + index[valid]] = items[b * tile:(b + 1) * tile][valid]
    _assert_bits_equal(spec, cases, np.asarray(got), want, region)


@pytest.mark.parametrize("spec", _specs("block.load", KERNELS))
def test_load(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec) -> None:
    _check_load(adapter, spec, _cases(spec))


@pytest.mark.parametrize("spec", _specs("block.store", KERNELS))
def test_store(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec) -> None:
    _check_store(adapter, spec, _cases(spec))


@pytest.mark.parametrize("spec", _specs("block.load", LARGE_SCRATCH) + _specs("block.store", LARGE_SCRATCH))
def test_scratch_past_48_kib(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec) -> None:
    # On a GPU the launch must opt in to this much dynamic shared memory (the simulator has no limit).
    cases = [Case(spec.tile, 0, False), Case(spec.tile // 3 + 1, 1, spec.operation == "block.load"), Case(0, 0, False)]
    (_check_load if spec.operation == "block.load" else _check_store)(adapter, spec, cases)
