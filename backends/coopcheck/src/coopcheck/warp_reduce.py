"""The kernel ABI of the Warp Reduce family, written down once: what a backend's kernel builder receives.

Warp Reduce kernel, one block per case instance (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``, one item a
thread); ``rank = x + bx * (y + by * z)``. The logical warps are CUB's: the block's hardware warps are its runs of
32 consecutive ranks (the last one partial when 32 does not divide the block), and each hardware warp is cut into
logical warps of ``width`` lanes from its lane 0: thread ``r`` is lane ``(r % 32) % width`` of the logical warp
``(r // 32, (r % 32) // width)`` (:func:`logical_warps`). No logical warp straddles two hardware warps; one has
fewer than ``width`` lanes (it is partial) at the end of a partial hardware warp, or at the end of every hardware
warp when ``width`` does not divide 32. The kernel is specialized on (dtype, block, ``width``, ``op``, ``mode``):

* thread ``r`` of block ``b`` holds the item ``items[b*threads + r]`` and the flag ``flags[b*threads + r]`` (uint8, 0
  or 1, read in the segmented modes only);
* mode ``reduce`` (CUB's ``Reduce(input, op, valid_items)``): a lane is valid iff its lane index is below
  ``v = min(valid[b], lanes of its logical warp)`` (``0 <= valid[b] <= width``, a run-time value uniform per block);
  every thread calls the warp reduction with its item and ``v`` (CUB's full-warp ``Reduce(input, op)`` where the
  logical warp is whole and ``v == width``); lane 0 returns the operator over the valid lanes' items in lane order,
  for ``v >= 1``;
* mode ``head`` (``HeadSegmentedReduce(input, head_flag, op)``): a segment starts at lane 0 and at every flagged
  lane, and runs to the lane before the next start or to the logical warp's last lane;
* mode ``tail`` (``TailSegmentedReduce(input, tail_flag, op)``): a segment ends at every flagged lane and at the
  logical warp's last lane, and starts at lane 0 or at the lane after a flagged one;
  in both segmented modes the first lane of each segment returns the operator over the segment's items in lane
  order (CUB, ``cub/warp/warp_reduce.cuh``: "The sum of each segment is returned to the first lane in that segment
  (which always includes lane 0)", for head and for tail flags alike);
* every thread writes its return value to ``dst[b*out + r]`` and its seen flag (1 where its operator was ever
  applied to an operand equal to the block's sentinel ``sentinel[b]``, else 0, in the dtype) to
  ``dst[b*out + threads + r]``: ``out`` is :func:`out_length`.

Only the return values of the lanes named above are defined (CUB: "undefined in other threads"); the others are
written so that a result in the wrong lane can be diagnosed, and nobody judges them. Every seen flag must be 0:
the sentinel is in every invalid lane of mode ``reduce`` and nowhere else, and no operator may meet an invalid
item. A warp reduction synchronizes within its hardware warp only: no block barrier. The operators are
:mod:`coopcheck.reduce`'s (sum, min, max, matmul, first; matmul and first are not commutative).

Worked example (reduce, sum, width 4, 6 threads, valid 3, items [1, 2, 3, 99, 5, 6]): logical warps are lanes 0-3
and 4-5 (partial); thread 0 returns 6, thread 4 returns 11 (its warp has 2 lanes, so v = 2); flags all 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coopcheck.adapter import KernelSpec
from coopcheck.vocabulary import (
    STATIC_RULES,
    WARP_REDUCE_ALGORITHMS,
    WARP_REDUCE_MODES,
    WARP_REDUCE_OPERATORS,
    WARP_SIZE,
    InvalidParameter,
    check_block,
    check_choice,
    check_dtype,
    check_operation,
)

#: The operations of this family (the contracts' ``operation``), for a backend's declaration.
OPERATIONS = frozenset({"warp.reduce"})
ALGORITHMS = WARP_REDUCE_ALGORITHMS
OPERATORS = WARP_REDUCE_OPERATORS
MODES = WARP_REDUCE_MODES
#: The contract's names for the valid lanes of a logical warp in mode reduce (its ``lanes`` case axis) -> the count
#: at a width: a backend whose warp reduction takes no valid_items tells from it which cases it can run.
VALID_LANES: dict[str, Callable[[int], int]] = {
    "full": lambda w: w, "zero": lambda w: 0, "one": lambda w: 1, "half": lambda w: w // 2, "width-1": lambda w: w - 1}
#: The logical warp widths a kernel may take (CUB: ``LogicalWarpThreads`` in [1, 32]).
WIDTHS = tuple(range(1, WARP_SIZE + 1))


@dataclass
class WarpReduceBatch:
    """Arguments of one batched Warp Reduce launch (NumPy arrays on the host; see the module ABI)."""

    items: Any  # dtype[n_blocks * threads]
    flags: Any  # uint8[n_blocks * threads]: head or tail flags (segmented modes)
    valid: Any  # int32[n_blocks]: valid lanes of each logical warp (mode reduce), in [0, width]
    sentinel: Any  # dtype[n_blocks]: the value of every invalid lane of a block
    threads: int

    @property
    def n_blocks(self) -> int:
        return len(self.valid)


def width(spec: KernelSpec) -> int:
    """The spec's logical warp width (its ``width`` axis is a string, as every variant axis)."""
    return int(spec.static("width"))


