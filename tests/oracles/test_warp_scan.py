"""The Warp Scan oracle against a sequential reference of its ABI (logical warp by logical warp, lane by lane, in the
dtype): it passes the reference on every pr kernel point, and it fails, naming the diagnosis, each known wrong
implementation made from it."""

from __future__ import annotations

from dataclasses import dataclass

import coopcheck
import numpy as np
import pytest
from coopcheck.warp_scan import WarpScanBatch, aggregates, out_length, width

from harness.contracts import Contract, load_contracts
from harness.oracles import warp_scan as oracle
from harness.oracles.judging import canonical, thread_ranks
from harness.oracles.warps import straddles
from tests.support.logical_warps import lane_groups
from tests.support.operators import scalar_operator
from tests.support.oracle_runs import Implementation, assert_caught_and_named, pr_verdicts, when


@dataclass(frozen=True)
class Deviation:
    """What a known wrong implementation does differently (all False: the contract)."""

    y_major: bool = False  # ranks threads y-fastest
    straddle: bool = False  # logical warps of width consecutive ranks, across hardware warps
    swapped: bool = False  # the other mode
    seed_ignored: bool = False  # the initial value left out
    seed_in_aggregate: bool = False  # the aggregate folds the initial value in
    reversed: bool = False  # every operator application with its operands swapped
    canonical: bool = False  # floats canonicalized


def sequential(spec: coopcheck.KernelSpec, batch: WarpScanBatch, how: Deviation = Deviation()) -> np.ndarray:
    """``dst`` of the Warp Scan ABI, one lane at a time, as ``how`` deviates from the contract (an undefined lane 0
    of an exclusive scan returns its own item)."""
    scalar = scalar_operator(spec)
    op = (lambda a, b: scalar(b, a)) if how.reversed else scalar
    inclusive = (spec.static("mode") == "inclusive") != how.swapped
    seeded = spec.static("seed") == "initial" and not how.seed_ignored
    threads, dtype, n = spec.threads, np.dtype(spec.dtype), batch.n_blocks
    items = np.asarray(batch.items).reshape(n, threads)
    out = np.zeros((n, out_length(spec)), dtype=dtype)
    abi_of = np.argsort(thread_ranks(spec, how.y_major))  # the ABI rank of each primitive rank
    for b in range(n):
        value = items[b, abi_of]  # in primitive rank order
        seed = batch.initial[b]
        for group in lane_groups(spec, how.straddle):
            acc = seed if seeded else None
            total = seed if how.seed_in_aggregate and spec.static("seed") == "initial" else None
            for rank in group:
                before = acc
                acc = value[rank] if acc is None else op(acc, value[rank])
                total = value[rank] if total is None else op(total, value[rank])
                if inclusive:
                    result = acc
                elif before is not None:
                    result = before
                else:
                    result = dtype.type(0) if spec.static("op") == "sum" else value[rank]
                out[b, abi_of[rank]] = result
            if aggregates(spec):
                out[b, threads + abi_of[np.array(group)]] = total
        if how.canonical:
            out[b] = canonical(out[b])
    return out.reshape(-1)


@pytest.fixture(scope="module")
def contract() -> Contract:
    return next(c for c in load_contracts() if c.operation == "warp.scan")


def test_the_sequential_reference_passes_on_every_pr_point(contract: Contract) -> None:
    judged, failing, _ = pr_verdicts(contract, sequential)
    assert judged == 104 and failing == 0


def _deviating(**how: bool) -> Implementation:
    return lambda spec, batch: sequential(spec, batch, Deviation(**how))


def _seeded(spec: coopcheck.KernelSpec) -> bool:
    return spec.static("seed") == "initial"


