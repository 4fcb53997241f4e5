"""Every mutant of the reference model fails at least one pr case of each contract it breaks, and no case
of another: proof that the oracle's checks bite. Every failing case names a rule that explains the
mutant's deviation, and a mutant the oracle can diagnose is reported with its diagnosis. The verdicts,
with the rules named and each mutant's first failing case, are printed at the end of the session.

Every mutant runs on every kernel point of the pr profile (no subset).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.oracles.diagnose import DIAGNOSES

from .mutants import MUTANTS, Mutant
from .runs import Plan, failures, outline


@pytest.mark.parametrize("mutant", [pytest.param(m, id=m.name) for m in MUTANTS])
def test_mutant_is_caught(mutant: type[Mutant], pr_plans: dict[str, Plan],
                          record_property: Callable[[str, object], None]) -> None:
    found = {cid: failures(mutant(), work) for cid, work in pr_plans.items()}
    missed = [cid for cid in mutant.targets if not found[cid]]
    stray = [cid for cid in found if cid not in mutant.targets and found[cid]]
    if missed:
        verdict = f"SURVIVED every {' and '.join(missed)} case"
    else:
        verdict = "caught" + "".join(f"\n    {cid}: {outline(found[cid])}" for cid in mutant.targets)
    record_property("mutant", mutant.name)
    record_property("caught", "no" if missed else "yes")
    record_property("verdict", verdict)
    assert not missed, f"{mutant.name} ({mutant.__doc__}) passes every pr case of {' and '.join(missed)}"
    assert not stray, f"{mutant.name} also fails {' and '.join(stray)} (not a target): {found[stray[0]][0]}"
    unexplained = [f for cid in mutant.targets for f in found[cid] if not set(f.rules) & set(mutant.rules)]
    assert not unexplained, (f"{mutant.name}: {len(unexplained)} failing case(s) name none of {mutant.rules}, "
                             f"e.g. {unexplained[0]}")
    if mutant.diagnosis is not None:
        said = DIAGNOSES[mutant.diagnosis]
        assert any(f"matches: {said}" in f.detail or f", {said}" in f.detail
                   for cid in mutant.targets for f in found[cid]), f"{mutant.name}: no failure says '{said}'"
