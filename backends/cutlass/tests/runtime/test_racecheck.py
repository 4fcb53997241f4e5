"""racecheck bites: it reports the transpose without its barrier and passes the real one
(``tests/mutants.py`` run under compute-sanitizer)."""

from __future__ import annotations

from pathlib import Path

from harness.sanitizer.probe import run_under

MUTANTS = Path(__file__).parent.parent / "mutants.py"


def test_racecheck_reports_the_transpose_without_its_barrier() -> None:
    probe = run_under("racecheck", MUTANTS, "racy")
    assert probe.reported, probe.output[-4000:]


def test_racecheck_passes_the_real_transpose() -> None:
    probe = run_under("racecheck", MUTANTS, "control")
    assert probe.clean, probe.output[-4000:]
