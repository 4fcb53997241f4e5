"""Case expansion: profile sizes, the pr covering property, unique and parseable ids, seeds."""

from __future__ import annotations

import itertools

import pytest

from harness.cases import PR_PAIRS, case_from_id, expand, kernel_points
from harness.contracts import Contract, load_contracts
from harness.errors import CaseIdError

CONTRACTS = {c.id: c for c in load_contracts()}


@pytest.fixture(params=sorted(CONTRACTS))
def contract(request: pytest.FixtureRequest) -> Contract:
    return CONTRACTS[request.param]


def test_full_profile_is_the_grid_minus_exclusions(contract: Contract) -> None:
    axes = [contract.axes[a] for a in contract.kernel_axes]
    grid = list(itertools.product(*axes))
    partial_warp_blocks = [b for b in contract.axes["block"] if eval(b.replace("x", "*")) % 32]
    excluded = len(contract.axes["dtype"]) * len(contract.axes["ipt"]) * len(partial_warp_blocks)
    assert len(kernel_points(contract, "full")) == len(grid) - excluded


def test_pr_profile_covers_every_value_and_pair(contract: Contract) -> None:
    points = [dict(p) for p in kernel_points(contract, "pr")]
    full = [dict(p) for p in kernel_points(contract, "full")]
    for axis in contract.kernel_axes:
        assert {p[axis] for p in points} == set(contract.axes[axis]), axis
    for a, b in PR_PAIRS:
        assert {(p[a], p[b]) for p in points} == {(p[a], p[b]) for p in full}, (a, b)
    cases = expand(contract, "x", "pr")
    algs_by_valid = {(c["alg"], c["valid"]) for c in cases if c.reject is None}
    assert algs_by_valid == set(itertools.product(contract.axes["alg"], contract.axes["valid"]))


def test_pr_profile_is_deterministic(contract: Contract) -> None:
    kernel_points.cache_clear()
    first = kernel_points(contract, "pr")
    kernel_points.cache_clear()
    assert kernel_points(contract, "pr") == first


def test_ids_are_unique_and_round_trip(contract: Contract) -> None:
    cases = expand(contract, "numba", "pr")
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    for case in cases:
        assert case_from_id(case.id, CONTRACTS.values()) == case


def test_seeds_derive_from_id_and_global_seed(contract: Contract) -> None:
    a, b = expand(contract, "numba", "pr")[:2]
    assert a.seed(1) == a.seed(1) != a.seed(2)
    assert a.seed(1) != b.seed(1)


def test_valid_item_classes(contract: Contract) -> None:
    by_class = {c["valid"]: c for c in expand(contract, "numba", "pr") if c.reject is None and c["ipt"] == 7}
    tile = by_class["full"].spec.tile
    assert [by_class[k].valid_items(0) for k in ("full", "zero", "one", "tile-1")] == [tile, 0, 1, tile - 1]
    assert 1 <= by_class["partial"].valid_items(0) < tile - 1


@pytest.mark.parametrize(("case_id", "message"), [
    ("block.nope/numba/dtype=int32", "unknown contract"),
    ("block.load/numba/dtype=int128,block=32,ipt=1,alg=direct", "not a value of axis dtype"),
    ("block.load/numba/colour=red", "not an axis"),
    ("block.load/numba/block=32,dtype=int32,ipt=1,alg=direct", "in the contract's axis order"),
    ("block.load/numba/dtype=int32,block=128,ipt=0,alg=direct,reject=nope", "no reject case"),
])
def test_bad_ids_name_the_problem(case_id: str, message: str) -> None:
    with pytest.raises(CaseIdError, match=message):
        case_from_id(case_id, CONTRACTS.values())
