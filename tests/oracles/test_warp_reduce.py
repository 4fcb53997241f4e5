"""The Warp Reduce oracle against a sequential reference of its ABI (logical warp by logical warp, segment by
segment, lane by lane, in the dtype): it passes the reference on every pr kernel point, and it fails, naming the
diagnosis, each known wrong implementation made from it."""

from __future__ import annotations

from dataclasses import dataclass

import coopcheck
import numpy as np
import pytest
from coopcheck.reduce import COMMUTATIVE, RECORDING
from coopcheck.warp_reduce import WarpReduceBatch, out_length, width

from harness.contracts import Contract, load_contracts
from harness.oracles import warp_reduce as oracle
from harness.oracles.judging import canonical, thread_ranks
from harness.oracles.values import raw_view
from harness.oracles.warps import straddles
from tests.support.logical_warps import lane_groups
from tests.support.operators import scalar_operator
from tests.support.oracle_runs import Implementation, assert_caught_and_named, pr_verdicts, when


@dataclass(frozen=True)
class Deviation:
    """What a known wrong implementation does differently (all False: the contract)."""

    y_major: bool = False  # ranks threads y-fastest
    straddle: bool = False  # logical warps of width consecutive ranks, across hardware warps
    all_lanes: bool = False  # valid_items ignored
    at_end: bool = False  # each segment's result in its last lane
    swapped: bool = False  # head flags read as tails and tails as heads
    reversed: bool = False  # each segment reduced last to first
    canonical: bool = False  # floats canonicalized
    touches_invalid: bool = False  # the operator applied to the first invalid lane, its result dropped


def _segments(group: list[int], mode: str, flag: list[int], valid: int, how: Deviation) -> list[list[int]]:
    if mode == "reduce":
        count = len(group) if how.all_lanes else min(valid, len(group))
        return [group[:count]] if count else []
    if how.swapped:
        mode = "tail" if mode == "head" else "head"
    segments: list[list[int]] = []
    for lane, rank in enumerate(group):
        starts = lane == 0 or (flag[rank] if mode == "head" else flag[group[lane - 1]])
        if starts:
            segments.append([])
        segments[-1].append(rank)
    return segments


def sequential(spec: coopcheck.KernelSpec, batch: WarpReduceBatch, how: Deviation = Deviation()) -> np.ndarray:
    """``dst`` of the Warp Reduce ABI, one lane at a time, as ``how`` deviates from the contract (the other lanes
    return their own item)."""
    op = scalar_operator(spec)
    mode, threads, dtype = spec.static("mode"), spec.threads, np.dtype(spec.dtype)
    n = batch.n_blocks
    items = np.asarray(batch.items).reshape(n, threads)
    flags = np.asarray(batch.flags).reshape(n, threads)
    out = np.zeros((n, out_length(spec)), dtype=dtype)
    abi_of = np.argsort(thread_ranks(spec, how.y_major))  # the ABI rank of each primitive rank
    sentinel = raw_view(np.asarray(batch.sentinel))
    for b in range(n):
        value = items[b, abi_of]  # in primitive rank order
        out[b, :threads] = items[b]
        seen = np.zeros(threads, dtype=bool)
        for group in lane_groups(spec, how.straddle):
            segments = _segments(group, mode, list(flags[b, abi_of]), int(batch.valid[b]), how)
            for segment in segments:
                order = segment[::-1] if how.reversed else segment
                acc = value[order[0]]
                for rank in order[1:]:
                    acc = op(acc, value[rank])
                if how.touches_invalid and segment[-1] + 1 in group and spec.static("op") == RECORDING:
                    seen[segment[0]] |= raw_view(np.array([value[segment[-1] + 1]]))[0] == sentinel[b]
                result = np.array([acc], dtype=dtype)
                out[b, abi_of[segment[-1] if how.at_end else segment[0]]] = canonical(result)[0] if how.canonical \
                    else result[0]
        out[b, threads + abi_of] = seen.astype(dtype)
    return out.reshape(-1)


@pytest.fixture(scope="module")
def contract() -> Contract:
    return next(c for c in load_contracts() if c.operation == "warp.reduce")


def test_the_sequential_reference_passes_on_every_pr_point(contract: Contract) -> None:
    judged, failing, _ = pr_verdicts(contract, sequential)
    assert judged == 396 and failing == 0


def _deviating(**how: bool) -> Implementation:
    return lambda spec, batch: sequential(spec, batch, Deviation(**how))


def _partial_reduce(spec: coopcheck.KernelSpec) -> bool:
    return spec.static("mode") == "reduce" and width(spec) > 1


