"""Runtime tests launch kernels on a GPU (the DSL has no simulator), never silently nothing."""

from __future__ import annotations

import coopcheck
import pytest


@pytest.fixture(scope="session")
def adapter() -> coopcheck.Adapter:
    """The registered cutlass adapter, failing (not skipping) where it cannot launch."""
    adapter = coopcheck.register("cutlass")
    if not adapter.can_launch():
        pytest.fail("runtime tests launch kernels and this process sees no CUDA device; run them on a GPU "
                    "(pytest backends/cutlass/tests/runtime)", pytrace=False)
    return adapter
