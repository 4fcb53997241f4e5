"""``point_failures``, the backends' runtime tests' way to launch one kernel point as the engine does: it judges
every case the adapter takes, and refuses a point whose every case the adapter declines."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from harness.contracts import load_contracts
from harness.oracles.launch import point_failures
from tests.support.model_backend import UNSUPPORTED_CASE_ENV, ModelAdapter

POINT = (("dtype", "int32"), ("block", "16x8"), ("ipt", 4), ("alg", "striped"))


class Launches(ModelAdapter):
    """The model backend, keeping the offsets of every block it launches."""

    def __init__(self) -> None:
        super().__init__()
        self.offsets: list[int] = []

    def launch(self, compiled: Any, spec: Any, batch: Any) -> np.ndarray:
        self.offsets += np.asarray(batch.offset).tolist()
        return super().launch(compiled, spec, batch)


def _load() -> Any:
    return next(c for c in load_contracts() if c.operation == "block.load")


def test_the_cases_the_adapter_declines_are_not_launched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UNSUPPORTED_CASE_ENV, "offset=1")  # the misaligned offset class
    adapter = Launches()
    assert point_failures(adapter, _load(), POINT, 5) == []
    assert adapter.offsets and 1 not in adapter.offsets and {0, 32} <= set(adapter.offsets)


def test_a_point_whose_every_case_is_declined_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ModelAdapter, "unsupported_case", lambda self, spec, values: "declined")
    with pytest.raises(ValueError, match=r"block.load: model declines every case of .*nothing to launch"):
        point_failures(Launches(), _load(), POINT, 5)