# (name, implementation, the least share of judged cases it must fail, its diagnosis, the least share of the failing
# ones it must explain). A deviation passes wherever the data cannot tell (logical warps of one lane for the mode
# swapped, an identity seed, a matmul of identities): those shares are what the pr profile's data shows.
WRONG = [
    ("rank-y-major", when(lambda s: len(s.block) > 1, _deviating(y_major=True)), 0.5, "rank-y-major", 0.9),
    ("warps-straddle", when(straddles, _deviating(straddle=True)), 0.5, "warps-straddle", 0.9),
    ("mode-swapped", _deviating(swapped=True), 0.5, "mode-swapped", 0.9),
    ("seed-ignored", when(_seeded, _deviating(seed_ignored=True)), 0.3, "seed-ignored", 0.9),
    ("aggregate-with-seed", when(lambda s: _seeded(s) and aggregates(s), _deviating(seed_in_aggregate=True)), 0.3,
     "aggregate-with-seed", 0.9),
    ("operands-reversed", when(lambda s: s.static("op") == "matmul" and width(s) > 1, _deviating(reversed=True)),
     0.4, "operands-reversed", 0.9),
    ("floats-canonicalized", when(lambda s: s.dtype.startswith("float") and s.static("op") in ("min", "max"),
                                  _deviating(canonical=True)), 0.3, "floats-canonicalized", 0.9),
]


@pytest.mark.parametrize(("name", "implementation", "caught", "diagnosis", "explained"), WRONG,
                         ids=[w[0] for w in WRONG])
def test_a_known_wrong_implementation_fails_named(contract: Contract, name: str, implementation: Implementation,
                                                  caught: float, diagnosis: str, explained: float) -> None:
    assert_caught_and_named(contract, implementation, caught, diagnosis, explained)


def _one_block(mode: str, op: str, dtype: str, lanes: int, items: list[object], initial: object = None,
               aggregate: str = "on") -> tuple[coopcheck.KernelSpec, WarpScanBatch]:
    seed = "none" if initial is None else "initial"
    spec = coopcheck.KernelSpec("warp.scan", dtype, (len(items),), 1, "any", variant=(
        ("width", str(lanes)), ("op", op), ("mode", mode), ("seed", seed), ("aggregate", aggregate)))
    return spec, WarpScanBatch(np.array(items, dtype), np.array([0 if initial is None else initial], dtype),
                               len(items))


def test_the_abi_example_of_a_partial_logical_warp() -> None:
    spec, batch = _one_block("exclusive", "sum", "int32", 4, [1, 2, 3, 4, 5, 6], initial=10)
    out = sequential(spec, batch)
    assert out.tolist() == [10, 11, 13, 16, 10, 15, 10, 10, 10, 10, 11, 11]
    assert not oracle.compare(spec, batch, out)[2].any()


def test_the_worked_example() -> None:
    spec, batch = _one_block("inclusive", "max", "int8", 2, [3, -9, 7], initial=-5)
    _, want, wrong = oracle.compare(spec, batch, sequential(spec, batch))
    assert want[0].tolist() == [3, 3, 7, 3, 3, 7] and not wrong.any()


def test_an_exclusive_scan_without_a_seed_leaves_lane_zero_open_but_for_sum() -> None:
    """CUB's ExclusiveScan leaves lane 0 undefined; ExclusiveSum scans from T{}, so its lane 0 holds 0."""
    for op, judged in (("max", False), ("sum", True)):
        spec, batch = _one_block("exclusive", op, "int32", 4, [5, 1, 7, 2, 9, 4, 3, 8], aggregate="off")
        out = sequential(spec, batch)
        out[[0, 4]] = 77  # lane 0 of both logical warps
        assert oracle.compare(spec, batch, out)[2][0].tolist() == [judged, False, False, False] * 2


def test_every_lane_receives_its_logical_warp_s_aggregate_without_the_seed() -> None:
    spec, batch = _one_block("inclusive", "sum", "int16", 8, list(range(1, 17)), initial=100)
    out = sequential(spec, batch)
    assert out[16:].tolist() == [36] * 8 + [100] * 8 and not oracle.compare(spec, batch, out)[2].any()
    out[16 + 3] = 136  # one lane's aggregate with the seed
    assert oracle.compare(spec, batch, out)[2][0].tolist() == [False] * 19 + [True] + [False] * 12


def test_a_non_power_of_two_width_cuts_each_hardware_warp() -> None:
    """NVIDIA/cccl#858's geometry: width 7 over 49 threads; the fifth logical warp has 4 lanes (28-31), the sixth
    starts the second hardware warp at rank 32."""
    spec, batch = _one_block("inclusive", "sum", "int32", 7, [1] * 49)
    out = sequential(spec, batch)
    assert out[[6, 27, 28, 31, 32, 38, 48]].tolist() == [7, 7, 1, 4, 1, 7, 3]
    assert out[49 + 31] == 4 and out[49 + 48] == 3
    assert not oracle.compare(spec, batch, out)[2].any()
