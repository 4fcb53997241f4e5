"""Every mutant of a reference model fails at least one pr case of each contract it breaks, and no case of
another of its family: proof that the oracle's checks bite. Every failing case names a rule that explains the
mutant's deviation, and a mutant the oracle can diagnose is reported with its diagnosis. The verdicts,
with the rules named and each mutant's first failing case, are printed at the end of the session.

Every mutant runs on every kernel point of the pr profile (no subset). The verdicts themselves (each failing
case's id, checks, rules and diagnosis) are pinned by a digest per mutant and contract in ``verdicts.json``: a
faster oracle must judge every case as the one before it did. ``COOP_SELFTEST_RECORD=1`` rewrites the file
(only for a change that is meant to move verdicts, committed with it).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from .exchange_mutants import EXCHANGE_MUTANTS, ExchangeMutant
from .mutants import MUTANTS, Mutant
from .reduce_mutants import REDUCE_MUTANTS, ReduceMutant
from .runs import Failure, Plan, failures, outline
from .scan_mutants import SCAN_MUTANTS, ScanMutant
from .shuffle_mutants import SHUFFLE_MUTANTS, ShuffleMutant
from .warp_mutants import WARP_REDUCE_MUTANTS, WARP_SCAN_MUTANTS, WarpReduceMutant, WarpScanMutant

PINNED = Path(__file__).with_name("verdicts.json")
RECORD_ENV = "COOP_SELFTEST_RECORD"


def pinned_form(found: list[Failure]) -> dict[str, object]:
    """How many cases failed and a digest of what was said about each: id, checks, rules and diagnosis."""
    lines = [f"{f.case_id}|{','.join(f.checks)}|{','.join(f.rules)}|{f.detail.partition(' matches: ')[2]}"
             for f in found]
    return {"failing": len(found), "sha256": hashlib.sha256("\n".join(lines).encode()).hexdigest()}


ALL_MUTANTS = (*MUTANTS, *EXCHANGE_MUTANTS, *SHUFFLE_MUTANTS, *REDUCE_MUTANTS, *SCAN_MUTANTS, *WARP_REDUCE_MUTANTS,
               *WARP_SCAN_MUTANTS)


@pytest.mark.parametrize("mutant", [pytest.param(m, id=m.name) for m in ALL_MUTANTS])
def test_mutant_is_caught(mutant: type[Mutant | ExchangeMutant | ShuffleMutant | ReduceMutant | ScanMutant
                                     | WarpReduceMutant | WarpScanMutant],
                          pr_plans: dict[str, Plan], record_property: Callable[[str, object], None]) -> None:
    found = {cid: failures(mutant(), pr_plans[cid]) for cid in mutant.family}
    missed = [cid for cid in mutant.targets if not found[cid]]
    stray = [cid for cid in found if cid not in mutant.targets and found[cid]]
    if missed:
        verdict = f"SURVIVED every {' and '.join(missed)} case"
    else:
        verdict = "caught" + "".join(f"\n    {cid}: {outline(found[cid])}" for cid in mutant.targets)
    record_property("mutant", mutant.name)
    record_property("caught", "no" if missed else "yes")
    record_property("verdict", verdict)
    said = {cid: pinned_form(found[cid]) for cid in sorted(found)}
    if os.environ.get(RECORD_ENV):
        (PINNED.parent / f"{PINNED.stem}.{mutant.name}.part").write_text(json.dumps(said), encoding="utf-8")
    else:
        assert said == json.loads(PINNED.read_text(encoding="utf-8"))[mutant.name], (
            f"{mutant.name}: the verdicts differ from the pinned ones in {PINNED.name} (see its docstring)")
    assert not missed, f"{mutant.name} ({mutant.__doc__}) passes every pr case of {' and '.join(missed)}"
    assert not stray, f"{mutant.name} also fails {' and '.join(stray)} (not a target): {found[stray[0]][0]}"
    unexplained = [f for cid in mutant.targets for f in found[cid] if not set(f.rules) & set(mutant.rules)]
    assert not unexplained, (f"{mutant.name}: {len(unexplained)} failing case(s) name none of {mutant.rules}, "
                             f"e.g. {unexplained[0]}")
    if mutant.diagnosis is not None:
        said = pr_plans[mutant.targets[0]].contract.oracle.DIAGNOSES[mutant.diagnosis]
        assert any(f"matches: {said}" in f.detail or f", {said}" in f.detail
                   for cid in mutant.targets for f in found[cid]), f"{mutant.name}: no failure says '{said}'"
