"""Fixtures of the report tests: a journal factory, a small five-lane qualification and its waivers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.statuses import Status
from tests.report.journals import SCRIPT, WAIVER, case_id, wheel_id, write_journal

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
