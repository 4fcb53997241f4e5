"""Case expansion: profile sizes, the pr covering property, unique and parseable ids, seeds."""

from __future__ import annotations

import itertools

import coopcheck
import pytest

from harness.boundaries import VALID_BOUNDARIES
from harness.cases import case_from_id, expand, kernel_points, point_cases
from harness.contracts import Contract, load_contracts
from harness.errors import CaseIdError

CONTRACTS = {c.id: c for c in load_contracts()}
#: The contracts whose cases sweep valid_items with every offset and oob default (Load and Store; Reduce sweeps
#: valid_items alone, and its tests say how).
PARTIAL_TILES = sorted(cid for cid, c in CONTRACTS.items() if c.operation in ("block.load", "block.store"))


@pytest.fixture(params=sorted(CONTRACTS))
def contract(request: pytest.FixtureRequest) -> Contract:
    return CONTRACTS[request.param]


@pytest.fixture(params=PARTIAL_TILES)
def swept(request: pytest.FixtureRequest) -> Contract:
    return CONTRACTS[request.param]


@pytest.mark.parametrize("contract_id", PARTIAL_TILES)
def test_full_profile_is_the_grid_minus_exclusions(contract_id: str) -> None:
    contract = CONTRACTS[contract_id]
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


def _holds(params: dict[str, object], combination: dict[str, object]) -> bool:
    return all(params[axis] == value for axis, value in combination.items())


def test_pr_profile_exercises_every_combination_of_values_each_rule_speaks_of(contract: Contract) -> None:
    """A rule speaks of every combination of the values its ``when`` names: each one that some case of the full
    grid holds, some pr case holds too, or a backend breaking the rule there passes pr (all-pairs holds a rule of two
    axes; one of three did not: an exclusive sum without a seed)."""
    pr = [dict(c.params) for c in expand(contract, "t", "pr") if c.reject is None]
    for rule in contract.rules:
        axes = list(rule.when)
        for values in itertools.product(*(rule.when[a] for a in axes)):
            combination = dict(zip(axes, values, strict=True))
            if any(_holds(params, combination) for params in pr):
                continue
            kernel = {a: v for a, v in combination.items() if a in contract.kernel_axes}
            full = [dict(c.params) for point in kernel_points(contract, "full") if _holds(dict(point), kernel)
                    for c in point_cases(contract, "t", point)]
            held = next((params for params in full if _holds(params, combination)), None)
            assert held is None, f"{contract.id}: rule {rule.name}: no pr case holds {combination} (full: {held})"


def test_every_kernel_point_sweeps_the_valid_items_boundaries_with_every_offset_and_oob(swept: Contract) -> None:
    contract = swept
    point = (("dtype", "int32"), ("block", "256"), ("ipt", 4), ("alg", "striped"))
    cases = point_cases(contract, "numba", point)
    values = {c["valid"]: c.valid_items() for c in cases}
    assert {k: values[k] for k in VALID_BOUNDARIES} == {
        "full": 1024, "zero": 0, "one": 1, "tile-1": 1023, "ipt-1": 3, "ipt": 4, "ipt+1": 5, "threads-1": 255,
        "threads": 256, "threads+1": 257, "warp-1": 127, "warp": 128, "warp+1": 129, "half": 512, "tile-ipt": 1020}
    assert all(1 <= values[k] < 1024 for k in ("rand.1", "rand.2"))
    per_valid = len(cases) // len(values)
    assert per_valid == len(contract.axes["offset"]) * len(contract.axes.get("oob", ["-"]))


def test_boundaries_that_coincide_or_fall_outside_the_tile_run_once(swept: Contract) -> None:
    """block 32, ipt 1: tile 32, so threads+1 and warp+1 do not exist and ipt, threads, warp repeat others."""
    contract = swept
    point = (("dtype", "uint8"), ("block", "32"), ("ipt", 1), ("alg", "direct"))
    cases = point_cases(contract, "numba", point)
    values = {}
    for case in cases:
        values.setdefault(case["valid"], case.valid_items())
    assert "threads+1" not in values and "warp+1" not in values and "ipt" not in values
    assert len(set(values.values())) == len(values)
    assert {"full", "zero", "one", "tile-1", "ipt+1", "half"} <= set(values)


def test_an_id_naming_a_boundary_its_kernel_point_lacks_is_refused(swept: Contract) -> None:
    contract = swept
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


EXCHANGE = CONTRACTS["block.exchange"]
WARP_METHODS = ("warp_striped_to_blocked", "blocked_to_warp_striped")


def test_exchange_full_profile_is_the_grid_minus_warp_methods_on_a_partial_last_warp() -> None:
    axes = [EXCHANGE.axes[a] for a in EXCHANGE.kernel_axes]
    partial_last_warp = [b for b in EXCHANGE.axes["block"] if (n := eval(b.replace("x", "*"))) > 32 and n % 32]
    excluded = len(WARP_METHODS) * len(partial_last_warp) * len(EXCHANGE.axes["dtype"]) * len(EXCHANGE.axes["ipt"]) \
        * len(EXCHANGE.axes["slicing"]) * len(EXCHANGE.axes["output"])
    assert partial_last_warp == ["100", "10x5"]
    assert len(kernel_points(EXCHANGE, "full")) == len(list(itertools.product(*axes))) - excluded


