"""The lane folder: one place that names every file a sanitizer lane writes and reads.

A *run* is one sanitized worker process: ``<slot>.<wrapper pid>`` (a slot is one ``--tx`` worker
spec; xdist may restart a worker, which makes a new run of the same slot). The wrapper names the
run's XML, log and exit-status files; the worker learns its run from :data:`RUN_ENV` and writes a
process card, so each XML file maps to the worker pids whose launches its records can name.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.sanitizer import SanitizerLaneError

#: Environment variable the wrapper sets for the sanitized worker: the run id.
RUN_ENV = "COOP_SANITIZER_RUN"
#: A file that marks a folder as a lane folder (only such a folder is ever wiped).
MARKER = ".coop-sanitizer-lane"
_FOLDERS = ("journal", "xml", "log", "status", "processes", "controls", "wrappers")


@dataclass(frozen=True)
class LaneLayout:
    root: Path
    tool: str

    @property
    def journal_template(self) -> str:
        """``--coop-journal``: one journal per xdist worker."""
        return str(self.root / "journal" / "{worker}.jsonl")

    def journals(self) -> list[Path]:
        return sorted((self.root / "journal").glob("*.jsonl"))

    def xml(self, run: str) -> Path:
        return self.root / "xml" / f"{self.tool}.{run}.xml"

    def log(self, run: str) -> Path:
        return self.root / "log" / f"{self.tool}.{run}.log"

    def status(self, run: str) -> Path:
        return self.root / "status" / f"{run}.json"

    def statuses(self) -> list[Path]:
        return sorted((self.root / "status").glob("*.json"))

    def process_card(self, pid: int) -> Path:
        return self.root / "processes" / f"{pid}.json"

    def process_cards(self) -> list[Path]:
        return sorted((self.root / "processes").glob("*.json"))

    def control_ledger(self, worker: str) -> Path:
        return self.root / "controls" / f"{worker}.jsonl"

    def control_ledgers(self) -> list[Path]:
        return sorted((self.root / "controls").glob("*.jsonl"))

    def wrapper_config(self, slot: str) -> Path:
        return self.root / "wrappers" / f"{slot}.json"

    @property
    def junit(self) -> Path:
        return self.root / f"junit-gpu-{self.tool}.xml"

    def prepare(self) -> None:
        """Start from an empty lane folder; a non-empty folder is wiped only if a lane made it."""
        if self.root.exists() and any(self.root.iterdir()):
            if not (self.root / MARKER).exists():
                raise SanitizerLaneError(f"{self.root}: not empty and not a lane folder ({MARKER} missing); "
                                         "give --out an empty or new folder")
            shutil.rmtree(self.root)
        for name in _FOLDERS:
            (self.root / name).mkdir(parents=True, exist_ok=True)
        (self.root / MARKER).write_text("made by python -m harness.sanitizer lane; wiped by the next run\n")


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write whole or not at all (a reader never sees half a card)."""
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
    os.replace(partial, path)


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SanitizerLaneError(f"{path}: unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise SanitizerLaneError(f"{path}: expected a JSON object")
    return data
