"""The Reduce oracle on hand-built launches: each operator's result (integer wraparound, fmin/fmax with NaNs and
signed zeros, the float sum's bound and its exact check), the elements it leaves unjudged, the seen flags, its
inputs (no valid item equals the sentinel, invalid items as extreme as the operator makes them) and the
diagnoses it names."""

from __future__ import annotations

import coopcheck
import numpy as np
import pytest

from harness.cases import point_cases
from harness.contracts import load_contracts
from harness.oracles import block_reduce as oracle
from harness.oracles import folds

REDUCE = {c.id: c for c in load_contracts()}["block.reduce"]


def _spec(op: str, dtype: str = "int32", block: tuple[int, ...] = (2,), ipt: int = 2,
          alg: str = "raking") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.reduce", dtype, block, ipt, alg, variant=(("op", op),))


def _batch(spec: coopcheck.KernelSpec, items: list[float], valid: int) -> coopcheck.ReduceBatch:
    return coopcheck.ReduceBatch(np.array(items, dtype=spec.dtype), np.array([valid], np.int32),
                                 np.ones(1, dtype=spec.dtype), spec.tile)


def _wrong(spec: coopcheck.KernelSpec, items: list[float], valid: int, result: float,
           flags: tuple[int, ...] = ()) -> list[bool]:
    """Which elements of a one-block output (thread 0 returns ``result``, the others 99) the oracle rejects."""
    out = np.full(oracle.out_length(spec), 99, dtype=spec.dtype)
    out[spec.threads:] = 0
    out[0] = result
    for f in flags:
        out[spec.threads + f] = 1
    return oracle.compare(spec, _batch(spec, items, valid), out)[2][0].tolist()  # type: ignore[no-any-return]


@pytest.mark.parametrize(("op", "dtype", "items", "valid", "want"), [
    ("sum", "int8", [100, 100, 100, -7], 3, 44),  # the module's worked example: 300 wraps to 44
    ("sum", "uint16", [65535, 2, 7, 7], 2, 1),
    ("min", "int32", [5, -3, 9, -100], 3, -3),
    ("max", "uint8", [5, 200, 9, 255], 3, 200),
    ("first", "int16", [0, 0, 7, 8], 4, 7),
    ("first", "int16", [0, 0, 0, 8], 3, 0),  # every valid item zero: the last one
    # 2-bit entries: [[1, 1], [0, 1]] @ [[1, 0], [1, 1]] = [[2, 1], [1, 1]] -> 2 | 1 << 2 | 1 << 4 | 1 << 6
    ("matmul", "uint8", [1 | 1 << 2 | 1 << 6, 1 | 1 << 4 | 1 << 6, 0, 0], 2, 2 | 1 << 2 | 1 << 4 | 1 << 6),
])
def test_each_operator_reduces_the_valid_prefix_in_order(op: str, dtype: str, items: list[int], valid: int,
                                                         want: int) -> None:
    spec = _spec(op, dtype)
    assert folds.reference(spec, np.array([items], dtype=dtype), np.array([valid]))[0] == np.dtype(dtype).type(want)
    assert not any(_wrong(spec, items, valid, want))
    assert _wrong(spec, items, valid, want + 1)[0]


def test_matmul_is_not_commutative_and_its_order_is_the_tile_order() -> None:
    a, b = 1 | 1 << 2 | 1 << 6, 1 | 1 << 4 | 1 << 6
    spec = _spec("matmul", "uint8")
    forward = folds.reference(spec, np.array([[a, b, 0, 0]], np.uint8), np.array([2]))[0]
    backward = folds.reference(spec, np.array([[b, a, 0, 0]], np.uint8), np.array([2]))[0]
    assert forward != backward


def test_only_thread_0_is_judged_and_nothing_when_no_item_is_valid() -> None:
    spec = _spec("sum", block=(3,), ipt=1)
    assert _wrong(spec, [1, 2, 3], 3, 6) == [False] * 6  # threads 1 and 2 returned 99: undefined there
    assert _wrong(spec, [1, 2, 3], 0, 12345) == [False] * 6
    assert _wrong(spec, [1, 2, 3], 0, 0, flags=(2,)) == [False] * 5 + [True]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["min", "max"])