# (name, implementation, the least share of judged cases it must fail, its diagnosis, the least share of the failing
# ones it must explain). A deviation passes wherever the data cannot tell (a full logical warp for valid_items
# ignored, segments of one lane, a matmul of identities, first over zeros): those shares are what the pr profile's
# data shows.
WRONG = [
    ("rank-y-major", when(lambda s: len(s.block) > 1, _deviating(y_major=True)), 0.5, "rank-y-major", 0.9),
    ("warps-straddle", when(straddles, _deviating(straddle=True)), 0.55, "warps-straddle", 0.9),
    ("invalid-included", when(_partial_reduce, _deviating(all_lanes=True)), 0.5, "invalid-included", 0.8),
    ("result-at-segment-end", when(lambda s: width(s) > 1, _deviating(at_end=True)), 0.45, "result-at-segment-end",
     0.9),
    ("flags-swapped", when(lambda s: s.static("mode") != "reduce", _deviating(swapped=True)), 0.2, "flags-swapped",
     0.9),
    ("operands-reversed", when(lambda s: s.static("op") not in COMMUTATIVE and width(s) > 1,
                               _deviating(reversed=True)), 0.4, "operands-reversed", 0.9),
]


@pytest.mark.parametrize(("name", "implementation", "caught", "diagnosis", "explained"), WRONG,
                         ids=[w[0] for w in WRONG])
def test_a_known_wrong_implementation_fails_named(contract: Contract, name: str, implementation: Implementation,
                                                  caught: float, diagnosis: str, explained: float) -> None:
    assert_caught_and_named(contract, implementation, caught, diagnosis, explained)


def test_an_operator_applied_to_an_invalid_lane_is_caught(contract: Contract) -> None:
    """NVIDIA/cccl#5017: a result that drops what the operator made of an invalid lane still fails: first records
    the sentinel it saw."""
    wrong = when(lambda s: s.static("op") == RECORDING and _partial_reduce(s), _deviating(touches_invalid=True))
    judged, failing, _ = pr_verdicts(contract, wrong)
    assert judged and failing >= 0.5 * judged, (failing, judged)


def _one_block(mode: str, op: str, dtype: str, lanes: int, items: list[object], flags: list[int], valid: int,
               sentinel: object = 1) -> tuple[coopcheck.KernelSpec, WarpReduceBatch]:
    spec = coopcheck.KernelSpec("warp.reduce", dtype, (len(items),), 1, "any",
                                variant=(("width", str(lanes)), ("op", op), ("mode", mode)))
    return spec, WarpReduceBatch(np.array(items, dtype), np.array(flags, np.uint8), np.array([valid], np.int32),
                                 np.array([sentinel], dtype), len(items))


def test_the_worked_example() -> None:
    spec, batch = _one_block("head", "sum", "int8", 4, [100, 100, 100, -7], [0, 0, 1, 0], 4)
    _, want, wrong = oracle.compare(spec, batch, sequential(spec, batch))
    assert want[0, [0, 2]].tolist() == [-56, 93] and not wrong.any()


def test_the_abi_example_of_a_partial_logical_warp() -> None:
    spec, batch = _one_block("reduce", "sum", "int32", 4, [1, 2, 3, 99, 5, 6], [0] * 6, 3)
    out = sequential(spec, batch)
    assert out[[0, 4]].tolist() == [6, 11] and not oracle.compare(spec, batch, out)[2].any()


def test_a_tail_segment_s_result_is_in_its_first_lane() -> None:
    """CUB's TailSegmentedReduce returns each segment's result to its first lane, as HeadSegmentedReduce does."""
    spec, batch = _one_block("tail", "sum", "int32", 8, [1, 2, 3, 4, 5, 6, 7, 8], [0, 1, 0, 0, 1, 0, 0, 0], 8)
    out = sequential(spec, batch)
    assert out[[0, 2, 5]].tolist() == [3, 12, 21] and not oracle.compare(spec, batch, out)[2].any()
    out[[0, 1]] = [0, 3]  # the first segment's result in its tail lane
    assert oracle.compare(spec, batch, out)[2][0, :8].tolist() == [True] + [False] * 7


def test_a_non_power_of_two_width_cuts_each_hardware_warp() -> None:
    """NVIDIA/cccl#858's geometry: width 7 over 49 threads is eight logical warps, the fifth of 4 lanes (28-31),
    the sixth starting the second hardware warp at rank 32."""
    spec, batch = _one_block("reduce", "sum", "int32", 7, [1] * 49, [0] * 49, 7)
    out = sequential(spec, batch)
    results = {r: int(out[r]) for r in (0, 7, 14, 21, 28, 32, 39, 46)}
    assert results == {0: 7, 7: 7, 14: 7, 21: 7, 28: 4, 32: 7, 39: 7, 46: 3}
    assert not oracle.compare(spec, batch, out)[2].any()
