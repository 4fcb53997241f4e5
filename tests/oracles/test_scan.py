"""The Block Scan oracle against a sequential reference of its ABI (thread by thread, item by item, in the dtype):
it passes the reference on every pr kernel point, and it fails, naming the diagnosis, each known wrong
implementation made from it."""

from __future__ import annotations

import dataclasses
from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.scan import ScanBatch, out_length, tiles
from coopcheck.vocabulary import WARP_SIZE

from harness.cases import kernel_points, point_cases
from harness.contracts import Contract, load_contracts
from harness.oracles import block_scan as oracle
from harness.oracles.judging import canonical
from harness.oracles.operands import is_float
from tests.support.operators import Operator, scalar_operator
from tests.support.oracle_runs import Implementation, assert_caught_and_named, pr_verdicts, when


def sequential(spec: coopcheck.KernelSpec, batch: ScanBatch, *, mode: str | None = None, callers: Any = None,
               swapped: bool = False, carried: bool = True, seeded: bool = True,
               aggregate_seeded: bool = False) -> np.ndarray:
    """``dst`` of the Scan ABI, one item at a time; the keywords make the known wrong implementations: the other
    mode, the callback called by ``callers`` (default: the whole first warp), operands swapped, the running prefix
    not carried, the seed not applied, the aggregate taken with the seed."""
    forward = scalar_operator(spec)
    op: Operator = (lambda a, b: forward(b, a)) if swapped else forward
    mode, seed = mode or spec.static("mode"), spec.static("seed")
    n, n_tiles, tile, threads = batch.n_blocks, tiles(spec), spec.tile, spec.threads
    items = np.asarray(batch.items).reshape(n, n_tiles, tile)
    out = np.zeros((n, out_length(spec)), dtype=spec.dtype)
    callers = range(min(threads, WARP_SIZE)) if callers is None else callers
    for b in range(n):
        running = batch.initial[b]
        for k in range(n_tiles):
            aggregate = items[b, k, 0]
            for item in items[b, k, 1:]:
                aggregate = op(aggregate, item)
            prefix = None if seed == "none" or not seeded else running if seed == "prefix" else batch.initial[b]
            if seed == "prefix":
                running = op(running, aggregate) if carried else running
            acc = prefix
            for t in range(tile):
                if mode == "exclusive":
                    out[b, k * tile + t] = 0 if acc is None else acc
                acc = items[b, k, t] if acc is None else op(acc, items[b, k, t])
                if mode == "inclusive":
                    out[b, k * tile + t] = acc
            first = n_tiles * tile + k * threads
            if seed == "prefix":
                for r in callers:
                    out[b, first + r] = aggregate
            else:
                out[b, first:first + threads] = op(prefix, aggregate) if aggregate_seeded else aggregate
        if seed == "prefix":
            for r in callers:
                out[b, n_tiles * (tile + threads) + r] = n_tiles
    return out.reshape(-1)


@pytest.fixture(scope="module")
def contract() -> Contract:
    return next(c for c in load_contracts() if c.operation == "block.scan")


def test_the_sequential_reference_passes_on_every_pr_point(contract: Contract) -> None:
    judged, failing, _ = pr_verdicts(contract, sequential)
    assert judged == 100 and failing == 0


def test_only_thread_0_need_call_the_prefix_callback(contract: Contract) -> None:
    """CUB's raking calls it in its raking threads only (22 of 65), its warp_scans in the whole first warp."""
    assert pr_verdicts(contract, lambda s, b: sequential(s, b, callers=[0]))[1] == 0


def _other_mode(spec: coopcheck.KernelSpec, batch: ScanBatch) -> np.ndarray:
    return sequential(spec, batch, mode="exclusive" if spec.static("mode") == "inclusive" else "inclusive")


def _y_major(spec: coopcheck.KernelSpec, batch: ScanBatch) -> np.ndarray | None:
    """The tile taken, and its results put back, in a y-fastest rank order."""
    if len(spec.block) == 1:
        return None
    n, n_tiles, order = batch.n_blocks, tiles(spec), oracle.primitive_order(spec)
    permuted = np.asarray(batch.items).reshape(n, n_tiles, spec.tile)[..., order]
    out = sequential(spec, dataclasses.replace(batch, items=permuted.reshape(-1))).reshape(n, -1)
    scanned = out[:, :n_tiles * spec.tile].reshape(n, n_tiles, spec.tile)
    put_back = np.empty_like(scanned)
    put_back[..., order] = scanned
    out[:, :n_tiles * spec.tile] = put_back.reshape(n, -1)
    return out.reshape(-1)


def _canonicalized(spec: coopcheck.KernelSpec, batch: ScanBatch) -> np.ndarray:
    """Every item and seed value through an arithmetic move (x + 0): -0.0 becomes +0.0, NaN payloads quieten."""
    moved = dataclasses.replace(batch, items=canonical(np.asarray(batch.items)),
                                initial=canonical(np.asarray(batch.initial)))
    return sequential(spec, moved)


