"""The logical warps of a block as the warp families' oracles see them (Warp Reduce, Warp Scan): the contract's
geometry (:func:`coopcheck.warp_reduce.logical_warps`) and the known wrong one, logical warps of ``width``
consecutive ranks straddling hardware warps (the ``warps-straddle`` hypothesis, NVIDIA/cccl#858's expectation)."""

from __future__ import annotations

from functools import cache

import coopcheck
import numpy as np
from coopcheck.warp_reduce import logical_warps, width

from harness.oracles.judging import Ints

#: What a detail line says of the ``warps-straddle`` hypothesis.
STRADDLE = ("logical warps taken as runs of width consecutive ranks across hardware warps (NVIDIA/cccl#858's "
            "expectation), not cut from each hardware warp")


@cache
def geometry(threads: int, lanes: int, straddle: bool) -> tuple[Ints, Ints, Ints]:
    """(logical warp, lane, lanes of its logical warp) per primitive rank; ``straddle``: logical warps of ``lanes``
    consecutive ranks across hardware warps (the ``warps-straddle`` hypothesis)."""
    if straddle:
        warp, lane = np.arange(threads) // lanes, np.arange(threads) % lanes
    else:
        warp, lane = (np.array(a, dtype=np.int64) for a in logical_warps(threads, lanes))
    return warp, lane, np.bincount(warp)[warp]


def straddles(spec: coopcheck.KernelSpec) -> bool:
    """Whether the straddling geometry differs from the contract's at ``spec``."""
    contract, other = geometry(spec.threads, width(spec), False), geometry(spec.threads, width(spec), True)
    return not all(np.array_equal(a, b) for a, b in zip(contract, other, strict=True))
