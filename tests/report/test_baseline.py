"""The baseline file: product-set packing round-trips, stays small, and is read back with errors named."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import caseid
from harness.expectations import Ledger, load_expectations
from harness.report.baseline import pack, read_baseline, unpack, write_baseline
from harness.report.errors import ReportError
from harness.report.verdicts import load_lanes
from harness.statuses import Status
from tests.report.journals import WAIVER, case_id

DTYPES = ["int8", "int32", "float16"]
BLOCKS = ["32", "100", "16x8"]
IPTS = ["1", "4", "16"]


def compile_id(backend: str, dtype: str, block: str, ipt: str) -> str:
    return caseid.render("block.store", backend, [("dtype", dtype), ("block", block), ("ipt", ipt),
                                                  ("alg", "direct")])


@given(st.sets(st.tuples(st.sampled_from(["numba", "cutlass"]), st.sampled_from(DTYPES), st.sampled_from(BLOCKS),
                         st.sampled_from(IPTS)), min_size=1),
       st.sets(st.sampled_from(["full", "zero", "partial"])))
def test_pack_then_unpack_gives_the_same_ids(points: set[tuple[str, str, str, str]], valids: set[str]) -> None:
    ids = {compile_id(*p) for p in points} | {case_id("rustfatbin", valid=v) for v in valids}
    assert set(unpack(pack(ids), "test")) == ids


def test_a_full_cross_product_packs_into_one_chain() -> None:
    ids = [compile_id("numba", d, b, i) for d in DTYPES for b in BLOCKS for i in IPTS]
    assert pack(ids) == {"block.store/numba": {"dtype,block,ipt,alg": {
        "float16|int8|int32": {"16x8|32|100": {"1|4|16": "direct"}}}}}  # numbers sort as numbers


def test_values_sort_naturally_and_siblings_with_equal_subtrees_merge() -> None:
    ids = [compile_id("numba", "int8", b, "1") for b in ("100", "32", "4x4")]
    ids.append(compile_id("numba", "int32", "32", "4"))
    assert pack(ids)["block.store/numba"]["dtype,block,ipt,alg"] == {
        "int8": {"4x4|32|100": {"1": "direct"}}, "int32": {"32": {"4": "direct"}}}


def test_the_baseline_groups_by_lane_acceptance_and_status(journal: Callable[..., Path], tmp_path: Path) -> None:
    """It stores resolved verdicts: what the expectations in force made of them, naming the file."""
    path = journal("gpu", [(case_id("numba"), Status.PASS), (case_id("cutlass"), Status.FAIL),
                           (case_id("rustfatbin"), Status.NOT_SUPPORTED),
                           (case_id("rustfatbin", valid="zero"), Status.NOT_SUPPORTED)])
    waivers = tmp_path / "waivers.toml"
    waivers.write_text(f'schema = 1\n[[expect]]\ncases = "{case_id("rustfatbin")}"\nstatus = "NotSupported"\n'
                       f'bug = "{WAIVER}"\nexpires = 2099-01-01\nreason = "declared"\n')
    out = tmp_path / "baselines" / "gpu.json"
    doc = write_baseline(load_lanes([path], ledger=Ledger(load_expectations(waivers))), out, waivers)
    assert doc["expectations"] == {"name": waivers.name, "sha256": hashlib.sha256(waivers.read_bytes()).hexdigest()}
    assert {g: list(s) for g, s in doc["lanes"]["gpu"].items()} == {
        "accepted": ["Pass", "NotSupported"], "not_accepted": ["NotSupported", "Fail"]}
    assert read_baseline(out) == {"gpu": {
        case_id("numba"): (Status.PASS, True), case_id("cutlass"): (Status.FAIL, False),
        case_id("rustfatbin"): (Status.NOT_SUPPORTED, True),
        case_id("rustfatbin", valid="zero"): (Status.NOT_SUPPORTED, False)}}


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not valid JSON"),
    ('{"kind": "coop-baseline", "schema": 2}', "not a schema-1 coop-baseline file"),
    ('{"kind": "coop-baseline", "schema": 1, "lanes": {"gpu": {"passing": {}}}}',
     "lanes.gpu.passing: expected one of accepted, not_accepted"),
    ('{"kind": "coop-baseline", "schema": 1, "lanes": {"gpu": {"accepted": {"Passed": {}}}}}',
     "lanes.gpu.accepted.Passed: not a status"),
    ('{"kind": "coop-baseline", "schema": 1, "lanes": {"gpu": {"accepted": {"Pass": '
     '{"block.load/numba": {"dtype,block": "int32"}}}}}}',
     r"lanes.gpu.accepted.Pass.block.load/numba.dtype,block: a value list stands where 2 more parameters are due"),
    ('{"kind": "coop-baseline", "schema": 1, "lanes": {"gpu": {"accepted": {"Pass": '
     '{"block.load/numba": {"dtype": "in t32"}}}}}}', "dtype='in t32'"),
])
def test_a_bad_baseline_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text)
    with pytest.raises(ReportError, match=f"baseline.json: .*{message}"):
        read_baseline(path)


def test_the_written_file_is_stable_json(journal: Callable[..., Path], tmp_path: Path) -> None:
    lanes = load_lanes([journal("host", [(compile_id("numba", "int8", "32", "1"), Status.PASS)])])
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    write_baseline(lanes, first)
    write_baseline(lanes, second)
    assert first.read_text() == second.read_text()
    assert json.loads(first.read_text())["kind"] == "coop-baseline"


def test_a_baseline_named_gz_is_written_compressed_and_read_back_the_same(journal: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    """Pairwise profiles pack poorly into product sets (an H200 run of every lane over pr: 4 MB of JSON), and each
    committed baseline travels to the GPU machine with the tree: ``.json.gz`` keeps it a tenth of that, byte-stable."""
    lanes = load_lanes([journal("gpu", [(case_id("numba"), Status.PASS), (case_id("cutlass"), Status.FAIL)])])
    plain, packed, again = tmp_path / "b.json", tmp_path / "b.json.gz", tmp_path / "c.json.gz"
    for path in (plain, packed, again):
        write_baseline(lanes, path)
    assert packed.read_bytes() == again.read_bytes() and packed.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(packed.read_bytes()).decode() == plain.read_text()
    assert read_baseline(packed) == read_baseline(plain)
    (tmp_path / "bad.json.gz").write_bytes(b"\x1f\x8b not gzip")
    with pytest.raises(ReportError, match=r"bad\.json\.gz: not a readable gzip file"):
        read_baseline(tmp_path / "bad.json.gz")
