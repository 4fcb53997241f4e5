"""The logical warps of a block, lane by lane, for the sequential references of the warp families' ABIs that their
oracles are tested against: the contract's, or straddling hardware warps (a known wrong implementation)."""

from __future__ import annotations

import coopcheck
from coopcheck.warp_reduce import logical_warps, width


def lane_groups(spec: coopcheck.KernelSpec, straddle: bool = False) -> list[list[int]]:
    """The logical warps, each the primitive ranks of its lanes in lane order; ``straddle``: runs of width
    consecutive ranks across hardware warps."""
    threads, lanes = spec.threads, width(spec)
    if straddle:
        return [list(range(s, min(s + lanes, threads))) for s in range(0, threads, lanes)]
    warp = logical_warps(threads, lanes)[0]
    return [[r for r in range(threads) if warp[r] == w] for w in sorted(set(warp))]
