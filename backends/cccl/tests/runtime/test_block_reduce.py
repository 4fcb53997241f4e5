"""cuda.coop's block reduce and sum in the contract kernels on a GPU (the root conftest's ``adapter`` fails without
one), judged by the Block Reduce oracle as the engine launches them.

Kernel points of the shipped contract: every operator (first through a StatefulFunction that records the sentinel)
and algorithm, one item a thread (where every valid_items class runs: the full tile through ``Reduce(item, op)``,
the others through ``Reduce(item, op, num_valid)``) and several (the full tile only), 1-D, 2-D and 3-D blocks and
the partial-warp blocks of NVIDIA/cccl#1902 (65, 13x5). Then the engine runs one kernel point of several items a
thread: its full tile passes, its partial tiles are NotSupported with the reason, none launched.
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
#: (dtype, block, ipt, algorithm, op)
POINTS = [
    ("int32", "65", 1, "raking", "sum"),
    ("uint8", "13x5", 1, "raking", "sum"),
    ("float32", "100", 1, "warp_reductions", "sum"),
    ("float64", "16x8", 4, "raking_commutative_only", "sum"),
    ("int64", "8x4x2", 3, "warp_reductions", "min"),
    ("float32", "65", 1, "raking_commutative_only", "min"),
    ("float64", "7", 1, "warp_reductions", "max"),
    ("uint16", "1024", 2, "raking", "max"),
    ("uint32", "65", 1, "raking", "matmul"),
    ("int8", "32", 16, "warp_reductions", "matmul"),
    ("uint64", "13x5", 1, "warp_reductions", "matmul"),
    ("int16", "65", 1, "raking", "first"),
    ("float32", "100", 1, "warp_reductions", "first"),
    ("uint32", "16x8", 4, "raking", "first"),
]


def _contract() -> Any:
    return next(c for c in load_contracts() if c.operation == "block.reduce")


def _point(dtype: str, block: str, ipt: int, algorithm: str, op: str) -> tuple[tuple[str, Any], ...]:
    return ("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", algorithm), ("op", op)


@pytest.mark.parametrize("point", POINTS, ids=lambda p: "-".join(map(str, p)))
def test_the_kernel_point_matches_the_oracle(adapter: coopcheck.Adapter, point: tuple[Any, ...]) -> None:
    """Every case the adapter takes at the point, each in every data pattern, in one launch."""
    failures = point_failures(adapter, _contract(), _point(*point), 20261203, ARCH)
    assert not failures, f"{point}:\n" + "\n".join(failures[:8])


def test_the_engine_declines_the_partial_tiles_of_several_items_a_thread(adapter: coopcheck.Adapter) -> None:
    contract = _contract()
    cases = point_cases(contract, "cccl", _point("int32", "16x8", 4, "raking", "sum"))
    emitted: list[Record] = []
    records = Engine(adapter, "gpu", 1, emitted.append).run_group(cases[0].spec, cases)
    by_status: dict[Status, set[str]] = {}
    for record in records:
        by_status.setdefault(record.status, set()).add(record.id)
    full = {c.id for c in cases if c["valid"] == "full"}
    assert by_status.pop(Status.PASS) == full and len(full) == 1
    assert by_status.pop(Status.NOT_SUPPORTED) == {c.id for c in cases} - full and not by_status
    assert {r.detail for r in records if r.status is Status.NOT_SUPPORTED} == {cccl.REDUCE_PARTIAL_TILE}
    assert {i for r in emitted if isinstance(r, LaunchRecord) for i in r.cases} == full
