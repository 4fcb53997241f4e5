"""Case expansion: profile sizes, the pr covering property, unique and parseable ids, seeds."""

from __future__ import annotations

import itertools

import pytest

from harness.boundaries import VALID_BOUNDARIES
from harness.cases import case_from_id, expand, kernel_points, point_cases
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


def test_pr_profile_covers_every_pair_of_values_of_every_two_kernel_axes(contract: Contract) -> None:
    """All-pairs: a bug confined to a pair of values of any two kernel axes meets some pr kernel point."""
    points = [dict(p) for p in kernel_points(contract, "pr")]
    full = [dict(p) for p in kernel_points(contract, "full")]
    for a, b in itertools.combinations(contract.kernel_axes, 2):
        assert {(p[a], p[b]) for p in points} == {(p[a], p[b]) for p in full}, (a, b)
    assert len(points) < len(full) / 20


def test_every_kernel_point_sweeps_the_valid_items_boundaries_with_every_offset_and_oob(contract: Contract) -> None:
    point = (("dtype", "int32"), ("block", "256"), ("ipt", 4), ("alg", "striped"))
    cases = point_cases(contract, "numba", point)
    values = {c["valid"]: c.valid_items() for c in cases}
    assert {k: values[k] for k in VALID_BOUNDARIES} == {
        "full": 1024, "zero": 0, "one": 1, "tile-1": 1023, "ipt-1": 3, "ipt": 4, "ipt+1": 5, "threads-1": 255,
        "threads": 256, "threads+1": 257, "warp-1": 127, "warp": 128, "warp+1": 129, "half": 512, "tile-ipt": 1020}
    assert all(1 <= values[k] < 1024 for k in ("rand.1", "rand.2"))
    per_valid = len(cases) // len(values)
    assert per_valid == len(contract.axes["offset"]) * len(contract.axes.get("oob", ["-"]))


def test_boundaries_that_coincide_or_fall_outside_the_tile_run_once(contract: Contract) -> None:
    """block 32, ipt 1: tile 32, so threads+1 and warp+1 do not exist and ipt, threads, warp repeat others."""
    point = (("dtype", "uint8"), ("block", "32"), ("ipt", 1), ("alg", "direct"))
    cases = point_cases(contract, "numba", point)
    values = {}
    for case in cases:
        values.setdefault(case["valid"], case.valid_items())
    assert "threads+1" not in values and "warp+1" not in values and "ipt" not in values
    assert len(set(values.values())) == len(values)
    assert {"full", "zero", "one", "tile-1", "ipt+1", "half"} <= set(values)


def test_an_id_naming_a_boundary_its_kernel_point_lacks_is_refused(contract: Contract) -> None:
    good = point_cases(contract, "numba", (("dtype", "uint8"), ("block", "32"), ("ipt", 1), ("alg", "direct")))[0]
    bad = good.id.replace("valid=full", "valid=threads+1")
    with pytest.raises(CaseIdError, match="threads\\+1 does not exist"):
        case_from_id(bad, CONTRACTS.values())


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
