"""The coverage manifest: the shipped one asks every evidence kind of every backend; bad entries are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.contracts import contracts_dir
from harness.coverage import EVIDENCE, Cell, load_coverage
from harness.errors import ContractError
from harness.lanes import SANITIZER_TOOLS

CELL = '[[cell]]\ncontract = "block.load"\nbackends = ["numba"]\nevidence = ["runtime"]\n'


def test_the_shipped_manifest_asks_gpu_and_every_sanitizer_lane_of_every_backend() -> None:
    cells = load_coverage(contracts_dir() / "coverage.toml")
    kinds = ["reject", "compile", "resources", "runtime", *SANITIZER_TOOLS]
    device_only = [k for k in kinds if k not in ("compile", "resources")]  # cccl compiles only on a GPU
    assert set(cells) == {Cell(c, b, k) for c in ("block.load", "block.store", "block.exchange", "block.shuffle")
                          for b in ("numba", "cutlass", "rustfatbin") for k in kinds} | {
        Cell(c, "cccl", k) for c in ("block.load", "block.store", "block.exchange", "block.reduce", "block.scan",
                                     "warp.reduce", "warp.scan") for k in device_only} | {
        Cell(c, b, k) for c in ("block.reduce", "block.scan") for b in ("numba", "cutlass", "rustfatbin")
        for k in kinds} | {
        Cell(c, b, k) for c in ("warp.reduce", "warp.scan") for b in ("numba", "cutlass", "rustfatbin")
        for k in kinds}  # the warp families' builders on the host
    assert [EVIDENCE[k].lane for k in kinds] == ["host", "host", "host", "gpu", *(f"gpu-{t}" for t in SANITIZER_TOOLS)]
    assert [EVIDENCE[k].tool for k in kinds] == [None, None, None, None, *SANITIZER_TOOLS]


@pytest.mark.parametrize(("text", "message"), [
    ("schema = 2\n" + CELL, r"c.toml: schema: expected 1"),
    ("schema = 1\n", r"c.toml: cell: expected \[\[cell\]\] tables"),
    ("schema = 1\ncells = 1\n", r"c.toml: unknown keys \['cells'\]"),
    ("schema = 1\n" + CELL.replace('["runtime"]', '["runtime", "speed"]'),
     r"c.toml: cell\[0\].evidence: \['speed'\] not among reject, compile, resources, runtime, racecheck"),
    ("schema = 1\n" + CELL.replace('["numba"]', "[]"), r"c.toml: cell\[0\].backends: expected a non-empty list"),
    ("schema = 1\n" + CELL.replace("contract =", "contracts ="), r"cell\[0\]: expected exactly contract, backends"),
    ("schema = 1\n" + CELL + CELL, r"c.toml: cell\[1\]: cell block.load x numba x runtime is listed twice"),
])
def test_a_bad_manifest_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ContractError, match=message):
        load_coverage(path)
