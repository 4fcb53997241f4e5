"""The journal: records round-trip, a killed writer loses nothing already written, bad lines are named."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.errors import JournalError
from harness.expectations import Verdict
from harness.journal import (
    CaseRecord,
    ControlRecord,
    EndRecord,
    GroupRecord,
    JournalWriter,
    LaunchRecord,
    SessionRecord,
    final_cases,
    from_json,
    journal_ended,
    read_journal,
    to_json,
)
from harness.statuses import Status

RECORDS = [
    SessionRecord("host", "pr", 7, ("numba",), {"python": "3.12"}, time=1.0, arch="sm_90a", max_blocks=16,
                  toolkit="cuda-13.0"),
    GroupRecord("block.load/numba/dtype=int32,block=32,ipt=1,alg=direct", ("a/b/c=1",), pid=5),
    LaunchRecord("coop_block_load__int32__ipt1__direct", ("a/b/c=1",), 1, pid=5),
    CaseRecord("a/b/c=1", Status.FAIL, "gpu", "out[3]=1, but should be 2", ("arrangement",), 99, "ab12", 0.5),
    ControlRecord("control/racecheck/shared-race", "gpu-racecheck", True, 2, "racecheck reported it"),
    EndRecord({"Fail": 1}, time=2.0),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.TYPE)
def test_round_trip(record: object) -> None:
    assert from_json(to_json(record)) == record  # type: ignore[arg-type]


def test_last_verdict_wins(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with JournalWriter(path) as writer:
        writer.write(CaseRecord("a/b/c=1", Status.FAIL, "gpu"))
        writer.write(CaseRecord("a/b/c=1", Status.PASS, "gpu", attempt=2))
    assert final_cases(read_journal(path))["a/b/c=1"].status is Status.PASS


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "not JSON"),
    ('{"v": 2, "type": "case"}', "not a schema-1"),
    ('{"v": 1, "type": "party"}', "unknown record type"),
    ('{"v": 1, "type": "end", "counts": {}, "colour": 1}', "unknown fields"),
])
def test_bad_line_in_the_middle_is_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(to_json(RECORDS[0]) + "\n" + line + "\n" + to_json(RECORDS[-1]) + "\n")
    with pytest.raises(JournalError, match=f"j.jsonl:2: {message}"):
        list(read_journal(path))


WRITER = """
import sys
from harness.journal import CaseRecord, JournalWriter
from harness.statuses import Status
with JournalWriter(__import__("pathlib").Path(sys.argv[1])) as w:
    for i in range(10**9):
        w.write(CaseRecord(f"block.load/x/n={i}", Status.PASS, "host", "x" * 2000))
"""


def test_journal_survives_a_killed_writer(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)])
    deadline = time.monotonic() + 60
    while (not path.exists() or path.stat().st_size < 400_000) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    records = list(read_journal(path))
    lines = path.read_text().count("\n")
    assert len(records) >= 100 and len(records) in (lines, lines - 1)
    ids = [r.id for r in records if isinstance(r, CaseRecord)]
    assert ids == [f"block.load/x/n={i}" for i in range(len(ids))]  # nothing lost, in order


@pytest.mark.parametrize("record", [CaseRecord("a/b/c=1", Status.EXPECTED_FAIL, "gpu"),
                                    Verdict("a/b/c=1", Status.FAIL, "gpu", waiver="https://bugs.example/1")],
                         ids=["waived status", "resolved verdict"])
def test_a_journal_records_only_the_backends_own_verdict(tmp_path: Path, record: CaseRecord) -> None:
    with JournalWriter(tmp_path / "j.jsonl") as writer, pytest.raises(JournalError, match=r"journal record"):
        writer.write(record)
    assert (tmp_path / "j.jsonl").read_text() == ""


@pytest.mark.parametrize(("status", "read_as", "note"), [
    ("ExpectedFail", Status.FAIL,
     " (read as Fail: an older harness recorded ExpectedFail, not the backend's own status)"),
    ("UnexpectedPass", Status.PASS, ""),
    ("NotSupported", Status.NOT_SUPPORTED, ""),
])
def test_an_older_journal_line_with_a_waiver_is_read_as_the_backends_verdict(status: str, read_as: Status,
                                                                            note: str) -> None:
    line = json.dumps({"v": 1, "type": "case", "id": "a/b/c=1", "status": status, "lane": "gpu",
                       "detail": "out[0]=1", "waiver": "https://bugs.example/1"})
    assert from_json(line) == CaseRecord("a/b/c=1", read_as, "gpu", "out[0]=1" + note)


def _mixed_journal(path: Path) -> list[object]:
    records: list[object] = [
        SessionRecord("gpu", "pr", 1, ("numba",), {}),
        GroupRecord("k1", ("a/b/c=1",)),
        LaunchRecord("coop_k1", ("a/b/c=1",), 0, blocks=(0, 0)),
        CaseRecord("a/b/c=1", Status.PASS, "gpu"),
        EndRecord({"Pass": 1}),
    ]
    with JournalWriter(path) as writer:
        for record in records:
            writer.write(record)  # type: ignore[arg-type]
    return records


def test_a_reader_may_ask_for_some_kinds_of_record_only(tmp_path: Path) -> None:
    """A full run's summary needs its case and end records, not the launch ledger (most of its bytes)."""
    journal = tmp_path / "j.jsonl"
    records = _mixed_journal(journal)
    assert list(read_journal(journal, kinds=(CaseRecord, EndRecord))) == [records[3], records[4]]
    assert list(read_journal(journal)) == records


def test_a_kind_filter_still_names_a_line_that_is_no_record(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    _mixed_journal(journal)
    journal.write_text(journal.read_text() + "not json\n" + to_json(EndRecord({})) + "\n")
    with pytest.raises(JournalError, match=r"j.jsonl:6: not JSON"):
        list(read_journal(journal, kinds=(CaseRecord,)))


@pytest.mark.parametrize(("cut", "ended"), [(None, True), ("torn", True), ("no end", False), ("empty", False)])
def test_whether_a_journal_ended_is_read_from_its_last_line(tmp_path: Path, cut: str | None, ended: bool) -> None:
    journal = tmp_path / "j.jsonl"
    _mixed_journal(journal)
    text = journal.read_text()
    if cut == "torn":
        journal.write_text(text + to_json(CaseRecord("a/b/c=2", Status.PASS, "gpu"))[:30])
    elif cut == "no end":
        journal.write_text(text.rsplit("\n", 2)[0] + "\n")
    elif cut == "empty":
        journal.write_text("")
    assert journal_ended(journal) is ended
