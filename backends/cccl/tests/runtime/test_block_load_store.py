"""cuda.coop's Load/Store in the contract kernels on a GPU (the root conftest's ``adapter`` fails without one),
against the NumPy oracle of the ABI.

One batched launch per kernel holds full tiles (all that 1.1.1 binds) at offsets 0, 32 (aligned) and 1, 3
(misaligned: vectorize must fall back), each block with its own data; a second launch with other data
reuses the same compile. Then the engine runs one kernel point of the shipped contract: its full-tile cases
without oob_default pass, the others are NotSupported with the reason, none launched.
"""

from __future__ import annotations

from pathlib import Path

import coopcheck
import numpy as np
import pytest
from coopcheck_cccl import adapter as cccl

from harness.cases import point_cases
from harness.contracts import load_contracts
from harness.engine import Engine
from harness.journal import LaunchRecord, Record
from harness.oracles.block_load_store import block_failures, region, snapshot
from harness.oracles.values import pattern
from harness.statuses import Status

ARCH = "sm_90"
OFFSETS = (0, 32, 1, 3)
MAX_REPORTED = 5
#: (algorithm, dtype, block, items_per_thread): every algorithm on 1-D, 2-D and 3-D blocks, 1- to 8-byte
#: items, warp multiples and not, wide and scalar-only vectorize.
KERNELS = [
    ("direct", "uint8", (5, 3, 2), 3),
    ("direct", "float64", (16, 4), 1),
    ("striped", "int8", (8, 2, 2), 4),
    ("striped", "uint64", (64,), 2),
    ("vectorize", "int32", (32,), 4),
    ("vectorize", "uint8", (4, 4, 4), 16),
    ("vectorize", "int64", (16, 4), 3),
    ("transpose", "float32", (5, 3, 2), 3),
    ("transpose", "uint16", (16, 4), 8),
    ("warp_transpose", "uint32", (16, 4), 3),
    ("warp_transpose", "int16", (64,), 16),
]
#: TempStorage past the 48 KiB a launch gets without opting in (128 and 64 KiB of dynamic shared memory).
LARGE_SCRATCH = [("transpose", "float64", (1024,), 16), ("warp_transpose", "uint64", (32, 32), 8)]


def _specs(kernels: list[tuple[str, str, tuple[int, ...], int]]) -> list[coopcheck.KernelSpec]:
    return [coopcheck.KernelSpec(op, dtype, block, ipt, alg)
            for op in coopcheck.OPERATIONS for alg, dtype, block, ipt in kernels]


def _batch(spec: coopcheck.KernelSpec, seed: int) -> coopcheck.LoadBatch | coopcheck.StoreBatch:
    reg, seeds, n = region(spec), [seed * 1000 + b for b in range(len(OFFSETS))], len(OFFSETS)
    valid, offset = np.full(n, spec.tile, np.int32), np.array(OFFSETS, np.int64)
    if spec.operation == "block.load":
        return coopcheck.LoadBatch(
            src=np.concatenate([pattern(spec.dtype, reg, "src", s) for s in seeds]),
            init=np.concatenate([pattern(spec.dtype, spec.tile, "sentinel", s) for s in seeds]),
            valid=valid, offset=offset, has_oob=np.zeros(n, np.int32),
            oob=np.concatenate([pattern(spec.dtype, 1, "oob", s) for s in seeds]), region=reg,
        )
    return coopcheck.StoreBatch(
        items=np.concatenate([pattern(spec.dtype, spec.tile, "src", s) for s in seeds]),
        dst=np.concatenate([pattern(spec.dtype, reg, "sentinel", s) for s in seeds]),
        valid=valid, offset=offset, region=reg,
    )


def _check(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec, seed: int) -> None:
    compiled = adapter.compile(spec, arch=ARCH)
    batch = _batch(spec, seed)
    before = snapshot(batch)
    failures = block_failures(spec, before, adapter.launch(compiled, spec, batch))
    assert not failures, f"{coopcheck.kernel_symbol(spec, include_block=True)}: " + "\n".join(failures[:MAX_REPORTED])


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("spec", _specs(KERNELS))
def test_the_kernel_matches_the_oracle(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec, seed: int) -> None:
    _check(adapter, spec, seed)


@pytest.mark.parametrize("spec", _specs(LARGE_SCRATCH))
def test_scratch_past_48_kib(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec) -> None:
    compiled = adapter.compile(spec, arch=ARCH)
    assert compiled.shared_bytes > 48 * 1024  # type: ignore[attr-defined]
    _check(adapter, spec, 3)


@pytest.mark.usefixtures("adapter")  # a GPU: the factories compile for its device
def test_a_second_compile_costs_no_nvrtc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh adapter (as in a new process) finds the LTO-IR on disk: cuda.coop's NVRTC step is not called."""
    from cuda.coop._experimental import _nvrtc

    monkeypatch.setenv("COOP_CCCL_CACHE_DIR", str(tmp_path))
    compiles: list[int] = []
    original = _nvrtc.compile

    def counted(**kwargs: object) -> object:
        compiles.append(1)
        return original(**kwargs)

    monkeypatch.setattr(_nvrtc, "compile", counted)
    spec = coopcheck.KernelSpec("block.load", "int32", (32, 4), 2, "warp_transpose")
    cccl.CcclAdapter().compile(spec, arch=ARCH)
    assert len(compiles) == 1 and len(list(tmp_path.glob("*.ltoir"))) == 1
    cccl.CcclAdapter().compile(spec, arch=ARCH)
    assert len(compiles) == 1


def test_the_engine_runs_the_full_tiles_of_a_contract_kernel_point(adapter: coopcheck.Adapter) -> None:
    contract = next(c for c in load_contracts() if c.operation == "block.load")
    point = (("dtype", "int32"), ("block", "16x8"), ("ipt", 4), ("alg", "transpose"))
    cases = point_cases(contract, "cccl", point)
    emitted: list[Record] = []
    records = Engine(adapter, "gpu", 1, emitted.append).run_group(cases[0].spec, cases)
    by_status: dict[Status, set[str]] = {}
    for record in records:
        by_status.setdefault(record.status, set()).add(record.id)
    full = {c.id for c in cases if c["valid"] == "full" and c["oob"] == "none"}
    assert by_status.pop(Status.PASS) == full and len(full) == len(contract.axes["offset"])
    assert by_status.pop(Status.NOT_SUPPORTED) == {c.id for c in cases} - full and not by_status
    assert {r.detail for r in records if r.status is Status.NOT_SUPPORTED} == {cccl.PARTIAL_TILE, cccl.OOB_DEFAULT}
    launched = {i for r in emitted if isinstance(r, LaunchRecord) for i in r.cases}
    assert launched == full
