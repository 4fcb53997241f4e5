"""Compile tests share one adapter (one build per kernel key) and the contracts' resource tables."""

from __future__ import annotations

import pytest
from coopcheck_numba.adapter import NumbaAdapter


@pytest.fixture(scope="session")
def adapter() -> NumbaAdapter:
    return NumbaAdapter()
