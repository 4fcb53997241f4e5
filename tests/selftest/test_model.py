"""The reference models are correct backends: each passes every case of its pr profile, rejections included."""

from __future__ import annotations

import pytest

from .exchange_model import ExchangeModel
from .exchange_mutants import EXCHANGE
from .model import ReferenceModel
from .mutants import BOTH
from .reduce_model import ReduceModel
from .reduce_mutants import REDUCE
from .runs import Model, Plan, failures
from .scan_model import SCAN, ScanModel
from .shuffle_model import ShuffleModel
from .shuffle_mutants import SHUFFLE
from .warp_model import WARP_REDUCE, WARP_SCAN, WarpReduceModel, WarpScanModel

MODELS: dict[str, type[Model]] = {**dict.fromkeys(BOTH, ReferenceModel), **dict.fromkeys(EXCHANGE, ExchangeModel),
                                  **dict.fromkeys(SHUFFLE, ShuffleModel), **dict.fromkeys(REDUCE, ReduceModel),
                                  **dict.fromkeys(SCAN, ScanModel), **dict.fromkeys(WARP_REDUCE, WarpReduceModel),
                                  **dict.fromkeys(WARP_SCAN, WarpScanModel)}


@pytest.mark.parametrize("contract_id", list(MODELS))
def test_reference_model_passes_every_pr_case(contract_id: str, pr_plans: dict[str, Plan]) -> None:
    work = pr_plans[contract_id]
    assert work.launches and work.rejects, f"{contract_id}: the pr profile expanded to nothing"
    found = failures(MODELS[contract_id](), work)
    assert not found, f"{len(found)} of {work.n_cases} cases failed:\n" + "\n".join(map(str, found[:5]))