# (name, implementation, the least share of judged cases it must fail, its diagnosis, the least share of the failing
# ones it must explain). A wrong seed or order passes wherever the data cannot tell (an identity seed, a seed of a
# min or max that is not the extreme, a matmul of identities): those shares are what the pr profile's data shows.
WRONG = [
    ("mode-swapped", _other_mode, 1.0, "mode-swapped", 0.9),
    ("seed-ignored", when(lambda s: s.static("seed") != "none", lambda s, b: sequential(s, b, seeded=False)),
     0.4, "seed-ignored", 0.9),
    ("prefix-not-carried", when(lambda s: s.static("seed") == "prefix", lambda s, b: sequential(s, b, carried=False)),
     0.8, "prefix-not-carried", 0.9),
    ("operands-reversed", when(lambda s: s.static("op") == "matmul", lambda s, b: sequential(s, b, swapped=True)),
     0.8, "operands-reversed", 0.9),
    ("aggregate-with-seed", when(lambda s: s.static("seed") == "initial",
                                  lambda s, b: sequential(s, b, aggregate_seeded=True)),
     0.25, "aggregate-with-seed", 0.9),
    ("rank-y-major", _y_major, 0.9, "rank-y-major", 0.9),
    ("floats-canonicalized", when(lambda s: is_float(s) and s.static("op") != "sum", _canonicalized),
     1.0, "floats-canonicalized", 0.9),
]


@pytest.mark.parametrize(("name", "implementation", "caught", "diagnosis", "explained"), WRONG,
                         ids=[w[0] for w in WRONG])
def test_a_known_wrong_implementation_fails_named(contract: Contract, name: str, implementation: Implementation,
                                                  caught: float, diagnosis: str, explained: float) -> None:
    assert_caught_and_named(contract, implementation, caught, diagnosis, explained)


def test_a_callback_called_outside_the_first_warp_fails(contract: Contract) -> None:
    wrong = when(lambda s: s.static("seed") == "prefix" and s.threads > WARP_SIZE,
                  lambda s, b: sequential(s, b, callers=[0, WARP_SIZE]))
    judged, failing, _ = pr_verdicts(contract, wrong)
    assert judged and failing == judged


def _one_block(dtype: str, op: str, mode: str, seed: str, items: list[Any], initial: Any
               ) -> tuple[coopcheck.KernelSpec, ScanBatch]:
    spec = coopcheck.KernelSpec("block.scan", dtype, (2,), len(items) // 2, "raking",
                                variant=(("op", op), ("mode", mode), ("seed", seed)))
    return spec, ScanBatch(np.array(items, dtype), np.array([initial], dtype), spec.tile, 1)


def test_the_worked_example() -> None:
    spec, batch = _one_block("int8", "max", "exclusive", "initial", [3, -9, 7, 1], -5)
    _, want, wrong = oracle.compare(spec, batch, sequential(spec, batch))
    assert want[0, :4].tolist() == [-5, 3, 3, 7] and want[0, 4:6].tolist() == [7, 7] and not wrong.any()


def test_a_float_minimum_is_a_zero_of_a_sign_it_covers() -> None:
    """Where -0.0 is the only zero covered, +0.0 is wrong; where both are, either is right."""
    spec, batch = _one_block("float32", "min", "inclusive", "none", [0.5, -0.0, 0.0, 1.0], 0)
    out = sequential(spec, batch)
    scanned = out[:4].copy()
    assert not oracle.compare(spec, batch, out)[2].any()
    out[1] = np.float32(0.0)  # covers 0.5 and -0.0 only
    assert oracle.compare(spec, batch, out)[2][0].tolist()[:4] == [False, True, False, False]
    out[:4], out[2] = scanned, np.float32(-0.0)  # covers -0.0 and +0.0: either zero
    assert not oracle.compare(spec, batch, out)[2].any()


def test_a_nan_is_ignored_unless_every_value_covered_is_one() -> None:
    spec, batch = _one_block("float64", "max", "inclusive", "none", [np.nan, np.nan, 2.0, np.nan], 0)
    out = sequential(spec, batch)
    assert np.isnan(out[:2]).all() and out[2:4].tolist() == [2.0, 2.0]
    assert not oracle.compare(spec, batch, out)[2].any()
    out[3] = np.nan
    assert oracle.compare(spec, batch, out)[2][0, 3]


def test_an_exclusive_scan_without_a_seed_leaves_item_0_open_but_a_sums() -> None:
    spec, batch = _one_block("int32", "min", "exclusive", "none", [4, 2, 9, 1], 0)
    out = sequential(spec, batch)
    out[0] = 12345  # undefined: any value
    assert not oracle.compare(spec, batch, out)[2].any()
    spec, batch = _one_block("int32", "sum", "exclusive", "none", [4, 2, 9, 1], 0)
    out = sequential(spec, batch)
    out[0] = 1
    assert oracle.compare(spec, batch, out)[2][0, 0]


def test_check_ids_of_no_block(contract: Contract) -> None:
    """The judge asks for the check ids of the blocks a group's failing cases hold, and that set may be empty."""
    point = kernel_points(contract, "pr")[0]
    cases = point_cases(contract, "reference", point)
    launch = oracle.build(cases[0].spec, cases, 11)
    ids = oracle.check_ids(launch.spec, oracle.snapshot(launch.batch), np.array([], dtype=np.int64))
    assert ids.shape == (0, out_length(launch.spec))