def test_a_signalling_nan_is_ignored_like_a_quiet_one(op: str, dtype: str) -> None:
    """Found on the H200: np.fmax / np.fmin return NaN for a signalling NaN operand (IEEE 754-2008's maxNum),
    where CUDA's fmaxf and the contract ignore it, so an oracle folding with them called numba's right result
    wrong. The NaN here is the one of that case: sign set, quiet bit clear, a payload."""
    spec = _spec(op, dtype, block=(7,), ipt=1)
    items = np.array([[-3.0, 5.0, 0.25, -7.0, 1.0, 0.0, -0.5]], dtype=dtype)
    raw = items.view(f"uint{items.itemsize * 8}")  # a Python float would quieten the NaN: set its bits in place
    raw[0, 5] = {2: 0xFD0A, 4: 0xFF82A281, 8: 0xFFF02A2810000000}[items.itemsize]
    assert np.isnan(items[0, 5])
    want = 5.0 if op == "max" else -7.0
    batch = coopcheck.ReduceBatch(items[0], np.array([7], np.int32), np.ones(1, dtype=dtype), spec.tile)
    out = np.zeros(oracle.out_length(spec), dtype=dtype)
    assert folds.reference(spec, items, np.array([7]))[0] == want
    for result, wrong in ((want, False), (-0.5, True)):  # -0.5: what folding with np.fmax / np.fmin gives
        out[0] = result
        assert oracle.compare(spec, batch, out)[2][0][0] == wrong


def test_float_min_and_max_ignore_nans_and_keep_the_sign_of_zero() -> None:
    nan = float(np.float32(np.nan))
    spec = _spec("min", "float32")
    assert not _wrong(spec, [3.0, nan, -0.0, 1.0], 4, -0.0)[0]
    assert _wrong(spec, [3.0, nan, -0.0, 1.0], 4, 0.0)[0]  # +0.0 is not among the items
    assert not _wrong(spec, [0.0, nan, -0.0, 1.0], 4, 0.0)[0]  # both zeros are minimal: either
    assert _wrong(spec, [3.0, nan, 2.0, 1.0], 4, nan)[0]  # a NaN only when every valid item is one
    assert not _wrong(spec, [nan, 2.0, 2.0, 2.0], 1, nan)[0]
    assert not _wrong(_spec("max", "float64"), [-3.0, nan, -0.0, -1.0], 4, -0.0)[0]


def test_a_float_sum_is_judged_within_its_bound_and_exactly_when_every_order_is_exact() -> None:
    spec = _spec("sum", "float32")
    items = [0.1, 0.2, 0.3, 0.4]
    bound, exact = folds.sum_bound(spec, np.array([items], np.float32), np.array([4]))
    assert not exact[0] and 0 < bound[0] < 1e-6
    total = float(np.float64(np.array(items, np.float32).astype(np.float64).sum()))
    assert not _wrong(spec, items, 4, total)[0]
    assert _wrong(spec, items, 4, total + 10 * bound[0])[0]
    assert oracle.check_ids(spec, _batch(spec, items, 4), np.array([0]))[0, 0] == oracle.BOUND
    integral = [3.0, -1.0, 8.0, 2.0]
    assert oracle.check_ids(spec, _batch(spec, integral, 4), np.array([0]))[0, 0] == oracle.RESULT
    assert _wrong(spec, integral, 4, float(np.nextafter(np.float32(12.0), np.float32(13.0))))[0]


@pytest.mark.parametrize("op", ["first", "min", "max", "sum"])
def test_the_invalid_items_are_what_shows_a_result_that_takes_them(op: str) -> None:
    point = (("dtype", "int8"), ("block", "65"), ("ipt", 3), ("alg", "raking"), ("op", op))
    cases = point_cases(REDUCE, "numba", point)
    launch = oracle.build(cases[0].spec, cases, 7)
    batch, tile = launch.batch, cases[0].spec.tile
    items = np.asarray(batch.items).reshape(-1, tile)
    invalid = np.arange(tile)[None, :] >= np.asarray(batch.valid)[:, None]
    if op == "first":
        assert (items[invalid] == np.repeat(batch.sentinel, tile).reshape(-1, tile)[invalid]).all()
        assert not (items[~invalid] == np.repeat(batch.sentinel, tile).reshape(-1, tile)[~invalid]).any()
    elif op in ("min", "max"):
        assert (items[invalid] == (-128 if op == "min" else 127)).all()
    assert len(batch.valid) == len(cases) * oracle.blocks_per_case(cases[0].spec)


def test_a_reversed_reduction_and_a_result_in_the_last_thread_are_diagnosed() -> None:
    spec = _spec("first", "int32", block=(2,), ipt=2)
    launch = oracle.Launch(spec, (), _batch(spec, [0, 5, 6, 0], 4), np.zeros(1, np.int64), np.zeros(1, np.int64),
                           ("random",), 0)
    reversed_out = np.array([6, 99, 0, 0], np.int32)
    got, _, wrong = oracle.compare(spec, launch.batch, reversed_out)
    assert oracle.explain(spec, launch.batch, got, wrong, launch, np.array([True])) == {0: ("operands-reversed",)}
    last = np.array([99, 5, 0, 0], np.int32)
    got, _, wrong = oracle.compare(spec, launch.batch, last)
    assert oracle.explain(spec, launch.batch, got, wrong, launch, np.array([True])) == {0: ("result-in-last-thread",)}
