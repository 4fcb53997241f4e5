"""cuda.coop's block scans with the prefix callback in the contract kernel on a GPU (the root conftest's ``adapter``
fails without one), judged by the Block Scan oracle as the engine launches them.

Kernel points of the shipped contract with seed prefix, the one cuda.coop 1.1.1 can give the ABI's outputs for:
every algorithm, operator (sum through make_*_sum, the others through make_*_scan) and mode, one item a thread (the
scalar overloads) and several, the lone thread, a warp, the partial last warps of 65 and 13x5, 1024 threads, 2-D and
3-D blocks, 1- to 8-byte items. Then the engine runs a point of each kind: with seed prefix both seed values pass in
one launch; with seed initial every case is NotSupported with the reason, none launched.
"""

from __future__ import annotations

from typing import Any

import coopcheck
import pytest
from coopcheck_cccl import adapter as cccl

from harness.cases import point_cases
from harness.contracts import load_contracts
from harness.engine import Engine
from harness.journal import LaunchRecord, Record
from harness.oracles.launch import point_failures
from harness.statuses import Status

ARCH = "sm_90"
#: (dtype, block, ipt, algorithm, op, mode)
POINTS = [
    ("int32", "65", 1, "raking", "sum", "inclusive"),
    ("uint8", "13x5", 4, "raking_memoize", "sum", "exclusive"),
    ("float32", "32", 7, "warp_scans", "sum", "inclusive"),
    ("float64", "16x8", 1, "raking", "sum", "exclusive"),
    ("int64", "8x4x2", 2, "warp_scans", "min", "exclusive"),
    ("float32", "65", 1, "raking_memoize", "min", "inclusive"),
    ("float64", "1", 16, "raking", "max", "exclusive"),
    ("uint16", "1024", 2, "warp_scans", "max", "inclusive"),
    ("uint32", "65", 16, "raking", "max", "inclusive"),
    ("int8", "32", 1, "raking_memoize", "matmul", "exclusive"),
    ("uint64", "13x5", 7, "warp_scans", "matmul", "inclusive"),
    ("int16", "1024", 1, "raking", "matmul", "exclusive"),
]


def _contract() -> Any:
    return next(c for c in load_contracts() if c.operation == "block.scan")


def _point(dtype: str, block: str, ipt: int, algorithm: str, op: str, mode: str,
           seed: str = "prefix") -> tuple[tuple[str, Any], ...]:
    return (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", algorithm), ("op", op), ("mode", mode),
            ("seed", seed))


@pytest.mark.parametrize("point", POINTS, ids=lambda p: "-".join(map(str, p)))
def test_the_kernel_point_matches_the_oracle(adapter: coopcheck.Adapter, point: tuple[Any, ...]) -> None:
    """Both seed values (the identity, one drawn per block), each in every data pattern, in one launch."""
    failures = point_failures(adapter, _contract(), _point(*point), 20261203, ARCH)
    assert not failures, f"{point}:\n" + "\n".join(failures[:8])


def _run(adapter: coopcheck.Adapter, point: tuple[tuple[str, Any], ...]) -> tuple[list[Any], list[Record]]:
    cases = point_cases(_contract(), "cccl", point)
    emitted: list[Record] = []
    return Engine(adapter, "gpu", 1, emitted.append).run_group(cases[0].spec, cases), emitted


def test_the_engine_passes_a_prefix_point_in_one_launch(adapter: coopcheck.Adapter) -> None:
    records, emitted = _run(adapter, _point("int32", "16x8", 4, "warp_scans", "sum", "exclusive"))
    assert {r.status for r in records} == {Status.PASS} and len(records) == 2  # init identity and rand
    launches = [r for r in emitted if isinstance(r, LaunchRecord)]
    assert len(launches) == 1 and set(launches[0].cases) == {r.id for r in records}


@pytest.mark.parametrize("seed", ["none", "initial"])
def test_the_engine_declines_a_scan_without_the_prefix_callback(adapter: coopcheck.Adapter, seed: str) -> None:
    records, emitted = _run(adapter, _point("int32", "16x8", 4, "warp_scans", "sum", "exclusive", seed))
    assert records and {(r.status, r.detail) for r in records} == {(Status.NOT_SUPPORTED, cccl.SCAN_AGGREGATE)}
    assert not [r for r in emitted if isinstance(r, LaunchRecord)]
