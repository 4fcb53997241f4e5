"""Fixtures of the report tests: a journal factory, a small five-lane qualification and its waivers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness import caseid
from harness.journal import ControlRecord
from harness.statuses import Status
from tests.report.journals import (
    QUESTION,
    SCRIPT,
    WAIVER,
    case_id,
    compile_id,
    kernel,
    measured,
    run_id,
    wheel_id,
    write_journal,
)

#: The qualification's one declared NotSupported.
DECLARED = case_id("rustfatbin", valid="partial")


@pytest.fixture
def journal(tmp_path: Path) -> Callable[..., Path]:
    """``journal(lane, verdicts, name=lane, **options)``: a journal in tmp_path/journals (see write_journal)."""

    def write(lane: str, verdicts: Any, name: str | None = None, **options: Any) -> Path:
        path = tmp_path / "journals" / f"{name or lane}.jsonl"
        return write_journal(path, lane, verdicts, **options)

    return write


@pytest.fixture
def qualification(journal: Callable[..., Path]) -> list[Path]:
    """Five lanes of a small qualification; the tests count by hand what the report must count.

    shared-contract: 6 Pass; numba host: 2 Pass; GPU: numba 2 Pass, cutlass 1 Pass + 1 Fail (its
    detail holds a script), rustfatbin 1 Pass + 1 NotSupported (declared in ``waivers``); racecheck
    ran 4 (all Pass, not rustfatbin); wheels: 2 Pass.
    """
    backends = ("numba", "cutlass", "rustfatbin")
    gpu: list[Any] = [(case_id(b, valid=v), Status.PASS) for b in backends for v in ("full", "partial")]
    gpu[3] = (case_id("cutlass", valid="partial"), Status.FAIL, SCRIPT)
    gpu[5] = (DECLARED, Status.NOT_SUPPORTED, "transpose needs shared memory")
    return [
        journal("host", [(case_id(b, kind), Status.PASS) for b in backends for kind in ("compile", "reject")]),
        journal("simulator", [(case_id("numba", valid=v), Status.PASS) for v in ("full", "partial")]),
        journal("gpu", gpu),
        journal("gpu-racecheck", [(case_id(b, valid=v), Status.PASS) for b in ("numba", "cutlass")
                                  for v in ("full", "partial")]),
        journal("wheels", [(wheel_id(b), Status.PASS) for b in ("numba", "cutlass")]),
    ]


@pytest.fixture
def waivers(tmp_path: Path) -> Path:
    """The expectations file of the qualification: it declares the rustfatbin NotSupported."""
    path = tmp_path / "waivers.toml"
    path.write_text(f'schema = 1\n[[expect]]\ncases = "{DECLARED}"\nstatus = "NotSupported"\n'
                    f'bug = "{WAIVER}"\nexpires = 2099-01-01\nreason = "transpose needs shared memory"\n')
    return path


@pytest.fixture
def checked_lanes(journal: Callable[..., Path]) -> list[Path]:
    """Host: two kernels measured (one warp_transpose with shared memory) and a rejection; gpu: four run cases,
    one vectorize misaligned, one vectorize failing; racecheck: the warp_transpose 8x4x2 uint8 case, control seen."""
    clean = {"CALL": 0, "LDL": 0, "STL": 0}
    host = [(compile_id(), Status.PASS), (compile_id(**QUESTION), Status.PASS),
            (caseid.render("block.load", "numba", [*kernel(), ("reject", "warp-partial")]), Status.PASS),
            measured("host", 0, {"BAR": 0, **clean}), measured("host", 256, clean, **QUESTION)]
    gpu = [(run_id(), Status.PASS), (run_id(alg="vectorize", offset="misaligned"), Status.PASS),
           (run_id(alg="vectorize", offset="zero"), Status.FAIL), (run_id(**QUESTION), Status.PASS)]
    race = [(run_id(**QUESTION), Status.PASS),
            ControlRecord("control/racecheck/shared-race", "gpu-racecheck", True, 1)]
    return [journal("host", host, backends=("numba",)), journal("gpu", gpu, backends=("numba",)),
            journal("gpu-racecheck", race, backends=("numba",))]
