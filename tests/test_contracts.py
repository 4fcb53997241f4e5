"""Contract loading: the shipped files are valid, and every kind of bad input names file, key and why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.contracts import contracts_dir, load_contract, load_contracts
from harness.errors import ContractError

SHIPPED = contracts_dir() / "block_load.toml"
EXCHANGE = contracts_dir() / "block_exchange.toml"


def test_shipped_contracts_load() -> None:
    contracts = {c.id: c for c in load_contracts()}
    assert set(contracts) == {"block.load", "block.store", "block.exchange", "block.shuffle", "block.reduce",
                              "block.scan", "warp.reduce", "warp.scan"}
    assert contracts["block.load"].case_axes == ("valid", "oob", "offset")
    assert "oob" not in contracts["block.store"].axes
    assert contracts["block.exchange"].variant_axes == ("slicing", "output")
    assert contracts["block.exchange"].case_axes == ("ranks",) and contracts["block.load"].variant_axes == ()
    assert contracts["block.shuffle"].variant_axes == ("output",) and contracts["block.shuffle"].case_axes == (
        "distance",)
    assert contracts["block.shuffle"].statics == ("static_distance",)
    assert contracts["block.reduce"].variant_axes == ("op",) and contracts["block.reduce"].case_axes == ("valid",)
    assert contracts["block.scan"].variant_axes == ("op", "mode", "seed") and contracts["block.scan"].case_axes == (
        "init",)
    assert contracts["warp.reduce"].variant_axes == ("width", "op", "mode") and contracts["warp.reduce"].case_axes == (
        "lanes",)
    assert contracts["warp.scan"].variant_axes == ("width", "op", "mode", "seed", "aggregate")
    assert contracts["warp.scan"].case_axes == ("init",)


def _mutated(tmp_path: Path, old: str, new: str) -> Path:
    text = SHIPPED.read_text()
    assert old in text, old
    path = tmp_path / "broken.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(("old", "new", "message"), [
    ('"uint8", "int8"', '"uint8", "int128"', r"axes\.dtype\[1\]: 'int128' is not one of"),
    ("ipt = [1, 2,", 'ipt = ["one", 2,', r"axes\.ipt\[0\]: 'one' is not of type 'integer'"),
    ("schema = 1", "schema = 1\ncolour = 'red'", r"\(top level\): Additional properties are not allowed \('colour'"),
    ('block = ["32"', 'block = ["32x"', r"axes\.block\[0\]: '32x' does not match"),
    ('case = ["valid", "oob", "offset"]', 'case = ["valid", "offset"]', r"roles\.case: must list exactly"),
    ("rule = \"items_per_thread\"", "rule = \"warp_multiple\"", r"reject\[0\]: breaks rule 'items_per_thread'"),
    ('static_offset = -1 }', 'static_offset = 0 }', r"reject\[5\]: breaks no static rule"),
    ('check = "oob-default-fills"', 'check = "oob-fills"', r"rules\[7\]\.check: 'oob-fills' is not one of"),
    ('alg = ["direct", "striped", "vectorize", "transpose", "warp_transpose"]',
     'alg = ["direct", "direct"]', r"axes\.alg: \['direct', 'direct'\] has non-unique elements"),
])
def test_bad_contract_names_file_key_and_expectation(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = _mutated(tmp_path, old, new)
    with pytest.raises(ContractError, match=re.escape(str(path)) + ": " + message):
        load_contract(path)


def test_not_toml(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text("schema = = 1")
    with pytest.raises(ContractError, match=r"x\.toml: not valid TOML"):
        load_contract(path)


def test_duplicate_contract_ids(tmp_path: Path) -> None:
    for name in ("a.toml", "b.toml"):
        (tmp_path / name).write_text(SHIPPED.read_text())
    with pytest.raises(ContractError, match=r"b\.toml: contract id 'block\.load' is also declared by"):
        load_contracts(tmp_path)


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="no contract files"):
        load_contracts(tmp_path)


def test_rule_attribution_narrows_to_the_rules_that_speak_of_the_case() -> None:
    load = {c.id: c for c in load_contracts()}["block.load"]
    plain = {"dtype": "int32", "block": "64", "ipt": 4, "alg": "direct", "valid": "full", "oob": "none",
             "offset": "zero"}
    assert load.rules_for_check("valid-items-placed", plain) == ["arrangement", "valid-prefix", "offset", "bit-exact"]
    odd = {**plain, "block": "5x3x2", "alg": "vectorize", "valid": "threads+1", "offset": "misaligned"}
    assert load.rules_for_check("valid-items-placed", odd) == [
        "rank-order", "arrangement", "valid-prefix", "offset", "vectorize-fallback", "bit-exact"]


def test_rule_conditions_must_name_axis_values(tmp_path: Path) -> None:
    path = _mutated(tmp_path, 'when = { alg = ["vectorize"]', 'when = { alg = ["vectorise"]')
    with pytest.raises(ContractError, match=r"rules\[4\]\.when\.alg: \['vectorise'\] are not values"):
        load_contract(path)


@pytest.mark.parametrize(("old", "new", "message"), [
    ('alg = ["striped_to_blocked",', 'alg = ["direct", "striped_to_blocked",',
     r"axes\.alg\[0\]: 'direct' is not one of"),
    ('slicing = ["off", "on"]', 'slicing = ["off", "sometimes"]', r"axes\.slicing\[1\]: 'sometimes' is not one of"),
    ('kernel = ["dtype", "block", "ipt", "alg", "slicing", "output"]', 'kernel = ["dtype", "block", "alg", "slicing", '
     '"output"]', r"roles\.kernel: must list dtype, block, ipt, alg"),
    ('case = ["ranks"]', 'case = ["ranks", "output"]', r"roles\.case: must list exactly the non-kernel axes"),
    ('axis = "ranks"\nvalues = ["none"]', 'axis = "slicing"\nvalues = ["off"]', r"only\[0\]\.axis: 'slicing' is not a "
     r"case axis"),
    ('values = ["partial", "sparse"]', 'values = ["partial", "dense"]',
     r"only\[2\]\.values: \['dense'\] are not values"),
    ('when = { alg = ["scatter_to_striped_guarded", "scatter_to_striped_flagged"] }\nreason',
     'when = { ranks = ["random"] }\nreason', r"only\[2\]\.when\.ranks: not a kernel axis"),
    ('when = { slicing = ["off"] }', 'when = { slicing = ["of"] }', r"resources\[2\]\.when\.slicing: \['of'\] are "
     r"not values"),
    ('slicing = "off", output = "aliased" }', 'output = "aliased" }', r"reject\[3\]\.params: lacks the kernel axes "
     r"\['slicing'\]"),
])
def test_a_bad_family_axis_names_file_key_and_expectation(tmp_path: Path, old: str, new: str, message: str) -> None:
    """A family's own axes are checked as the common ones are: the oracle's vocabulary fills the schema."""
    text = EXCHANGE.read_text()
    assert old in text, old
    path = tmp_path / "broken.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ContractError, match=re.escape(str(path)) + ": " + message):
        load_contract(path)


def test_resource_rules_apply_where_their_when_holds() -> None:
    exchange = {c.id: c for c in load_contracts()}["block.exchange"]
    point = {"dtype": "int32", "block": "128", "ipt": 2, "alg": "blocked_to_warp_striped", "output": "inplace"}
    unsliced, sliced = (exchange.resources_for({**point, "slicing": s}) for s in ("off", "on"))
    assert [r.get("forbid_sass") for r in unsliced] == [["CALL", "LDL", "STL"], None, ["BAR"]]
    assert [r.get("require_sass") for r in sliced] == [None, ["BAR", "STS", "LDS"], ["BAR", "STS", "LDS"]]
    assert not any("when" in r for r in unsliced + sliced)
    one_warp = exchange.resources_for({**point, "slicing": "on", "block": "32"})
    assert len(one_warp) == 2  # one warp takes no turns: no block barrier required
