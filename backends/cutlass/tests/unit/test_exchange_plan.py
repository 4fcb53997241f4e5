"""The Exchange kernels' index arithmetic, checked on the host: the plan's position functions and store/load
guards are the plain functions the DSL traces, so here they run on NumPy ranks instead.

A lock-step model of the kernel (:func:`simulate`: each slice's stores, then its loads, through one scratch per
block) drives them over the contract's ``pr`` kernel points, and the family's oracle judges what it returns. It
checks the arithmetic and the guards, not the DSL's lowering of them (the compile tests and a GPU do that).
"""

from __future__ import annotations

from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.exchange import ExchangeBatch
from coopcheck_cutlass.exchange_plan import ExchangePlan, exchange_plan, position

from harness.cases import kernel_points
from harness.contracts import load_contracts
from harness.oracles import block_exchange as oracle

CONTRACT = {c.id: c for c in load_contracts()}["block.exchange"]
#: A value no exchanged item may carry in the model's scratch before the first store.
GARBAGE = 0x5A


def simulate(plan: ExchangePlan, inplace: bool, batch: ExchangeBatch) -> np.ndarray:
    """``dst`` of the contract kernel as :mod:`coopcheck_cutlass.exchange` runs it, every thread of every block
    at once: per slice, each item whose guard passes into the scratch at its index less the slice's start, then
    each output item whose guard passes from it; in place and sliced, into a temporary copied at the end."""
    n, threads, ipt = batch.n_blocks, plan.threads, plan.items_per_thread
    me = np.broadcast_to(np.arange(threads), (n, threads))
    held = np.asarray(batch.items).reshape(n, threads, ipt).copy()
    ranks = np.asarray(batch.ranks).reshape(n, threads, ipt).astype(np.int64)
    flags = np.asarray(batch.flags).reshape(n, threads, ipt)
    out = held if inplace else np.zeros_like(held)
    target = np.zeros_like(held) if inplace and plan.warp_time_slicing else out
    scratch = np.full((n, plan.scratch_items * held.itemsize), GARBAGE, np.uint8).view(held.dtype)
    store_at, load_from = plan.store_position(), plan.load_position()
    for s in range(plan.slices):
        lo = s * plan.window
        for i in range(ipt):
            index = (ranks[:, :, i] if store_at is None else store_at(me, i)) - lo
            ok = (plan.stores(index, flags[:, :, i] if plan.flagged else None) if plan.bounded
                  else np.ones(index.shape, bool))
            _in_scratch(plan, index[ok], "store")
            scratch[np.nonzero(ok)[0], index[ok]] = held[:, :, i][ok]
        for i in range(ipt):
            index = load_from(me, i) - lo
            ok = plan.loads(index) if plan.warp_time_slicing else np.ones(index.shape, bool)
            _in_scratch(plan, index[ok], "load")
            target[:, :, i][ok] = scratch[np.nonzero(ok)[0], index[ok]]
    if target is not out:
        out[:] = target
    dst = np.empty((n, plan.tile * (1 if inplace else 2)), held.dtype)
    dst[:, :plan.tile] = out.reshape(n, -1)
    if not inplace:
        dst[:, plan.tile:] = held.reshape(n, -1)
    return dst.reshape(-1)


def _in_scratch(plan: ExchangePlan, index: np.ndarray, what: str) -> None:
    """An access the guards let through must hit the scratch (on the GPU, one outside it is out of bounds)."""
    assert ((index >= 0) & (index < plan.scratch_items)).all(), f"{what} outside the scratch of {plan}"


def _point_id(point: tuple[tuple[str, Any], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in point)


PR_POINTS = kernel_points(CONTRACT, "pr")


@pytest.mark.parametrize("point", PR_POINTS, ids=[_point_id(p) for p in PR_POINTS])
def test_the_plan_exchanges_every_pr_kernel_point_as_the_oracle_expects(point: tuple[tuple[str, Any], ...],
                                                                        plan_failures: Any) -> None:
    failures = plan_failures(CONTRACT, point, exchange_plan, simulate)
    assert not failures, "\n".join(failures[:6])


def test_the_pr_points_cover_every_method_both_ways() -> None:
    seen = {(dict(p)["alg"], dict(p)["slicing"], dict(p)["output"]) for p in PR_POINTS}
    assert {a for a, _, _ in seen} == set(CONTRACT.axes["alg"])
    assert {(s, o) for _, s, o in seen} == {(s, o) for s in ("off", "on") for o in ("inplace", "separate")}


def _spec(method: str, block: tuple[int, ...], ipt: int = 3) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.exchange", "int32", block, ipt, method,
                                variant=(("slicing", "off"), ("output", "inplace")))


