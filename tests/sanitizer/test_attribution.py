"""``harness.sanitizer.attribution``: kernel name -> launches -> block -> case, ambiguity and unmapped records."""

from __future__ import annotations

from pathlib import Path

import coopcheck

from harness.cases import group_by_kernel
from harness.contracts import load_contracts
from harness.engine import Engine
from harness.journal import JournalWriter, LaunchRecord, Record
from harness.lanes import lane_cases
from harness.sanitizer.attribution import Finding, Launch, Target, Unmapped, attribute, read_launches
from harness.sanitizer.records import Frame, SanitizerRecord, parse_file
from tests.support.model_backend import ModelAdapter

RECORDED = Path(__file__).parent / "recorded"
JOURNAL = Path("journal/gw0.jsonl")
LOAD = "coop_block_load__int32__ipt4__direct"


def case(block: str, valid: str, backend: str = "numba", ipt: int = 4, alg: str = "direct") -> str:
    return (f"block.load/{backend}/dtype=int32,block={block},ipt={ipt},alg={alg},valid={valid},"
            "oob=none,offset=zero")


def launch(name: str, cases: list[str], seq: int = 1, control: bool = False) -> Launch:
    return Launch(name, tuple(cases), seq, 100, JOURNAL, control)


def record(*functions: str, block: tuple[int, int, int] | None = (0, 0, 0),
           threads: tuple[tuple[int, int, int], ...] = ((0, 0, 0),)) -> SanitizerRecord:
    return SanitizerRecord(Path("xml/racecheck.w0.1.xml"), 1, "Hazard", "Error", "",
                           tuple(Frame(f) for f in functions), (), block, threads, "<record/>")


def test_block_index_picks_the_case_of_that_block() -> None:
    first = launch(LOAD, [case("32", "full"), case("32", "zero"), case("32", "one")])
    other = launch("coop_block_load__int32__ipt4__striped", [case("32", "full", alg="striped")], seq=2)
    found = attribute(record(f"cudapy::{LOAD}[abi:v1](Array<int, 1, C>)", block=(2, 0, 0)), [first, other])
    assert found == Finding(found.record, (Target(first, case("32", "one")),))


def test_the_longest_kernel_name_wins() -> None:
    ipt1 = launch("coop_block_load__int32__ipt1__direct", [case("32", "full", ipt=1)])
    ipt16 = launch("coop_block_load__int32__ipt16__direct", [case("32", "full", ipt=16)], seq=2)
    trans = launch("coop_block_load__int32__ipt16__transpose", [case("32", "full", ipt=16, alg="transpose")], 3)
    warp = launch("coop_block_load__int32__ipt16__warp_transpose",
                  [case("32", "full", ipt=16, alg="warp_transpose")], seq=4)
    found = attribute(record("coop_block_load__int32__ipt16__warp_transpose"), [ipt1, ipt16, trans, warp])
    assert isinstance(found, Finding) and [t.launch for t in found.targets] == [warp]


def test_threads_outside_the_block_shape_rule_a_launch_out() -> None:
    small = launch(LOAD, [case("32", "full")], seq=1)
    large = launch(LOAD, [case("16x8", "full")], seq=2)
    found = attribute(record(LOAD, threads=((3, 5, 0),)), [small, large])
    assert isinstance(found, Finding) and found.targets == (Target(large, case("16x8", "full")),)


def test_a_block_shape_suffix_in_the_name_picks_the_launch() -> None:
    name = "coop_block_load__float32__ipt2__transpose"
    cases = {shape: (f"block.load/cutlass/dtype=float32,block={shape},ipt=2,alg=transpose,valid=full,"
                     "oob=none,offset=zero") for shape in ("128", "16x8")}
    flat, square = launch(name, [cases["128"]] * 3, seq=1), launch(name, [cases["16x8"]] * 3, seq=2)
    error, warning = parse_file(RECORDED / "racecheck_hazard.xml")
    for found in (attribute(error, [flat, square]), attribute(warning, [flat, square])):
        assert isinstance(found, Finding) and [t.launch for t in found.targets] == [square]


