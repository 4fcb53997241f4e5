"""Contract loading: the shipped files are valid, and every kind of bad input names file, key and why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.contracts import contracts_dir, load_contract, load_contracts
from harness.errors import ContractError

SHIPPED = contracts_dir() / "block_load.toml"


def test_shipped_contracts_load() -> None:
    contracts = {c.id: c for c in load_contracts()}
    assert set(contracts) == {"block.load", "block.store"}
    assert contracts["block.load"].case_axes == ("valid", "oob", "offset")
    assert "oob" not in contracts["block.store"].axes


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
