"""Item 6: an input the harness cannot use is one line naming the file, key or option and what was expected
(exit 2), never a traceback and never silently ignored."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.journal import (
    CaseRecord,
    ControlRecord,
    EndRecord,
    GroupRecord,
    LaunchRecord,
    SessionRecord,
    to_json,
)
from harness.statuses import Status
from tests.faults import figures
from tests.faults.conftest import Refused
from tests.faults.runs import HARNESS
from tests.report.journals import case_id

NOT_UTF8 = b"# caf\xe9: written in Latin-1\n"
CASE = case_id("model")
#: One record of each type, as a journal line, for the field-type checks.
LINES = {
    "session": SessionRecord("gpu", "pr", 7, ("model",), {"python": "3.11"}, time=1.0),
    "group": GroupRecord("block.load/model/dtype=int32,block=32,ipt=4,alg=striped", (CASE,), pid=5),
    "launch": LaunchRecord("coop_block_load__int32__ipt4__striped", (CASE,), 1, pid=5, blocks=(0,)),
    "case": CaseRecord(CASE, Status.PASS, "gpu", "", (), 11, None, 0.5),
    "control": ControlRecord("control/racecheck/shared-race", "gpu", True, 2),
    "end": EndRecord({"Pass": 1}, time=2.0),
}


def _journal(path: Path, **replaced: dict[str, object]) -> Path:
    """A journal holding one record of each type; ``replaced``: record type -> fields to overwrite in its line."""
    lines = []
    for kind, record in LINES.items():
        data = json.loads(to_json(record))
        data.update(replaced.get(kind, {}))
        lines.append(json.dumps(data))
    path.write_text("\n".join(lines) + "\n")
    return path


def _written(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


Setup = Callable[[Path, list[str], Path], tuple[list[str], list[str]]]


def _out(tmp: Path) -> list[str]:
    return ["--out", str(tmp / "out")]


def contract_not_utf8(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = contracts / "block_load.toml"
    path.write_bytes(NOT_UTF8 + path.read_bytes())
    return ["list", "--contracts", str(contracts)], [str(path), "not UTF-8 text", "byte 0xe9 at offset 5"]


def run_expectations_not_utf8(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _written(tmp / "e.toml", NOT_UTF8)
    return ["run", *lane, "--expectations", str(path), "--no-isolate", "--journal", str(tmp / "j.jsonl")], \
        [str(path), "not UTF-8 text"]


def report_expectations_not_utf8(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _written(tmp / "e.toml", NOT_UTF8)
    return ["report", str(_journal(tmp / "j.jsonl")), "--expectations", str(path), *_out(tmp)], \
        [str(path), "not UTF-8 text"]


def baseline_not_utf8(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _written(tmp / "b.json", NOT_UTF8)
    return ["diff", str(_journal(tmp / "j.jsonl")), "--baseline", str(path)], [str(path), "not UTF-8 text"]


def journal_not_utf8(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _journal(tmp / "j.jsonl")
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([lines[0], lines[1].replace(b"striped", b"stri\xffped"), *lines[2:]]))
    return ["report", str(path), *_out(tmp)], [f"{path}:2", "not UTF-8 text"]


def manifest_not_utf8(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _written(tmp / "m.json", NOT_UTF8)
    return ["report", str(_journal(tmp / "j.jsonl")), "--manifest", str(path), *_out(tmp)], \
        ["m.json", "not UTF-8 text"]


def coverage_not_utf8(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _written(tmp / "c.toml", NOT_UTF8)
    return ["report", str(_journal(tmp / "j.jsonl")), "--coverage", str(path), *_out(tmp)], \
        [str(path), "not UTF-8 text"]


def matrix_not_utf8(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _written(tmp / "nightly.toml", NOT_UTF8)
    return ["nightly", "--matrix", str(path), "--dry-run", *_out(tmp)], [str(path), "not UTF-8 text"]


def ids_file_missing(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = tmp / "no-such-ids.txt"
    return ["run", *lane, "--ids-file", str(path), "--no-isolate", "--journal", str(tmp / "j.jsonl")], \
        [f"--ids-file {path}", "cannot read"]


def report_out_is_a_file(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _written(tmp / "report.txt", b"an older note\n")
    return ["report", str(_journal(tmp / "j.jsonl")), "--out", str(path)], [f"--out {path}", "is a file"]


def expires_datetime(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = _written(tmp / "e.toml", b'schema = 1\n[[expect]]\ncases = "*"\nstatus = "Fail"\n'
                                    b'bug = "https://bugs.example/1"\nexpires = 2099-01-01T00:00:00\nreason = "x"\n')
    return ["report", str(_journal(tmp / "j.jsonl")), "--expectations", str(path), *_out(tmp)], \
        [str(path), "expect[0].expires", "expected a TOML date"]


def run_expectations_missing(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = tmp / "no-such-expectations.toml"
    return ["run", *lane, "--expectations", str(path), "--no-isolate", "--journal", str(tmp / "j.jsonl")], \
        [f"--expectations {path}", "no such file"]


def report_expectations_missing(tmp: Path, lane: list[str], contracts: Path) -> tuple[list[str], list[str]]:
    path = tmp / "no-such-expectations.toml"
    return ["report", str(_journal(tmp / "j.jsonl")), "--expectations", str(path), *_out(tmp)], \
        [str(path), "cannot read"]


BAD_FILES: list[Setup] = [contract_not_utf8, run_expectations_not_utf8, report_expectations_not_utf8,
                          baseline_not_utf8, journal_not_utf8, manifest_not_utf8, coverage_not_utf8, matrix_not_utf8,
                          ids_file_missing, report_out_is_a_file, expires_datetime, run_expectations_missing,
                          report_expectations_missing]


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize("setup", BAD_FILES, ids=lambda s: s.__name__.replace("_", " "))
def test_a_bad_input_file_is_one_line_naming_it(setup: Setup, lane: list[str], small_contracts: Path, tmp_path: Path,
                                                refused: Refused) -> None:
    argv, names = setup(tmp_path, lane, small_contracts)
    refused(argv, names)


#: (record type, field, a value of the wrong type)
WRONG_TYPES = [
    ("case", "id", 5), ("case", "status", ["Pass"]), ("case", "rules", "arrangement"), ("case", "seed", "7"),
    ("case", "seconds", "fast"), ("case", "attempt", True), ("case", "detail", None),
    ("session", "seed", "7"), ("session", "backends", "model"), ("session", "env", []),
    ("session", "max_blocks", 1.5), ("group", "cases", CASE), ("launch", "seq", 1.5), ("launch", "blocks", ["0"]),
    ("end", "counts", {"Pass": "1"}), ("control", "seen", "yes"),
]


@pytest.mark.parametrize(("kind", "name", "value"), WRONG_TYPES, ids=[f"{k}.{n}={v!r}" for k, n, v in WRONG_TYPES])
def test_a_journal_field_of_the_wrong_type_is_one_line_naming_the_line_and_field(
        kind: str, name: str, value: object, tmp_path: Path, refused: Refused) -> None:
    path = _journal(tmp_path / "j.jsonl", **{kind: {name: value}})
    number = list(LINES).index(kind) + 1
    refused(["report", str(path), *_out(tmp_path)], [f"{path}:{number}", f"{kind} record", f"field {name}"])


def _blocks(count: int) -> str:
    """``count`` distinct valid block shapes (at most 1024 threads each), as a TOML array."""
    shapes = [f"{x}x{y}x{z}" for x in range(1, 1025) for y in range(1, 1024 // x + 1)
              for z in range(1, 1024 // (x * y) + 1)]
    return "[" + ", ".join(f'"{shape}"' for shape in shapes[:count]) + "]"


@pytest.mark.usefixtures("model_backend")  # the child runs this checkout's harness
@pytest.mark.parametrize(("blocks", "named"), [
    (20_000, "axes.block: 20000 values, more than the 1024 an axis may hold"),
    (1_000, "axes: dtype 2 x block 1000 x ipt 2 x alg 5 x valid 17 x oob 2 x offset 3 = 2040000 cases per "
            "backend, past the budget of 2000000"),
], ids=["an axis", "the cross product"])
def test_a_contract_past_the_case_budget_is_refused_at_load_time(blocks: int, named: str, small_contracts: Path,
                                                                 tmp_path: Path,
                                                                 request: pytest.FixtureRequest) -> None:
    """A huge axis once ran for minutes into a MemoryError; it is refused before anything expands."""
    path = small_contracts / "block_load.toml"
    path.write_text(path.read_text().replace('block = ["64", "5x3x2"]', f"block = {_blocks(blocks)}"))
    try:
        done = subprocess.run([*HARNESS, "list", "--contracts", str(small_contracts)], capture_output=True,
                              text=True, timeout=30, cwd=tmp_path)
        code, err = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        code, err = None, "(still expanding after 30 s)"
    names = [str(path), named]
    ok = code == 2 and err.count("\n") == 1 and all(name in err for name in names) and "Traceback" not in err
    figures.add(request.node, bad_inputs=1, bad_inputs_refused=int(ok))
    assert (code, err.count("\n")) == (2, 1), err
    assert all(name in err for name in names), err
