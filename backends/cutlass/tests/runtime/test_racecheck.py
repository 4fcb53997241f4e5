"""racecheck bites: it reports the transpose, the block Exchange, the Shuffle, the Reduce and the Scan without their
barriers and passes the real ones (``tests/mutants.py`` run under compute-sanitizer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.sanitizer.probe import run_under

MUTANTS = Path(__file__).parent.parent / "mutants.py"


def test_racecheck_reports_the_transpose_without_its_barrier() -> None:
    probe = run_under("racecheck", MUTANTS, "racy")
    assert probe.reported, probe.output[-4000:]


def test_racecheck_passes_the_real_transpose() -> None:
    probe = run_under("racecheck", MUTANTS, "control")
    assert probe.clean, probe.output[-4000:]


@pytest.mark.parametrize(("mode", "reported"), [("exchange-racy", True), ("exchange-control", False),
                                                ("shuffle-racy", True), ("shuffle-control", False),
                                                ("reduce-racy", True), ("reduce-control", False),
                                                ("scan-racy", True), ("scan-control", False)])
def test_racecheck_sees_a_family_kernel_without_its_barrier_and_passes_the_real_one(mode: str,
                                                                                    reported: bool) -> None:
    probe = run_under("racecheck", MUTANTS, mode)
    assert (probe.reported, probe.clean) == (reported, not reported), probe.output[-4000:]
