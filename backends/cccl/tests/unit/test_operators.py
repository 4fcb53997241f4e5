"""The operators handed to cuda.coop's ``make_reduce`` and ``make_scan`` compute the contract's operators: folded over a
tile in order as plain Python (the code numba compiles for the GPU), they give the oracle's reference bit for bit;
``first`` records exactly the operands equal to the sentinel, and the Scan prefix callback carries its running prefix
as the Scan oracle seeds tile after tile."""

from __future__ import annotations

import functools

import coopcheck
import numpy as np
import pytest
from coopcheck_cccl import operators

from harness.oracles import block_scan
from harness.oracles.folds import reference
from harness.oracles.operands import matmul
from harness.oracles.values import raw_view

INTEGERS = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float32", "float64"]
N = 37


def _items(dtype: str, seed: int, specials: bool) -> np.ndarray:
    """Random bits of ``dtype``; for floats, NaNs (signalling ones too), infinities and both zeros among them."""
    rng = np.random.default_rng(seed)
    width = np.dtype(dtype).itemsize
    items = rng.integers(0, 256, N * width, dtype=np.uint8).view(dtype).copy()
    if specials and np.dtype(dtype).kind == "f":
        bits = {"float32": (0x7FA00001, 0x7FC00000, 0x7F800000, 0xFF800000, 0x80000000, 0)}.get(
            dtype, (0x7FF4000000000001, 0x7FF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
                    0x8000000000000000, 0))
        at = rng.choice(N, len(bits), replace=False)
        raw_view(items)[at] = np.array(bits, raw_view(items).dtype)
    return items


def _reference(dtype: str, op: str, items: np.ndarray) -> np.ndarray:
    spec = coopcheck.KernelSpec("block.reduce", dtype, (N,), 1, "raking", variant=(("op", op),))
    return reference(spec, items[None, :], np.array([N]))


@pytest.mark.parametrize("dtype", INTEGERS + FLOATS)
@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize("seed", [1, 2])
def test_min_and_max_fold_to_the_oracles_reference(dtype: str, op: str, seed: int) -> None:
    items = _items(dtype, seed, specials=True)
    folded = functools.reduce(operators.operator(op, np.dtype(dtype)), items)
    want = _reference(dtype, op, items)
    if np.isnan(want[0]):
        assert np.isnan(folded)
    else:
        assert raw_view(np.array([folded], dtype)) == raw_view(want) or folded == want[0] == 0  # either zero


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matmul_folds_to_the_oracles_reference(dtype: str, seed: int) -> None:
    items = _items(dtype, seed, specials=False)
    folded = functools.reduce(operators.operator("matmul", np.dtype(dtype)), items)
    assert raw_view(np.array([folded], dtype)) == raw_view(_reference(dtype, "matmul", items))


@pytest.mark.parametrize("dtype", INTEGERS)
def test_matmul_multiplies_every_pair_as_the_oracle_does(dtype: str) -> None:
    """Pairs, not a fold: a long product of random matrices of 2-bit entries is often the zero matrix."""
    a, b = _items(dtype, 4, specials=False), _items(dtype, 5, specials=False)
    op = operators.operator("matmul", np.dtype(dtype))
    got = np.array([op(x, y) for x, y in zip(a, b, strict=True)], dtype)
    want = matmul(raw_view(a).astype(np.uint64), raw_view(b).astype(np.uint64), np.dtype(dtype).itemsize * 2)
    assert (raw_view(got) == want.astype(raw_view(got).dtype)).all()


@pytest.mark.parametrize("dtype", ["int32", "float64", "uint8"])
def test_first_returns_the_first_non_zero_and_records_the_sentinel(dtype: str) -> None:
    first = operators.operator("first", np.dtype(dtype)).op.__call__
    items = np.zeros(N, dtype)
    items[[5, 9]] = np.array([3, 7], dtype)
    if dtype == "float64":
        items[2] = -0.0  # zero too
    state = np.array([11, 0], dtype)  # [sentinel, seen]
    folded = functools.reduce(lambda a, b: first(state, a, b), items)
    assert folded == _reference(dtype, "first", items)[0] == 3 and state[1] == 0
    items[20] = 11
    functools.reduce(lambda a, b: first(state, a, b), items)
    assert state[1] == 1


def test_sum_takes_no_operator() -> None:
    with pytest.raises(ValueError, match="make_sum"):
        operators.operator("sum", np.dtype("int32"))


def _seeds_of_tiles(dtype: str, op: str, mode: str, aggregates: np.ndarray, initial: np.ndarray) -> np.ndarray:
    """What the Scan oracle scans one-item tiles of a one-thread block to with a prefix callback starting at
    ``initial``: exclusive, the seed of each tile (what the callback returns); inclusive, the running prefix after."""
    spec = coopcheck.KernelSpec("block.scan", dtype, (1,), 1, "raking",
                                variant=(("op", op), ("mode", mode), ("seed", "prefix")))
    return block_scan.scan(spec, aggregates[None, :], initial[:1]).value[0, :, 0]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("dtype", "op"), [
    ("int8", "sum"), ("uint64", "sum"), ("int16", "min"), ("uint32", "max"), ("uint8", "matmul"),
    ("int64", "matmul"), ("float32", "min"), ("float64", "max"),
])
def test_the_prefix_callback_carries_its_running_prefix_as_the_scan_oracle_does(dtype: str, op: str) -> None:
    """One call a tile, with the tile's block aggregate: it returns the running prefix and folds the aggregate in;
    its state keeps the last argument and counts the calls (in the dtype)."""
    values = _items(dtype, 6, specials=False)
    initial, aggregates = values[:1], values[1:1 + coopcheck.scan.PREFIX_TILES]
    callback = operators._running_prefix(operators.binary(op, np.dtype(dtype))).__call__
    state = np.array([initial[0], 0, 0], dtype)
    returned, running = [], []
    with np.errstate(over="ignore"):  # integer sums wrap
        for aggregate in aggregates:
            returned.append(callback(state, aggregate))
            running.append(state[operators.RUNNING])
    assert raw_view(np.array(returned, dtype)).tolist() == raw_view(
        _seeds_of_tiles(dtype, op, "exclusive", aggregates, initial)).tolist()
    assert raw_view(np.array(running, dtype)).tolist() == raw_view(
        _seeds_of_tiles(dtype, op, "inclusive", aggregates, initial)).tolist()
    assert raw_view(state[operators.ARGUMENT:]).tolist() == raw_view(np.array([aggregates[-1], 3], dtype)).tolist()


def test_an_operator_the_contract_does_not_name_is_refused() -> None:
    with pytest.raises(ValueError, match="'first' is not a binary operator of the contract"):
        operators.binary("first", np.dtype("int32"))
