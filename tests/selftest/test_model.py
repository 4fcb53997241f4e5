"""The reference model is a correct backend: it passes every case of the pr profile, rejections included."""

from __future__ import annotations

import pytest

from .model import ReferenceModel
from .mutants import BOTH
from .runs import Plan, failures


@pytest.mark.parametrize("contract_id", BOTH)
def test_reference_model_passes_every_pr_case(contract_id: str, pr_plans: dict[str, Plan]) -> None:
    work = pr_plans[contract_id]
    assert work.launches and work.rejects, f"{contract_id}: the pr profile expanded to nothing"
    found = failures(ReferenceModel(), work)
    assert not found, f"{len(found)} of {work.n_cases} cases failed:\n" + "\n".join(map(str, found[:5]))
