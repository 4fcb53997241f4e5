"""The warp kernels' shuffles, checked on the host: the plan's sources, guards and segment ends are what the DSL
traces, so here they run on NumPy ranks instead.

A lock-step model of each contract kernel (every lane of a hardware warp shuffles at every step, reading the values
its source lanes held before the step; a ballot is the OR of a hardware warp's flags at their lanes) drives them over
the contract's ``pr`` kernel points, and the family's oracle judges what it returns. It checks the geometry, the
sources (each within the lanes that exist of the hardware warp), the guards and the operand order, not the DSL's
lowering (the compile tests and a GPU do that).
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.vocabulary import WARP_SIZE
from coopcheck.warp_reduce import WarpReduceBatch
from coopcheck.warp_scan import WarpScanBatch
from coopcheck_cutlass.warp_plan import (
    Arithmetic,
    WarpPlan,
    WarpReducePlan,
    WarpScanPlan,
    warp_reduce_plan,
    warp_scan_plan,
)

from harness.cases import kernel_points
from harness.contracts import load_contracts
from harness.oracles.values import raw_view

CONTRACTS = {c.id: c for c in load_contracts()}
#: The plans' index arithmetic on NumPy arrays.
HOST = Arithmetic(minimum=np.minimum, unsigned=np.uint32, popcount=np.bitwise_count)
#: ``operate(op, a, b)``: the device operators on NumPy arrays (the ``operate`` fixture).
Operate = Any


class Warps:
    """The threads of every block in lock-step (row: block, column: rank) and the shuffles of their hardware warps."""

    def __init__(self, plan: WarpPlan, n_blocks: int) -> None:
        self.plan = plan
        self.rank = np.broadcast_to(np.arange(plan.threads), (n_blocks, plan.threads))
        self.row = np.broadcast_to(np.arange(n_blocks)[:, None], self.rank.shape)

    def shuffle(self, value: np.ndarray, source: Any) -> np.ndarray:
        """Every lane's read of hardware lane ``source`` of its hardware warp, which must exist there."""
        lanes = np.broadcast_to(source, self.rank.shape)
        exist = self.plan.hardware_lanes(self.rank, HOST)
        assert ((lanes >= 0) & (lanes < exist)).all(), f"a shuffle from a lane that does not exist in {self.plan}"
        return value[self.row, self.rank - self.rank % WARP_SIZE + lanes]

    def ballot(self, flags: np.ndarray) -> np.ndarray:
        """Every lane's ballot of its hardware warp: bit l set where lane l's flag is."""
        n, threads = self.rank.shape
        warps = -(-threads // WARP_SIZE)
        bits = np.zeros((n, warps * WARP_SIZE), np.uint32)
        bits[:, :threads] = (flags != 0).astype(np.uint32) << (self.rank % WARP_SIZE).astype(np.uint32)
        words = np.bitwise_or.reduce(bits.reshape(n, warps, WARP_SIZE), axis=2)
        return words[:, self.rank[0] // WARP_SIZE]  # type: ignore[no-any-return]


def simulate_reduce(plan: WarpReducePlan, inplace: bool, batch: WarpReduceBatch, operate: Operate) -> np.ndarray:
    """``dst`` of the Warp Reduce kernel as :mod:`coopcheck_cutlass.warp_reduce` runs it: each lane's segment end,
    then per offset a shuffle and op(its own, the read) where the guard holds; every thread's value, then its seen
    flag."""
    warps = Warps(plan, batch.n_blocks)
    rank, shape = warps.rank, warps.rank.shape
    value = np.asarray(batch.items).reshape(shape).copy()
    sentinel = np.broadcast_to(raw_view(np.asarray(batch.sentinel))[:, None], shape)
    seen = np.zeros(shape, dtype=bool)
    if plan.mode == "reduce":
        end = plan.valid_end(rank, np.asarray(batch.valid).astype(np.int64)[:, None], HOST)
    else:
        end = plan.flagged_end(rank, warps.ballot(np.asarray(batch.flags).reshape(shape)), HOST)
    for offset in plan.offsets:
        read = warps.shuffle(value, plan.source(rank, offset, HOST))
        at = np.broadcast_to(plan.takes(rank, end, offset), shape)
        earlier, later = plan.operands(value[at], read[at])
        if plan.op == "first":
            seen[at] |= (raw_view(earlier) == sentinel[at]) | (raw_view(later) == sentinel[at])
        value[at] = operate(plan.op, earlier, later)
    return np.hstack([value, seen.astype(value.dtype)]).reshape(-1)


def simulate_scan(plan: WarpScanPlan, inplace: bool, batch: WarpScanBatch, operate: Operate) -> np.ndarray:
    """``dst`` of the Warp Scan kernel as :mod:`coopcheck_cutlass.warp_scan` runs it: per offset a shuffle and
    op(the read, its own) where the guard holds; the aggregate from the logical warp's last lane; an exclusive scan's
    left neighbour (lane 0: the seed, or 0); the seed left of the scan. Every thread's scan, then (aggregate on) its
    aggregate."""
    warps = Warps(plan, batch.n_blocks)
    rank, shape = warps.rank, warps.rank.shape
    value = np.asarray(batch.items).reshape(shape).copy()
    seed = np.broadcast_to(np.asarray(batch.initial)[:, None], shape)

    def prefixed(scanned: np.ndarray) -> np.ndarray:
        return operate(plan.op, seed, scanned) if plan.seeded else scanned

    for offset in plan.offsets:
        read = warps.shuffle(value, plan.source(rank, offset, HOST))
        at = np.broadcast_to(plan.takes(rank, offset), shape)
        value[at] = operate(plan.op, *plan.operands(value[at], read[at]))
    aggregate = warps.shuffle(value, plan.last_lane(rank, HOST))
    if plan.inclusive:
        value = prefixed(value)
    else:
        left = warps.shuffle(value, plan.source(rank, 1, HOST))
        first = seed if plan.seeded else np.zeros_like(value)
        value = np.where(np.broadcast_to(plan.takes(rank, 1), shape), prefixed(left), first)
    outputs = [value, aggregate] if plan.aggregate == "on" else [value]
    return np.hstack(outputs).reshape(-1)


def _point_id(point: tuple[tuple[str, Any], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in point)


REDUCE_POINTS = kernel_points(CONTRACTS["warp.reduce"], "pr")


@pytest.mark.parametrize("point", REDUCE_POINTS, ids=[_point_id(p) for p in REDUCE_POINTS])
def test_the_reduce_plan_reduces_every_pr_kernel_point_as_the_oracle_expects(
        point: tuple[tuple[str, Any], ...], plan_failures: Any, operate: Operate) -> None:
    failures = plan_failures(CONTRACTS["warp.reduce"], point, warp_reduce_plan,
                             partial(simulate_reduce, operate=operate))
    assert not failures, "\n".join(failures[:6])


def test_the_reduce_pr_points_cover_every_width_operator_mode_and_block() -> None:
    for axis in ("width", "op", "mode", "block"):
        assert {dict(p)[axis] for p in REDUCE_POINTS} == set(CONTRACTS["warp.reduce"].axes[axis]), axis


SCAN_POINTS = kernel_points(CONTRACTS["warp.scan"], "pr")


@pytest.mark.parametrize("point", SCAN_POINTS, ids=[_point_id(p) for p in SCAN_POINTS])
def test_the_scan_plan_scans_every_pr_kernel_point_as_the_oracle_expects(
        point: tuple[tuple[str, Any], ...], plan_failures: Any, operate: Operate) -> None:
    failures = plan_failures(CONTRACTS["warp.scan"], point, warp_scan_plan, partial(simulate_scan, operate=operate))
    assert not failures, "\n".join(failures[:6])


def test_the_scan_pr_points_cover_every_width_operator_mode_seed_aggregate_and_block() -> None:
    for axis in ("width", "op", "mode", "seed", "aggregate", "block"):
        assert {dict(p)[axis] for p in SCAN_POINTS} == set(CONTRACTS["warp.scan"].axes[axis]), axis


def test_a_scan_reads_down_to_its_logical_warps_lane_0_at_most() -> None:
    plan = warp_scan_plan(coopcheck.KernelSpec("warp.scan", "int32", (49,), 1, "any", variant=(
        ("width", "7"), ("op", "sum"), ("mode", "inclusive"), ("seed", "none"), ("aggregate", "on"))))
    rank = np.arange(28, 36)
    assert plan.source(rank, 4, HOST).tolist() == [28, 28, 28, 28, 0, 0, 0, 0]
    assert plan.takes(rank, 4).tolist() == [False] * 8
    assert plan.last_lane(rank, HOST).tolist() == [31] * 4 + [6] * 4  # a partial logical warp ends its hardware warp


def _reduce_spec(width: int, block: tuple[int, ...] = (49,), mode: str = "reduce") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("warp.reduce", "int32", block, 1, "any",
                                variant=(("width", str(width)), ("op", "sum"), ("mode", mode)))


def test_the_geometry_cuts_each_hardware_warp_from_its_lane_0() -> None:
    plan = warp_reduce_plan(_reduce_spec(7, (38,)))
    rank = np.arange(38)
    assert plan.lane(rank)[26:38].tolist() == [5, 6, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5]
    assert plan.present(rank, HOST)[26:38].tolist() == [7, 7, 4, 4, 4, 4, 6, 6, 6, 6, 6, 6]
    assert plan.member_mask(rank, HOST)[[0, 37]].tolist() == [0xFFFFFFFF, 0x3F]
    assert plan.offsets == (1, 2, 4) and warp_reduce_plan(_reduce_spec(1)).offsets == ()


@pytest.mark.parametrize(("mode", "flags", "ends"), [
    ("head", [0, 0, 1, 0, 0, 1, 0], [1, 1, 4, 4, 4, 6, 6]),
    ("tail", [0, 0, 1, 0, 0, 1, 0], [2, 2, 2, 5, 5, 5, 6]),
    ("tail", [1, 1, 1, 1, 1, 1, 1], [0, 1, 2, 3, 4, 5, 6]),
    ("head", [0] * 7, [6] * 7),
])
def test_a_segment_ends_before_the_next_head_or_at_the_next_tail(mode: str, flags: list[int],
                                                                 ends: list[int]) -> None:
    plan = warp_reduce_plan(_reduce_spec(7, (7,), mode))
    rank = np.arange(7)
    bits = np.uint32(sum(f << lane for lane, f in enumerate(flags)))
    assert plan.flagged_end(rank, bits, HOST).tolist() == ends


# -- the model bites: plans with one decision flipped fail the oracle --------------------------------------------


class _ReduceSourcesAPowerOfTwoApart(WarpReducePlan):
    def source(self, rank: Any, offset: int, arith: Arithmetic) -> Any:
        """Lanes of a logical warp cut at the next power of two (CUB's shfl path for a power of two only)."""
        span = 1 << (self.width - 1).bit_length()
        return arith.minimum(rank % WARP_SIZE + offset, rank % WARP_SIZE - rank % WARP_SIZE % span + span - 1)


class _ReduceOperandsSwapped(WarpReducePlan):
    def operands(self, own: Any, read: Any) -> tuple[Any, Any]:
        return read, own  # the higher lane's partial first


class _ScanSourcesAPowerOfTwoApart(WarpScanPlan):
    def lane(self, rank: Any) -> Any:
        """Logical warps cut at the next power of two (WarpScanShfl's geometry for a power of two only)."""
        return rank % WARP_SIZE % (1 << (self.width - 1).bit_length())


class _ScanOperandsSwapped(WarpScanPlan):
    def operands(self, own: Any, read: Any) -> tuple[Any, Any]:
        return own, read  # the lower lane's partial last


class _ScanAggregateFromTheHardwareWarp(WarpScanPlan):
    def last_lane(self, rank: Any, arith: Arithmetic) -> Any:
        return self.hardware_lanes(rank, arith) - 1


class _ReduceValidIgnored(WarpReducePlan):
    def valid_end(self, rank: Any, valid: Any, arith: Arithmetic) -> Any:
        return self.present(rank, arith) - 1  # invalid lanes reduced too (NVIDIA/cub#74)


class _ReduceHeadsReadAsTails(WarpReducePlan):
    def flagged_end(self, rank: Any, flags: Any, arith: Arithmetic) -> Any:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return WarpReducePlan(**{**fields, "mode": "tail"}).flagged_end(rank, flags, arith)


MUTANTS = {
    "shuffle sources a power of two apart": (_ReduceSourcesAPowerOfTwoApart, (("block", "49"), ("width", "7"))),
    "operands swapped": (_ReduceOperandsSwapped, (("op", "matmul"),)),
    "valid_items ignored": (_ReduceValidIgnored, ()),
    "head flags read as tails": (_ReduceHeadsReadAsTails, (("mode", "head"),)),
}


SCAN_MUTANTS = {
    "logical warps a power of two wide": (_ScanSourcesAPowerOfTwoApart, (("block", "49"), ("width", "7"))),
    "operands swapped": (_ScanOperandsSwapped, (("op", "matmul"),)),
    "the aggregate from the hardware warp's last lane": (_ScanAggregateFromTheHardwareWarp, (("aggregate", "on"),)),
}


@pytest.mark.parametrize("mutant", SCAN_MUTANTS)
def test_a_scan_plan_with_one_decision_flipped_fails_the_oracle(mutant: str, plan_failures: Any,
                                                                operate: Operate) -> None:
    kind, where = SCAN_MUTANTS[mutant]
    base = {"dtype": "int32", "block": "100", "ipt": 1, "alg": "any", "width": "8", "op": "sum",
            "mode": "exclusive", "seed": "initial", "aggregate": "off"}
    point = tuple({**base, **dict(where)}.items())
    contract, model = CONTRACTS["warp.scan"], partial(simulate_scan, operate=operate)
    assert plan_failures(contract, point, warp_scan_plan, model) == []
    assert plan_failures(contract, point, warp_scan_plan, model, kind), f"{mutant}: the oracle accepted it"


@pytest.mark.parametrize("mutant", MUTANTS)
def test_a_reduce_plan_with_one_decision_flipped_fails_the_oracle(mutant: str, plan_failures: Any,
                                                                   operate: Operate) -> None:
    kind, where = MUTANTS[mutant]
    base = {"dtype": "int32", "block": "100", "ipt": 1, "alg": "any", "width": "8", "op": "sum", "mode": "reduce"}
    point = tuple({**base, **dict(where)}.items())
    contract = CONTRACTS["warp.reduce"]
    model = partial(simulate_reduce, operate=operate)
    assert plan_failures(contract, point, warp_reduce_plan, model) == []
    assert plan_failures(contract, point, warp_reduce_plan, model, kind), f"{mutant}: the oracle accepted it"
