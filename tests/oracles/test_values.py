"""The data of a launch: every bit of every dtype in both states in each role, every element of a block told
apart from every other in some pattern, and a case's data independent of the launch it rides in."""

from __future__ import annotations

import coopcheck
import numpy as np
import pytest

from harness.cases import Case, point_cases
from harness.contracts import load_contracts
from harness.oracles import block_load_store as oracle
from harness.oracles.values import raw_view, specials

SEED = 7
#: Small and large tiles: a 30-thread 3-D block with ipt 1 has fewer items than a 64-bit dtype has bits.
SHAPES = [("5x3x2", 1), ("128", 4), ("1024", 16)]


def _group(contract_id: str, dtype: str, block: str, ipt: int) -> tuple[coopcheck.KernelSpec, list[Case]]:
    contract = next(c for c in load_contracts() if c.id == contract_id)
    point = (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", "direct"))
    cases = point_cases(contract, "model", point)
    return cases[0].spec, cases


def _roles(launch: oracle.Launch) -> dict[str, np.ndarray]:
    """Raw bits per role, one row per block."""
    b, n = launch.batch, launch.batch.n_blocks
    if isinstance(b, coopcheck.LoadBatch):
        arrays = {"src": b.src, "sentinel": b.init, "oob": b.oob}
    else:
        arrays = {"src": b.items, "sentinel": b.dst}
    return {role: raw_view(np.asarray(a)).reshape(n, -1) for role, a in arrays.items()}


@pytest.mark.parametrize("contract_id", ["block.load", "block.store"])
@pytest.mark.parametrize("dtype", coopcheck.DTYPES)
@pytest.mark.parametrize(("block", "ipt"), SHAPES)
def test_every_bit_takes_both_states_in_every_role_of_every_case(contract_id: str, dtype: str, block: str,
                                                                 ipt: int) -> None:
    spec, cases = _group(contract_id, dtype, block, ipt)
    launch = oracle.build(spec, cases, SEED)
    ones = np.iinfo(np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")).max
    for role, raw in _roles(launch).items():
        for k in range(len(cases)):
            rows = raw[launch.case_of_block == k]
            assert np.bitwise_or.reduce(rows, axis=None) == ones, (role, cases[k].id, "a bit is never 1")
            assert np.bitwise_and.reduce(rows, axis=None) == 0, (role, cases[k].id, "a bit is never 0")


@pytest.mark.parametrize("contract_id", ["block.load", "block.store"])
@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "int64"])
@pytest.mark.parametrize(("block", "ipt"), SHAPES)
def test_every_element_of_a_block_differs_from_every_other_in_some_pattern(contract_id: str, dtype: str,
                                                                          block: str, ipt: int) -> None:
    """So a value moved from any other slot (or role) into a slot shows in at least one block of the case."""
    spec, cases = _group(contract_id, dtype, block, ipt)
    launch = oracle.build(spec, cases[:3], SEED)
    roles = _roles(launch)
    for k in range(3):
        rows = np.flatnonzero(launch.case_of_block == k)
        # one column per element of the block (all roles), one row per pattern
        codes = np.concatenate([roles[r][rows] for r in roles], axis=1)
        assert codes.shape[1] == oracle.n_codes(spec)
        assert len({tuple(col) for col in codes.T.tolist()}) == codes.shape[1]


@pytest.mark.parametrize("dtype", coopcheck.DTYPES)
def test_items_carry_the_special_values(dtype: str) -> None:
    """0, all-ones (-1), the top bit alone, the largest positive value, 1 (and the float specials) are moved."""
    spec, cases = _group("block.load", dtype, "128", 4)
    src = _roles(oracle.build(spec, cases, SEED))["src"]
    assert set(specials(dtype).tolist()) <= set(np.unique(src).tolist())
    if np.dtype(dtype).kind == "i":
        assert (np.asarray(oracle.build(spec, cases, SEED).batch.src) < 0).any()


def test_a_cases_data_does_not_depend_on_the_launch_it_rides_in() -> None:
    spec, cases = _group("block.load", "uint16", "64", 2)
    alone = oracle.build(spec, cases[5:6], SEED)
    among = oracle.build(spec, cases, SEED)
    for p in range(len(alone.patterns)):
        a = _roles(alone)["src"][(alone.pattern_of_block == p)]
        b = _roles(among)["src"][(among.case_of_block == 5) & (among.pattern_of_block == p)]
        assert np.array_equal(a, b)


def test_the_block_order_follows_the_seed() -> None:
    """Identical inputs give an identical launch; another global seed puts the cases elsewhere in the grid."""
    spec, cases = _group("block.store", "int32", "64", 2)
    first, again, other = (oracle.build(spec, cases, s) for s in (SEED, SEED, SEED + 1))
    assert np.array_equal(first.case_of_block, again.case_of_block)
    assert not np.array_equal(first.case_of_block, other.case_of_block)
    assert sorted(first.case_of_block.tolist()) == sorted(np.repeat(np.arange(len(cases)), len(first.patterns)))