def logical_warp_of(rank: int, lanes: int) -> int:
    """The logical warp of thread ``rank`` at width ``lanes``, numbered in rank order (plain arithmetic, so a
    kernel may call it compiled).

    >>> [logical_warp_of(rank, 7) for rank in (0, 27, 28, 31, 32, 48)]
    [0, 3, 4, 4, 5, 7]
    """
    return (rank // WARP_SIZE) * -(-WARP_SIZE // lanes) + (rank % WARP_SIZE) // lanes


def logical_warps(threads: int, lanes: int) -> tuple[list[int], list[int]]:
    """(logical warp, lane) of each rank of a block of ``threads``, logical warps numbered in rank order.

    >>> logical_warps(38, 7)[0][26:38]
    [3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5]
    """
    ranks = range(threads)
    return [logical_warp_of(rank, lanes) for rank in ranks], [rank % WARP_SIZE % lanes for rank in ranks]


def whole_logical_warps(threads: int, lanes: int) -> bool:
    """Whether every logical warp of a block of ``threads`` has all its ``lanes`` lanes: CUB's precondition that "the
    number of entrant threads must be an multiple of" the width (WarpReduce's and WarpScan's overviews), which a
    CUB-based backend needs and the contract does not.

    >>> [whole_logical_warps(threads, 7) for threads in (7, 14, 32, 49)]
    [True, True, False, False]
    >>> [whole_logical_warps(threads, 4) for threads in (1, 100, 1024)]
    [False, True, True]
    """
    whole_warps, last_warp = divmod(threads, WARP_SIZE)
    return (whole_warps == 0 or WARP_SIZE % lanes == 0) and last_warp % lanes == 0


def out_length(spec: KernelSpec) -> int:
    """Elements of ``dst`` per block: every thread's return value, then every thread's seen flag.

    >>> out_length(KernelSpec("warp.reduce", "int8", (65,), 1, "any",
    ...                       variant=(("width", "8"), ("op", "sum"), ("mode", "reduce"))))
    130
    """
    return 2 * spec.threads


def check_spec(spec: KernelSpec) -> None:
    """Raise :class:`coopcheck.InvalidParameter` for the first static rule a Warp Reduce spec breaks.

    >>> try:
    ...     check_spec(KernelSpec("warp.reduce", "int32", (64,), 1, "any",
    ...                           variant=(("width", "33"), ("op", "sum"), ("mode", "reduce"))))
    ... except InvalidParameter as exc:
    ...     print(exc.rule)
    warp_reduce_width
    """
    check_warp_spec(spec, "warp_reduce", OPERATIONS, (("op", OPERATORS), ("mode", MODES)))


def check_warp_spec(spec: KernelSpec, family: str, operations: frozenset[str],
                    choices: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
    """The static rules of a warp family (Warp Reduce, Warp Scan), each named ``<family>_<rule>``, in the order a
    spec is checked: its operation, dtype, algorithm and width, then each static axis of ``choices`` (its operator
    first), one item a thread, the block, and matmul on integers only."""
    check_operation(spec.operation, operations)
    check_dtype(spec.dtype)
    check_choice(f"{family}_algorithm", spec.algorithm, ALGORITHMS)
    check_choice(f"{family}_width", spec.static("width"), tuple(map(str, WIDTHS)))
    for axis, values in choices:
        check_choice(f"{family}_{'operator' if axis == 'op' else axis}", spec.static(axis), values)
    if spec.items_per_thread != 1:
        rule = f"{family}_scalar"
        raise InvalidParameter(rule, f"{STATIC_RULES[rule]} (got {spec.items_per_thread!r})")
    check_block(spec.block)
    if spec.static("op") == "matmul" and spec.dtype.startswith("float"):
        rule = f"{family}_integer_operator"
        raise InvalidParameter(rule, f"{STATIC_RULES[rule]} (got {spec.dtype!r})")