def test_several_fitting_launches_are_all_charged_and_said_to_be_ambiguous() -> None:
    one = launch(LOAD, [case("64", "full"), case("64", "zero")], seq=3)
    two = launch(LOAD, [case("128", "full"), case("128", "partial")], seq=8)
    found = attribute(record(LOAD, block=(1, 0, 0)), [one, two])
    assert isinstance(found, Finding)
    assert found.targets == (Target(one, case("64", "zero")), Target(two, case("128", "partial")))
    assert found.note == f"ambiguous: block 1 of 2 launches of {LOAD} (seq 3, 8) fits; charged to each"


def test_a_record_without_block_charges_every_case_of_its_launches() -> None:
    (analysis,) = parse_file(RECORDED / "racecheck_analysis.xml")
    name = "coop_block_store__uint8__ipt3__warp_transpose"
    ids = [f"block.store/rustfatbin/dtype=uint8,block=64,ipt=3,alg=warp_transpose,valid={v},offset=zero"
           for v in ("full", "zero")]
    found = attribute(analysis, [launch(name, ids)])
    assert isinstance(found, Finding) and [t.case for t in found.targets] == ids
    assert found.note.startswith("the record has no block index: charged to all 2 case(s) of 1 launch(es)")


def test_a_control_launch_takes_any_thread() -> None:
    control = launch("coop_control_shared_race", ["control/racecheck/shared-race"], control=True)
    found = attribute(record("cudapy::coop_control_shared_race[abi:v1]()", threads=((40, 0, 0),)), [control])
    assert isinstance(found, Finding) and found.targets == (Target(control, "control/racecheck/shared-race"),)


def test_a_kernel_no_launch_ran_is_unmapped() -> None:
    found = attribute(record("some_library_kernel"), [launch(LOAD, [case("32", "full")])])
    assert isinstance(found, Unmapped)
    assert found.reason == ("no launch of its worker runs a kernel its device frames name (functions: "
                            "some_library_kernel; 1 launch(es) in the ledger)")


def test_a_record_with_no_device_frame_is_unmapped() -> None:
    found = attribute(record(), [launch(LOAD, [case("32", "full")])])
    assert isinstance(found, Unmapped) and "functions: none" in found.reason


def test_a_block_past_the_launch_is_unmapped() -> None:
    found = attribute(record(LOAD, block=(5, 0, 0)), [launch(LOAD, [case("32", "full")])])
    assert isinstance(found, Unmapped)
    assert found.reason == f"block (5,0,0) with these threads fits none of the 1 launch(es) of {LOAD}"


def test_launches_are_read_from_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "gw0.jsonl"
    with JournalWriter(path) as writer:
        writer.write(LaunchRecord(LOAD, (case("32", "full"),), 1, pid=42))
    assert read_launches(path, control=True) == [Launch(LOAD, (case("32", "full"),), 1, 42, path, True)]


class EntryModel(ModelAdapter):
    """The model backend as one kernel per dtype serving every spec (its statics as run-time parameters), named
    apart from ``coopcheck.kernel_symbol``."""

    def launched_symbol(self, spec: coopcheck.KernelSpec) -> str:
        return f"model_entry__{spec.dtype}"


def test_a_record_naming_the_kernel_an_adapter_launched_reaches_the_case_of_its_block(small_contracts: Path) -> None:
    contract = next(c for c in load_contracts(small_contracts) if c.id == "block.load")
    spec, cases = next(iter(group_by_kernel([c for c in lane_cases(contract, "model", "pr", "simulator")
                                             if c.reject is None])))
    emitted: list[Record] = []
    Engine(EntryModel(), "simulator", 1, emitted.append).run_group(spec, cases)
    ledger = [r for r in emitted if isinstance(r, LaunchRecord)]
    launches = [Launch(r.kernel_name, r.cases, r.seq, r.pid, JOURNAL, blocks=r.blocks) for r in ledger]
    entry = f"model_entry__{spec.dtype}"
    found = attribute(record(f"{entry}(short *, int)", block=(1, 0, 0)), launches[:1])
    assert isinstance(found, Finding) and [t.case for t in found.targets] == [launches[0].case_of_block(1)]
    assert {r.kernel_name for r in ledger} == {entry} and coopcheck.kernel_symbol(spec) not in entry
