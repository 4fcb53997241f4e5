"""The Shuffle oracle on hand-built launches: what each method takes and leaves as it was, the distances it draws,
the check that judges each element, and the diagnoses it names."""

from __future__ import annotations

from dataclasses import replace

import coopcheck
import numpy as np
import pytest

from harness.cases import point_cases
from harness.contracts import load_contracts
from harness.oracles import block_shuffle as oracle

SHUFFLE = {c.id: c for c in load_contracts()}["block.shuffle"]


def _spec(method: str, block: tuple[int, ...] = (4,), ipt: int = 1, output: str = "inplace",
          dtype: str = "int32") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.shuffle", dtype, block, ipt, method, variant=(("output", output),))


def _batch(spec: coopcheck.KernelSpec, distance: int = 0) -> coopcheck.ShuffleBatch:
    items = np.arange(10, 10 + spec.tile, dtype=spec.dtype)
    prior = np.arange(100, 100 + spec.tile + spec.threads, dtype=spec.dtype)
    return coopcheck.ShuffleBatch(items, prior, np.array([distance], np.int32), spec.tile)


def _launch(method: str, block: str, ipt: int, output: str, dtype: str = "int32") -> oracle.Launch:
    point = (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", method), ("output", output))
    cases = point_cases(SHUFFLE, "numba", point)
    return oracle.build(cases[0].spec, cases, 7)


@pytest.mark.parametrize(("method", "ipt", "output", "distance", "want"), [
    # the module's worked example: thread 0's source lies outside the block, so it keeps its prior value
    ("offset", 1, "separate", -1, [100, 10, 11, 12, 10, 11, 12, 13]),
    ("offset", 1, "inplace", 3, [13, 11, 12, 13]),
    ("rotate", 1, "inplace", 3, [13, 10, 11, 12]),
    ("up", 2, "inplace", 0, [10, 10, 11, 12, 13, 14, 15, 16]),
    ("down", 2, "separate", 0, [11, 12, 13, 14, 15, 16, 17, 107, *range(10, 18)]),
    ("up_suffix", 1, "inplace", 0, [10, 10, 11, 12, 13, 13, 13, 13]),
    ("down_prefix", 1, "separate", 0, [11, 12, 13, 103, 10, 11, 12, 13, 10, 10, 10, 10]),
])
def test_each_method_takes_what_the_abi_says_and_leaves_the_rest(method: str, ipt: int, output: str, distance: int,
                                                                  want: list[int]) -> None:
    spec = _spec(method, ipt=ipt, output=output)
    assert oracle.expected(spec, _batch(spec, distance), oracle.params_of(spec))[0].tolist() == want


def test_the_checks_tell_shuffled_from_left_alone_and_from_the_block_item() -> None:
    spec = _spec("up_suffix", ipt=2, output="separate")
    checks = oracle.check_ids(spec, _batch(spec), np.array([0]))[0]
    names = [oracle.CHECK_NAMES[int(c)] for c in checks]
    assert names == ["untouched-kept", *["items-shuffled"] * 7, *["input-kept"] * 8, *["block-item"] * 4]
    offset = _spec("offset", output="inplace")
    assert oracle.check_ids(offset, _batch(offset, 2), np.array([0]))[0].tolist() == [oracle.SHUFFLED] * 2 + [
        oracle.UNTOUCHED] * 2


def test_distances_resolve_per_kernel_point_inside_the_methods_range() -> None:
    for method, lo, hi in (("offset", -99, 99), ("rotate", 1, 99)):
        spec = _spec(method, block=(10, 10))
        drawn = {oracle.distance_value("rand", spec, f"k{i}") for i in range(200)}
        assert min(drawn) >= lo and max(drawn) <= hi and len(drawn) > 50
        assert oracle.distance_value("last", spec, "k") == 99 and oracle.distance_value("warp", spec, "k") == 32
    assert oracle.distance_value("-last", _spec("offset", block=(10, 10)), "k") == -99
    with pytest.raises(ValueError, match="distance=-1 is -1, outside rotate's range on 4 threads"):
        oracle.distance_value("-1", _spec("rotate"), "k")


def test_a_cases_distance_and_data_come_from_the_case_alone() -> None:
    launch = _launch("offset", "100", 1, "separate")
    alone = oracle.build(launch.spec, [launch.cases[3]], 7)
    mine = np.flatnonzero(launch.case_of_block == 3)
    assert set(np.asarray(launch.batch.distance)[mine]) == set(np.asarray(alone.batch.distance))
    order = np.argsort(launch.pattern_of_block[mine])
    items = np.asarray(launch.batch.items).reshape(-1, 100)[mine[order]]
    assert np.array_equal(items, np.asarray(alone.batch.items).reshape(-1, 100)[np.argsort(alone.pattern_of_block)])
    with_prior = np.hstack([np.asarray(launch.batch.items).reshape(-1, 100),
                            np.asarray(launch.batch.prior).reshape(-1, 200)])
    code0 = int(np.flatnonzero(launch.pattern_of_block == launch.patterns.index("code0"))[0])
    # the items and prior values carry distinct codes: one digit tells all 300 int32 elements of a block apart
    assert len(set(oracle.raw_view(np.ascontiguousarray(with_prior[code0])).tolist())) == 300


@pytest.mark.parametrize(("method", "block", "ipt", "output", "dtype", "diagnosis"), [
    ("offset", "16x8", 1, "separate", "int32", "rank-y-major"),
    ("offset", "100", 1, "inplace", "int16", "distance-negated"),
    ("offset", "100", 1, "separate", "uint8", "offset-wrapped"),
    ("offset", "32", 1, "separate", "int64", "untouched-overwritten"),
    ("rotate", "10x5", 1, "inplace", "float32", "distance-negated"),
    ("rotate", "100", 1, "separate", "int32", "rotate-unwrapped"),
    ("up", "32", 3, "inplace", "float16", "carry-own-thread"),
    ("down", "100", 2, "separate", "int8", "shift-rotated"),
    ("up_suffix", "8x4x2", 4, "separate", "uint16", "direction-swapped"),
    ("down_prefix", "7", 2, "inplace", "int32", "block-item-from-wrong-thread"),
    ("down", "5x3x2", 2, "separate", "float64", "nothing-shuffled"),
    ("up_suffix", "7", 3, "inplace", "float64", "floats-canonicalized"),
])
def test_a_known_wrong_output_is_named_by_its_diagnosis_and_rule(method: str, block: str, ipt: int, output: str,
                                                                  dtype: str, diagnosis: str) -> None:
    launch = _launch(method, block, ipt, output, dtype)
    params = dict(oracle._variants(launch.spec))[diagnosis]
    wrong = oracle.expected(launch.spec, launch.batch, params).reshape(-1)
    verdicts = oracle.judge(launch, oracle.snapshot(launch.batch), wrong)
    failed = [v for v in verdicts if not v.passed]
    assert failed and all(diagnosis in v.diagnoses for v in failed)
    assert any(diagnosis in r.matches for r in SHUFFLE.rules), f"no rule of the contract explains {diagnosis}"
    if diagnosis == "offset-wrapped":  # wraps only where a source lies outside: distance 0 is no failure
        assert not verdicts[[c["distance"] for c in launch.cases].index("0")].checks


def test_the_correct_output_passes_and_a_touched_input_or_a_short_output_fails() -> None:
    launch = _launch("down_prefix", "10x5", 3, "separate")
    snap = oracle.snapshot(launch.batch)
    good = oracle.expected(launch.spec, snap, oracle.params_of(launch.spec)).reshape(-1)
    assert all(v.passed for v in oracle.judge(launch, snap, good))
    touched = replace(launch, batch=oracle.snapshot(launch.batch))
    touched.batch.prior[:] = 0
    assert {v.checks for v in oracle.judge(touched, snap, good)} == {("inputs-unmodified",)}
    assert {v.checks for v in oracle.judge(launch, snap, good[:-1])} == {("output-abi",)}
    flipped = good.copy()
    flipped.view(np.uint8)[good.itemsize * (len(good) - 1)] ^= 1  # the last block item of the last block
    failed = [v for v in oracle.judge(launch, snap, flipped) if not v.passed]
    assert [v.checks for v in failed] == [("block-item",)]
