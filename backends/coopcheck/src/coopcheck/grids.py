"""Configuring a batched launch through a numba dispatcher (the numba and cccl backends launch so) without numba's
warning of a grid under 128 blocks: a batched launch runs one block per case instance, so a small grid is what the
harness asks for, and a lane would print the warning once per kernel group (a GPU lane printed it thousands of
times). Imports nothing: the dispatcher comes from the caller."""

from __future__ import annotations

import warnings
from typing import Any

#: numba's low-occupancy message. Where colorama is installed numba wraps it in terminal colour codes, which the
#: filter (matched from the message's start) allows.
LOW_OCCUPANCY = r"(\x1b\[[0-9;]*m)*Grid size \d+ will likely result in GPU under-utilization due to low occupancy"


def configured(dispatcher: Any, n_blocks: int, block: tuple[int, ...], shared: int) -> Any:
    """``dispatcher[n_blocks, block, 0, shared]`` without numba's low-occupancy warning (any other warning shows)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=LOW_OCCUPANCY)
        return dispatcher[n_blocks, block, 0, shared]
