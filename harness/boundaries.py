"""The valid_items boundaries a case may name: the values implementations get wrong, swept, not sampled.

A name stands for a value in each kernel point (``threads+1`` is 129 on a 128-thread block); a name whose
value falls outside [0, tile] does not exist there, and of several names with one value the contract's
first is kept (see :func:`harness.cases.point_valid_names`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import coopcheck
from coopcheck.vocabulary import WARP_SIZE

#: The valid_items boundaries a case may name, each a function of (tile, threads, ipt): the values
#: implementations get wrong, swept in every kernel point (those outside [0, tile] do not exist there).
VALID_BOUNDARIES: dict[str, Callable[[int, int, int], int]] = {
    "full": lambda tile, threads, ipt: tile,
    "zero": lambda tile, threads, ipt: 0,
    "one": lambda tile, threads, ipt: 1,
    "tile-1": lambda tile, threads, ipt: tile - 1,
    "ipt-1": lambda tile, threads, ipt: ipt - 1,
    "ipt": lambda tile, threads, ipt: ipt,
    "ipt+1": lambda tile, threads, ipt: ipt + 1,
    "threads-1": lambda tile, threads, ipt: threads - 1,
    "threads": lambda tile, threads, ipt: threads,
    "threads+1": lambda tile, threads, ipt: threads + 1,
    "warp-1": lambda tile, threads, ipt: WARP_SIZE * ipt - 1,
    "warp": lambda tile, threads, ipt: WARP_SIZE * ipt,
    "warp+1": lambda tile, threads, ipt: WARP_SIZE * ipt + 1,
    "half": lambda tile, threads, ipt: tile // 2,
    "tile-ipt": lambda tile, threads, ipt: tile - ipt,
}
#: Seeded random valid_items names: ``rand.K`` draws from the kernel point and K.
RANDOM_VALID = re.compile(r"^rand\.[1-9][0-9]?$")


def valid_value(name: str, spec: coopcheck.KernelSpec, point_key: str) -> int:
    """The valid_items a boundary name stands for in one kernel point (it may fall outside [0, tile]).

    >>> valid_value("threads+1", coopcheck.KernelSpec("block.load", "int32", (16, 8), 4, "direct"), "k")
    129
    """
    tile, threads, ipt = spec.tile, spec.threads, spec.items_per_thread
    if name in VALID_BOUNDARIES:
        return VALID_BOUNDARIES[name](tile, threads, ipt)
    if not RANDOM_VALID.match(name):
        raise ValueError(f"valid={name!r} is neither a boundary ({', '.join(VALID_BOUNDARIES)}) nor rand.K")
    digest = hashlib.sha256(f"{point_key}:{name}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "little") % max(tile - 1, 1)
