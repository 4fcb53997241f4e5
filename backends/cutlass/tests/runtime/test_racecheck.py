"""racecheck bites: it reports the transpose without its barrier and passes the real one
(``tests/mutants.py`` run under compute-sanitizer)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MUTANTS = Path(__file__).parent.parent / "mutants.py"
SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")


def _racecheck(variant: str) -> tuple[int, str, tuple[int, int, int]]:
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer is not on PATH")
    done = subprocess.run(
        [sanitizer, "--tool", "racecheck", "--report-api-errors", "no", "--error-exitcode", "1",
         sys.executable, str(MUTANTS), variant],
        capture_output=True, text=True, timeout=600,
    )
    output = done.stdout + done.stderr
    summary = SUMMARY.search(output)
    assert summary, output[-4000:]
    return done.returncode, output, tuple(int(n) for n in summary.groups())  # type: ignore[return-value]


def test_racecheck_reports_the_transpose_without_its_barrier() -> None:
    code, output, (hazards, errors, _) = _racecheck("racy")
    assert code == 1 and hazards > 0 and errors > 0, output[-4000:]


def test_racecheck_passes_the_real_transpose() -> None:
    code, output, (hazards, _, _) = _racecheck("control")
    assert code == 0 and hazards == 0, output[-4000:]
