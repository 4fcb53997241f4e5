"""Journals for the report tests, written with harness.journal as lanes would leave them, and case ids."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import caseid
from harness.journal import CaseRecord, ControlRecord, EndRecord, GroupRecord, JournalWriter, SessionRecord
from harness.statuses import Status

KERNEL = [("dtype", "int32"), ("block", "32"), ("ipt", "4"), ("alg", "striped")]
ENV = {"python": "3.12.3", "packages": {"numpy": "2.4.1"}, "gpu": "NVIDIA H200, 575.57, 9.0"}
SCRIPT = '<script>document.body.setAttribute("data-pwned","1")</script> | out[3]=5'
WAIVER = "https://bugs.example/coop/1"
#: A journal line to write: a record, or (case id, status[, detail]) for a case record of the lane.
Entry = CaseRecord | ControlRecord | tuple[str, Status] | tuple[str, Status, str]


def case_id(backend: str, kind: str = "run", contract: str = "block.load", dtype: str = "int32",
            valid: str = "full") -> str:
    """An id of one kind of check: ``run`` (case axes), ``compile`` (kernel axes only) or ``reject``."""
    kernel: list[tuple[str, caseid.Value]] = [("dtype", dtype), *KERNEL[1:]]
    params = {"run": [*kernel, ("valid", valid), ("oob", "none"), ("offset", "zero")], "compile": kernel,
              "reject": [*kernel, ("reject", "warp_multiple")]}[kind]
    return caseid.render(contract, backend, params)


def wheel_id(backend: str) -> str:
    return caseid.render("wheel.install", backend, [("python", "3.12")])


def write_journal(path: Path, lane: str, verdicts: Iterable[Entry], *, ended: bool = True,
                  groups: Iterable[tuple[str, list[str]]] = (), env: dict[str, Any] | None = None,
                  backends: tuple[str, ...] = ("numba", "cutlass", "rustfatbin")) -> Path:
    with JournalWriter(path) as writer:
        writer.write(SessionRecord(lane, "pr", 7, backends, ENV if env is None else env, time=1.0))
        for kernel, ids in groups:
            writer.write(GroupRecord(kernel, tuple(ids), pid=1))
        for verdict in verdicts:
            writer.write(CaseRecord(verdict[0], verdict[1], lane, *verdict[2:]) if isinstance(verdict, tuple)
                         else verdict)
        if ended:
            writer.write(EndRecord({}, time=2.0))
    return path
