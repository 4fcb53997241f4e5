"""The adapter as a GPU machine sees it, for the declaration tests: a host without a GPU can hold them all."""

from __future__ import annotations

import pytest
from coopcheck_cccl import adapter as cccl


@pytest.fixture
def on_a_gpu(monkeypatch: pytest.MonkeyPatch) -> cccl.CcclAdapter:
    adapter = cccl.CcclAdapter()
    monkeypatch.setitem(adapter.__dict__, "_device_arch", "sm_90")  # the device an H200 reports
    return adapter
