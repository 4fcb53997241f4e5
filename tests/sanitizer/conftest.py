"""Fixtures of the sanitizer lane tests: scripts written for a test (a fake tool, a fake nvidia-smi) and
lane folders written by hand, as a lane would leave them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from harness.journal import CaseRecord, JournalWriter, LaunchRecord, Record
from harness.sanitizer.layout import LaneLayout, write_json
from harness.sanitizer.tools import CONTROLS
from harness.statuses import Status

FAKES = Path(__file__).parent / "fakes"


@pytest.fixture
def executable(tmp_path: Path) -> Callable[[str, str], Path]:
    """``executable(name, python_source)``: a script in ``tmp_path/bin`` run by this interpreter."""

    def write(name: str, source: str) -> Path:
        path = tmp_path / "bin" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"#!{sys.executable}\n{source}")
        path.chmod(0o755)
        return path

    return write


@pytest.fixture
def fake_sanitizer(executable: Callable[[str, str], Path]) -> Path:
    """``bin/compute-sanitizer``: the stand-in of ``fakes/compute_sanitizer.py`` (its plan comes from env)."""
    return executable("compute-sanitizer", (FAKES / "compute_sanitizer.py").read_text())


def _hazard(function: str, block: int, thread: tuple[int, int, int] = (0, 0, 0)) -> str:
    where = f"<where><func>{escape(function)}</func><path>kernels.py</path><line>9</line></where>"
    idx = "<threadIdx><x>{}</x><y>{}</y><z>{}</z></threadIdx>".format(*thread)
    return (f"<record><kind>Hazard</kind><level>Error</level><blockIdx><x>{block}</x><y>0</y><z>0</z></blockIdx>"
            f"<thread0><direction>Write</direction>{idx}{where}</thread0>"
            f"<thread1><direction>Read</direction>{idx}{where}</thread1></record>")


class LaneFolder:
    """A racecheck lane folder written by hand: ledgers, verdicts, process cards, exit statuses, XML."""

    def __init__(self, root: Path) -> None:
        self.layout = LaneLayout(root, "racecheck")
        self.layout.prepare()

    def _append(self, path: Path, *records: Record) -> None:
        with JournalWriter(path) as writer:
            for record in records:
                writer.write(record)

    def launch(self, worker: str, pid: int, kernel: str, cases: list[str], seq: int = 1) -> None:
        """A launch in the worker's journal, every case of it passing."""
        journal = Path(self.layout.journal_template.format(worker=worker))
        self._append(journal, LaunchRecord(kernel, tuple(cases), seq, pid),
                     *(CaseRecord(c, Status.PASS, "gpu-racecheck", seed=7) for c in cases))

    def control(self, worker: str, pid: int) -> None:
        control = CONTROLS["racecheck"]
        self._append(self.layout.control_ledger(worker), LaunchRecord(control.symbol, (control.id,), 1, pid))

    def run(self, run: str, pid: int, worker: str, returncode: int, *records: str) -> None:
        """One sanitized worker: its card, its wrapper's exit status and its XML (holding ``records``)."""
        write_json(self.layout.process_card(pid), {"pid": pid, "run": run, "worker": worker})
        write_json(self.layout.status(run), {"run": run, "slot": run.split(".")[0], "sanitizer_pid": pid - 1,
                                             "returncode": returncode})
        self.layout.xml(run).write_text(f'<?xml version="1.0" encoding="utf-8"?>\n'
                                        f"<ComputeSanitizerOutput>{''.join(records)}</ComputeSanitizerOutput>\n")


@pytest.fixture
def lane(tmp_path: Path) -> LaneFolder:
    return LaneFolder(tmp_path / "lane")


@pytest.fixture
def hazard() -> Callable[..., str]:
    """``hazard(function, block, thread=(0, 0, 0))``: a record laid out as ``recorded/racecheck_hazard.xml``."""
    return _hazard