def test_a_family_kernel_axis_is_part_of_the_spec_its_symbol_and_its_group() -> None:
    """slicing and output are compile-time: they split groups, and no two specializations share a symbol."""
    points = kernel_points(EXCHANGE, "pr")
    specs = {point_cases(EXCHANGE, "numba", p)[0].spec for p in points}
    assert len(specs) == len(points)
    one = point_cases(EXCHANGE, "numba", points[0])[0]
    assert one.spec.variant == (("slicing", one["slicing"]), ("output", one["output"]))
    assert one.spec.static("output") == one["output"] and one.kernel_id.endswith(f"output={one['output']}")
    symbols = {coopcheck.kernel_symbol(s, include_block=True) for s in specs}
    assert len(symbols) == len(specs)
    assert not [(a, b) for a in symbols for b in symbols if a != b and a in b], "a symbol holds another's"


@pytest.mark.parametrize(("method", "ranks"), [
    ("striped_to_blocked", ["none"]),
    ("blocked_to_warp_striped", ["none"]),
    ("scatter_to_blocked", ["identity", "reverse", "random"]),
    ("scatter_to_striped", ["identity", "reverse", "random"]),
    ("scatter_to_striped_guarded", ["identity", "reverse", "random", "partial", "sparse"]),
    ("scatter_to_striped_flagged", ["identity", "reverse", "random", "partial", "sparse"]),
])
def test_the_only_tables_give_each_method_its_rank_patterns(method: str, ranks: list[str]) -> None:
    point = (("dtype", "int32"), ("block", "64"), ("ipt", 2), ("alg", method), ("slicing", "on"),
             ("output", "inplace"))
    assert [c["ranks"] for c in point_cases(EXCHANGE, "numba", point)] == ranks


def test_an_id_naming_a_value_its_kernel_point_lacks_is_refused() -> None:
    good = "block.exchange/numba/dtype=int32,block=64,ipt=2,alg=scatter_to_striped,slicing=on,output=inplace"
    assert case_from_id(good + ",ranks=random", CONTRACTS.values())["ranks"] == "random"
    with pytest.raises(CaseIdError, match=r"ranks=partial does not exist in this kernel point"):
        case_from_id(good + ",ranks=partial", CONTRACTS.values())


def test_the_smoke_profile_of_a_contract_without_valid_items_keeps_its_cases() -> None:
    smoke = [c for c in expand(EXCHANGE, "numba", "smoke") if c.reject is None]
    assert len(smoke) == sum(len(point_cases(EXCHANGE, "numba", p)) for p in kernel_points(EXCHANGE, "smoke")) > 0


SHUFFLE = CONTRACTS["block.shuffle"]


def test_shuffle_full_profile_is_the_grid_minus_offset_and_rotate_above_one_item() -> None:
    axes = [SHUFFLE.axes[a] for a in SHUFFLE.kernel_axes]
    excluded = 2 * (len(SHUFFLE.axes["ipt"]) - 1) * len(SHUFFLE.axes["dtype"]) * len(SHUFFLE.axes["block"]) \
        * len(SHUFFLE.axes["output"])
    assert len(kernel_points(SHUFFLE, "full")) == len(list(itertools.product(*axes))) - excluded


@pytest.mark.parametrize(("method", "block", "distances"), [
    ("offset", "8x4x2", ["0", "1", "-1", "warp", "-warp", "last", "-last", "rand"]),
    ("offset", "32", ["0", "1", "-1", "last", "-last", "rand"]),
    ("rotate", "100", ["1", "warp", "last", "rand"]),
    ("rotate", "7", ["1", "last", "rand"]),
    ("up", "1024", ["none"]),
    ("down_prefix", "5x3x2", ["none"]),
])
def test_the_only_tables_give_each_method_its_distances(method: str, block: str, distances: list[str]) -> None:
    point = (("dtype", "int32"), ("block", block), ("ipt", 1), ("alg", method), ("output", "inplace"))
    assert [c["distance"] for c in point_cases(SHUFFLE, "numba", point)] == distances


def test_a_shuffle_id_naming_a_distance_its_kernel_point_lacks_is_refused() -> None:
    good = "block.shuffle/numba/dtype=int32,block=32,ipt=1,alg=rotate,output=inplace"
    assert case_from_id(good + ",distance=last", CONTRACTS.values())["distance"] == "last"
    for absent in ("-1", "warp", "none"):
        with pytest.raises(CaseIdError, match=f"distance={absent} does not exist in this kernel point"):
            case_from_id(good + f",distance={absent}", CONTRACTS.values())


def test_a_shuffle_reject_case_carries_its_static_distance_in_its_spec_and_id() -> None:
    rejects = {c.reject.name: c for c in expand(SHUFFLE, "numba", "pr") if c.reject is not None}
    case = rejects["rotate-full-turn"]
    assert case.spec.static("static_distance") == 32 and "static_distance=32,reject=rotate-full-turn" in case.id
    assert case_from_id(case.id, CONTRACTS.values()).spec == case.spec
