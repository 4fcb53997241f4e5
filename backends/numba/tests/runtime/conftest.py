"""Runtime tests launch kernels: on a GPU, or in numba's CUDA simulator, never silently neither."""

from __future__ import annotations

import coopcheck
import pytest


@pytest.fixture(scope="session")
def adapter() -> coopcheck.Adapter:
    """The registered numba adapter, failing (not skipping) where it cannot launch."""
    adapter = coopcheck.register("numba")
    if not adapter.can_launch():
        pytest.fail(
            "runtime tests launch kernels and this process has neither a GPU nor numba's simulator; "
            "try: NUMBA_ENABLE_CUDASIM=1 pytest backends/numba/tests/runtime (the variable must be "
            "set before numba is imported, so not in a process that ran the compile tests)",
            pytrace=False,
        )
    return adapter