#: Every arrangement on whole warps, one warp of fewer threads, a 3-D block; blocked and striped on a partial warp
#: too (no warp method runs there: a rejection case).
ARRANGED = [(a, b) for a in ("blocked", "striped", "warp_striped")
            for b in ((32,), (5, 3, 2), (64,), (16, 8), (8, 4, 2))]
ARRANGED += [("blocked", (100,)), ("striped", (100,))]


@pytest.mark.parametrize(("arrangement", "block"), ARRANGED)
def test_a_position_function_is_the_abi_arrangement(arrangement: str, block: tuple[int, ...]) -> None:
    spec = _spec("blocked_to_striped", block)
    at = position(arrangement, spec.threads, spec.items_per_thread)
    rank, item = np.arange(spec.threads)[:, None], np.arange(spec.items_per_thread)[None, :]
    ours = np.broadcast_to(at(rank, item), (spec.threads, spec.items_per_thread)).reshape(-1)
    assert ours.tolist() == oracle.arrangement(spec, arrangement.replace("_", "-")).tolist()  # the ABI's names
    assert sorted(ours.tolist()) == list(range(spec.tile))


@pytest.mark.parametrize(("method", "sliced", "slices", "scratch", "barrier"), [
    ("striped_to_blocked", False, 1, 100 * 3, True),
    ("striped_to_blocked", True, 4, 32 * 3, True),  # 100 threads: the last slice is 4 warps' 100 - 96 threads
    ("warp_striped_to_blocked", False, 1, 128 * 3, False),
    ("warp_striped_to_blocked", True, 4, 32 * 3, True),
])
def test_the_plan_sizes_scratch_and_barriers_as_cub(method: str, sliced: bool, slices: int, scratch: int,
                                                    barrier: bool) -> None:
    block = (100,) if method == "striped_to_blocked" else (128,)
    plan = ExchangePlan("int16", block, 3, method, sliced)
    assert (plan.slices, plan.scratch_items, plan.scratch_bytes, plan.block_barrier) == (slices, scratch, 2 * scratch,
                                                                                       barrier)


@pytest.mark.parametrize(("threads", "mask"), [(32, 0xFFFFFFFF), (64, 0xFFFFFFFF), (30, (1 << 30) - 1), (1, 1)])
def test_a_warp_barrier_waits_for_the_lanes_that_exist(threads: int, mask: int) -> None:
    assert ExchangePlan("int8", (threads,), 2, "blocked_to_warp_striped", False).warp_mask == mask


def test_a_bad_static_is_refused_naming_the_rule() -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        exchange_plan(_spec("warp_striped_to_blocked", (100,)))
    assert raised.value.rule == "exchange_warp_multiple"


# -- the model bites: plans with one decision flipped fail the oracle --------------------------------------------


class _GuardDropped(ExchangePlan):
    def stores(self, index: Any, flag: Any = None) -> Any:
        return index == index  # every item, a negative rank too


class _FlagsIgnored(ExchangePlan):
    def stores(self, index: Any, flag: Any = None) -> Any:
        return self.loads(index)  # inside the window, whatever the flag


class _WholeWarpLanes(ExchangePlan):
    def load_position(self) -> Any:
        at = position("warp_striped", max(self.threads, 32), self.items_per_thread)  # W = 32 even for fewer threads
        return at if "warp_striped" in self.method else super().load_position()


class _UnboundedLoads(ExchangePlan):
    def loads(self, index: Any) -> Any:
        return index >= 0  # no upper bound: a slice loads past its window


MUTANTS = {
    "negative ranks stored": (_GuardDropped, (("alg", "scatter_to_striped_guarded"),)),
    "flags ignored": (_FlagsIgnored, (("alg", "scatter_to_striped_flagged"), ("slicing", "on"))),
    "warp-striped with 32 lanes on 30 threads": (_WholeWarpLanes, (("alg", "blocked_to_warp_striped"),
                                                                   ("block", "5x3x2"))),
    "loads outside the slice": (_UnboundedLoads, (("alg", "striped_to_blocked"), ("slicing", "on"))),
}


@pytest.mark.parametrize("mutant", MUTANTS)
def test_a_plan_with_one_decision_flipped_fails_the_oracle(mutant: str, plan_failures: Any) -> None:
    kind, where = MUTANTS[mutant]
    base = {"dtype": "int32", "block": "64", "ipt": 3, "alg": None, "slicing": "off", "output": "inplace"}
    point = tuple({**base, **dict(where)}.items())
    assert plan_failures(CONTRACT, point, exchange_plan, simulate) == []
    assert plan_failures(CONTRACT, point, exchange_plan, simulate, kind), f"{mutant}: the oracle accepted it"
