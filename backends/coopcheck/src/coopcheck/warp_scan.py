"""The kernel ABI of the Warp Scan family, written down once: what a backend's kernel builder receives.

Warp Scan kernel, one block per case instance (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``, one item a
thread); ``rank = x + bx * (y + by * z)``. The logical warps are Warp Reduce's (:func:`coopcheck.warp_reduce.
logical_warps`): each hardware warp (32 consecutive ranks, the block's last one partial when 32 does not divide it)
is cut into logical warps of ``width`` lanes from its lane 0, none straddling two hardware warps; a partial one
(at the end of a partial hardware warp, or of every hardware warp when ``width`` does not divide 32) scans the lanes
it has. The kernel is specialized on (dtype, block, ``width``, ``op``, ``mode``, ``seed``, ``aggregate``):

* thread ``r`` of block ``b`` holds the item ``items[b*threads + r]``; the lanes of its logical warp are its
  operands, in lane order;
* ``seed`` says what prefixes every logical warp's scan: ``none``, nothing; ``initial``, the block's
  ``initial[b]`` (CUB's ``initial_value``, the same value in every thread of the block);
* it writes its scanned item to ``dst[b*out + r]``: with mode ``inclusive`` lane ``l``'s is ``op(seed, x_0, ...,
  x_l)``, with ``exclusive`` ``op(seed, x_0, ..., x_(l-1))`` (the seed itself in lane 0; with no seed lane 0's is
  undefined, but for sum, which starts from 0: CUB's ExclusiveSum);
* with ``aggregate`` ``on`` (CUB's overloads with a ``warp_aggregate`` output) it also writes its logical warp's
  aggregate, the operator over the items of every lane of its logical warp, the seed not among them, to
  ``dst[b*out + threads + r]``: every lane receives it. ``out`` is :func:`out_length`.

Which outputs are defined: every lane's scanned item but lane 0's of an exclusive scan without a seed of an operator
other than sum (its slot is written with whatever the scan returned there, and nobody judges it), and every lane's
aggregate. The kernel writes nothing else: not its inputs, and no element of ``dst`` past ``out`` a block. A warp
scan synchronizes within its hardware warp only: no block barrier. The operators are :mod:`coopcheck.scan`'s (sum,
min, max, matmul; integers wrap, float min and max are fmin and fmax; matmul is not commutative).

Worked example (exclusive sum, seed initial 10, width 4, 6 threads, items [1, 2, 3, 4, 5, 6], aggregate on):
logical warps are lanes 0-3 and 4-5 (partial); ``dst`` holds [10, 11, 13, 16, 10, 15] then [10, 10, 10, 10, 11, 11].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coopcheck.adapter import KernelSpec
from coopcheck.vocabulary import (
    WARP_SCAN_AGGREGATES,
    WARP_SCAN_ALGORITHMS,
    WARP_SCAN_MODES,
    WARP_SCAN_OPERATORS,
    WARP_SCAN_SEEDS,
)
from coopcheck.vocabulary import InvalidParameter as InvalidParameter  # what check_spec raises
from coopcheck.warp_reduce import WIDTHS as WIDTHS
from coopcheck.warp_reduce import check_warp_spec
from coopcheck.warp_reduce import logical_warps as logical_warps
from coopcheck.warp_reduce import width as width

#: The operations of this family (the contracts' ``operation``), for a backend's declaration.
OPERATIONS = frozenset({"warp.scan"})
ALGORITHMS = WARP_SCAN_ALGORITHMS
OPERATORS = WARP_SCAN_OPERATORS
MODES = WARP_SCAN_MODES
SEEDS = WARP_SCAN_SEEDS
AGGREGATES = WARP_SCAN_AGGREGATES


@dataclass
class WarpScanBatch:
    """Arguments of one batched Warp Scan launch (NumPy arrays on the host; see the module ABI)."""

    items: Any  # dtype[n_blocks * threads]
    initial: Any  # dtype[n_blocks]: the seed value of every logical warp of a block (seed initial)
    threads: int

    @property
    def n_blocks(self) -> int:
        return len(self.initial)


def aggregates(spec: KernelSpec) -> bool:
    """Whether the kernel writes every lane's warp aggregate."""
    return bool(spec.static("aggregate") == "on")


def out_length(spec: KernelSpec) -> int:
    """Elements of ``dst`` per block: every thread's scanned item, then (aggregate on) every thread's aggregate.

    >>> out_length(KernelSpec("warp.scan", "int8", (65,), 1, "any", variant=(
    ...     ("width", "8"), ("op", "sum"), ("mode", "exclusive"), ("seed", "none"), ("aggregate", "on"))))
    130
    """
    return spec.threads * (2 if aggregates(spec) else 1)


def check_spec(spec: KernelSpec) -> None:
    """Raise :class:`coopcheck.InvalidParameter` for the first static rule a Warp Scan spec breaks.

    >>> try:
    ...     check_spec(KernelSpec("warp.scan", "int32", (64,), 1, "any", variant=(
    ...         ("width", "0"), ("op", "sum"), ("mode", "inclusive"), ("seed", "none"), ("aggregate", "off"))))
    ... except InvalidParameter as exc:
    ...     print(exc.rule)
    warp_scan_width
    """
    check_warp_spec(spec, "warp_scan", OPERATIONS,
                    (("op", OPERATORS), ("mode", MODES), ("seed", SEEDS), ("aggregate", AGGREGATES)))
