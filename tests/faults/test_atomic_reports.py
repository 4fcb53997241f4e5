"""Item 7: a report folder and a bundle appear whole or not at all: written aside, then swapped in at once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.report import bundle, qualification
from harness.report.bundle import verify_bundle, write_bundle
from harness.report.document import Inputs, Source
from harness.report.errors import ReportError
from harness.report.qualification import FILES, write_report
from harness.statuses import Status
from tests.report.journals import case_id, write_journal


@pytest.fixture
def journals(tmp_path: Path) -> tuple[Path, Path]:
    """An older lane that failed, and a newer one that passed."""
    folder = tmp_path / "journals"
    return (write_journal(folder / "old.jsonl", "gpu", [(case_id("numba"), Status.FAIL, "out[0]=1")]),
            write_journal(folder / "new.jsonl", "gpu", [(case_id("numba"), Status.PASS)]))


def _inputs(journal: Path) -> Inputs:
    return Inputs([Source(journal, journal.name)])


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class Cut(Exception):
    """The process stops here (as a kill would) while it writes."""


def _cut(*args: object, **kwargs: object) -> None:
    raise Cut


def test_a_report_cut_short_leaves_the_older_report_whole(journals: tuple[Path, Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = journals
    out = tmp_path / "report"
    write_report(_inputs(old), out)
    before = _files(out)
    monkeypatch.setattr(qualification, "write_junit", _cut)  # the last file: the others are written by then
    with pytest.raises(Cut):
        write_report(_inputs(new), out)
    assert _files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journals", "report"]  # nothing left aside


def test_a_report_replaces_the_older_report_whole(journals: tuple[Path, Path], tmp_path: Path) -> None:
    old, new = journals
    out = tmp_path / "report"
    write_report(_inputs(old), out)
    write_report(_inputs(new), out)
    assert sorted(_files(out)) == sorted(FILES)
    doc = json.loads((out / "report.json").read_text())
    assert doc["inputs"]["journals"][0]["name"] == "new.jsonl"
    assert "Not accepted: none" in (out / "report.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journals", "report"]


@pytest.mark.parametrize("exchange", ["in one step", "in two renames"])
def test_either_swap_leaves_one_whole_report(exchange: str, journals: tuple[Path, Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the system cannot exchange two folders in one step, the older one is moved aside first."""
    from harness.report import folders

    if exchange == "in two renames":
        monkeypatch.setattr(folders, "_exchange", lambda new, dest: False)
    old, new = journals
    out = tmp_path / "report"
    write_report(_inputs(old), out)
    write_report(_inputs(new), out)
    assert json.loads((out / "report.json").read_text())["inputs"]["journals"][0]["name"] == "new.jsonl"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journals", "report"]


def test_a_report_never_replaces_a_folder_holding_other_files(journals: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "gpu.jsonl").write_text("a journal the report must not take with it\n")
    with pytest.raises(ReportError, match=r"--out .*out: holds files other than a report's \(gpu\.jsonl\)"):
        write_report(_inputs(journals[1]), out)
    assert sorted(_files(out)) == ["gpu.jsonl"]


@pytest.mark.parametrize("name", ["bundle", "bundle.tar.gz"])
def test_a_bundle_cut_short_leaves_nothing(name: str, journals: tuple[Path, Path], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    dest = tmp_path / name
    monkeypatch.setattr(bundle, "write_junit", _cut)
    monkeypatch.setattr(qualification, "write_junit", _cut)
    with pytest.raises(Cut):
        write_bundle(dest, list(journals))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journals"]
    monkeypatch.undo()
    write_bundle(dest, list(journals))
    assert verify_bundle(dest) == []


def test_what_a_killed_writer_left_beside_the_report_goes_with_the_next_one(journals: tuple[Path, Path],
                                                                           tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()  # ended and reaped: its id names no live process
    leftover = tmp_path / f".report.new-{gone.pid}-0123abcd"
    leftover.mkdir()
    (leftover / "report.md").write_text("half a report")
    write_report(_inputs(journals[1]), tmp_path / "report")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journals", "report"]
