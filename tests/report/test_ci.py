"""The CI files users drop in: made from contracts/nightly.toml and tox.ini, valid against their published schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.report import ci
from harness.report.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = Path(__file__).parent / "schemas"
SCHEMA_OF = {"pr": "github-workflows.json", "nightly": "github-workflows.json", "gitlab": "gitlab-ci.json"}


def shipped(name: str) -> Any:
    return ci.parse((ROOT / ci.FILES[name]).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(ci.FILES))
def test_each_shipped_file_is_what_the_matrix_and_tox_ini_make(name: str) -> None:
    docs = ci.documents(load_matrix(ROOT / "contracts" / "nightly.toml"), ROOT / "tox.ini")
    assert (ROOT / ci.FILES[name]).read_text(encoding="utf-8") == ci.render(name, docs[name]), (
        "run python -m harness.report.ci")


@pytest.mark.parametrize("name", sorted(ci.FILES))
def test_each_shipped_file_is_valid_against_its_published_schema(name: str) -> None:
    schema = json.loads((SCHEMAS / SCHEMA_OF[name]).read_text(encoding="utf-8"))
    jsonschema.validate(shipped(name), schema, cls=jsonschema.Draft7Validator)


def test_the_schema_refuses_a_broken_workflow() -> None:
    """The schema is no rubber stamp: a job without runs-on is not a workflow."""
    doc = shipped("nightly")
    del doc["jobs"]["lane"]["runs-on"]
    schema = json.loads((SCHEMAS / SCHEMA_OF["nightly"]).read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema, cls=jsonschema.Draft7Validator)


def test_the_nightly_jobs_are_the_matrix_lanes_and_pr_jobs_the_ci_label() -> None:
    lanes = [c.id for c in load_matrix(ROOT / "contracts" / "nightly.toml").expand()[0]]
    assert shipped("nightly")["jobs"]["lane"]["strategy"]["matrix"]["lane"] == lanes
    assert shipped("gitlab")["nightly"]["parallel"]["matrix"] == [{"LANE": lanes}]
    assert shipped("pr")["jobs"]["tox"]["strategy"]["matrix"]["env"] == ["host", "lint", "wheels"]
    assert shipped("gitlab")["tox"]["parallel"]["matrix"] == [{"TOX_ENV": ["host", "lint", "wheels"]}]


def test_check_names_a_file_that_disagrees_with_the_matrix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "contracts").mkdir()
    text = (ROOT / "contracts" / "nightly.toml").read_text(encoding="utf-8")
    (tmp_path / "contracts" / "nightly.toml").write_text(text)
    (tmp_path / "tox.ini").write_text((ROOT / "tox.ini").read_text(encoding="utf-8"))
    assert ci.main(["--root", str(tmp_path), "--check"]) == 1
    assert ci.main(["--root", str(tmp_path)]) == 0
    assert ci.main(["--root", str(tmp_path), "--check"]) == 0
    capsys.readouterr()
    (tmp_path / "contracts" / "nightly.toml").write_text(text.replace('"2.3"', '"2.2"'))
    assert ci.main(["--root", str(tmp_path), "--check"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{ci.FILES[n]}: out of date with contracts/nightly.toml or tox.ini: run python -m harness.report.ci"
        for n in ("nightly", "gitlab")]
