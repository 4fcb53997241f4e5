"""Runtime tests launch kernels on a GPU (cuda.coop has no simulator path), never silently nothing."""

from __future__ import annotations

import coop
import pytest


@pytest.fixture(scope="session")
def adapter() -> coop.Adapter:
    """The registered cccl adapter, failing (not skipping) where it cannot launch."""
    adapter = coop.register("cccl")
    if not adapter.can_launch():
        pytest.fail("runtime tests launch kernels and this process sees no CUDA device (or runs numba's "
                    "simulator); run them on a GPU: pytest backends/cccl/tests/runtime", pytrace=False)
    return adapter
