"""The kernel ABI of the Block Shuffle family, written down once: what a backend's kernel builder receives.

Shuffle kernel, one block per case instance (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``);
``rank = x + bx * (y + by * z)``, ``tile = threads * ipt``, and slot ``(r, i)`` of a block is ``r*ipt + i``
(blocked: the slot is the tile index):

* thread ``r`` of block ``b`` starts with the items ``items[b*tile + r*ipt + i]``; in place
  (``spec.static("output") == "inplace"``) the call's output is that array itself, else (``"separate"``) a
  second array of its own that starts as ``prior[b*(tile + threads) + r*ipt + i]``; the up_suffix and down_prefix
  forms' block item starts as ``prior[b*(tile + threads) + tile + r]``;
* it calls ``spec.algorithm`` of a block shuffle specialized on (dtype, block, ipt); offset and rotate (ipt 1)
  with the run-time distance ``distance[b]``, up and down without one (``distance[b]`` is 0 there);
* it writes the output items to ``dst[b*out + r*ipt + i]``; with a separate output then the input items as the
  call left them to ``dst[b*out + tile + r*ipt + i]``; for up_suffix and down_prefix then its block item to
  ``dst[b*out + out - threads + r]``: ``out`` is :func:`out_length`.

The methods (CUB's ``BlockShuffle``; ``in`` the input tile, ``out`` the output tile by tile index):

* offset: ``out[r] = in[r + distance]`` where ``0 <= r + distance < threads``; another thread's output is left
  as it was (``|distance| < threads``, negative allowed);
* rotate: ``out[r] = in[(r + distance) % threads]`` for every thread (``0 < distance < threads``);
* up: ``out[t] = in[t - 1]`` for ``t >= 1``; ``out[0]`` (thread 0's item 0) is left as it was;
* down: ``out[t] = in[t + 1]`` for ``t < tile - 1``; ``out[tile - 1]`` (the last thread's last item) is left;
* up_suffix: up, and every thread's block item (CUB's ``block_suffix``) is ``in[tile - 1]``;
* down_prefix: down, and every thread's block item (CUB's ``block_prefix``) is ``in[0]``.

Left as it was means: in place, the thread's own input item; separate, the output's ``prior`` value.

Worked example (up, 2 threads, ipt=2, in place, items [10, 11, 12, 13]): rank 0 gets [10, 10] (its item 0 is
left as it was), rank 1 gets [11, 12].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coopcheck.adapter import KernelSpec
from coopcheck.vocabulary import (
    SHUFFLE_METHODS,
    STATIC_RULES,
    InvalidParameter,
    block_threads,
    check_block,
    check_choice,
    check_dtype,
    check_items_per_thread,
    check_operation,
)

#: The operations of this family (the contracts' ``operation``), for a backend's declaration.
OPERATIONS = frozenset({"block.shuffle"})
METHODS = SHUFFLE_METHODS
#: The methods that move one item per thread by a run-time distance.
SCALAR = ("offset", "rotate")
#: The methods that shift the blocked tile by one item; of those, the ones that also give a block item.
SHIFTS = ("up", "down", "up_suffix", "down_prefix")
BLOCK_ITEM = ("up_suffix", "down_prefix")
#: The values of the family's own kernel axis (``spec.static("output")``).
OUTPUTS = ("inplace", "separate")


@dataclass
class ShuffleBatch:
    """Arguments of one batched Shuffle launch (NumPy arrays on the host; see the module ABI)."""

    items: Any  # dtype[n_blocks * tile]
    prior: Any  # dtype[n_blocks * (tile + threads)]: the separate output's and the block item's starting values
    distance: Any  # int32[n_blocks]
    tile: int

    @property
    def n_blocks(self) -> int:
        return len(self.distance)


def out_length(spec: KernelSpec) -> int:
    """Elements of ``dst`` per block: the output items, with a separate output the input items, with a block
    item form every thread's block item.

    >>> out_length(KernelSpec("block.shuffle", "int8", (4,), 2, "up_suffix", variant=(("output", "separate"),)))
    20
    """
    tile = spec.tile * (2 if spec.static("output") == "separate" else 1)
    return tile + (spec.threads if spec.algorithm in BLOCK_ITEM else 0)


def distance_problem(method: str, distance: object, threads: int) -> str | None:
    """The static rule a distance breaks for ``method`` on a block of ``threads`` threads (None: it fits).

    >>> distance_problem("rotate", 0, 32), distance_problem("offset", -31, 32)
    ('shuffle_rotate_distance', None)
    """
    if method not in SCALAR:
        return "shuffle_no_distance"
    if type(distance) is not int:
        return f"shuffle_{method}_distance"
    inside = -threads < distance < threads if method == "offset" else 0 < distance < threads
    return None if inside else f"shuffle_{method}_distance"


def check_spec(spec: KernelSpec) -> None:
    """Raise :class:`coopcheck.InvalidParameter` for the first static rule a Shuffle spec breaks; a distance is
    checked only where it is a compile-time constant (``spec.static("static_distance")``).

    >>> try:
    ...     check_spec(KernelSpec("block.shuffle", "int32", (64,), 1, "offset", statics=(("static_distance", 64),),
    ...                           variant=(("output", "inplace"),)))
    ... except InvalidParameter as exc:
    ...     print(exc.rule)
    shuffle_offset_distance
    """
    check_operation(spec.operation, OPERATIONS)
    check_dtype(spec.dtype)
    check_choice("shuffle_method", spec.algorithm, METHODS)
    check_choice("shuffle_output", spec.static("output"), OUTPUTS)
    check_items_per_thread(spec.items_per_thread)
    if spec.algorithm in SCALAR and spec.items_per_thread != 1:
        raise InvalidParameter("shuffle_scalar", f"{STATIC_RULES['shuffle_scalar']} (got {spec.items_per_thread})")
    check_block(spec.block)
    distance = spec.static("static_distance")
    if distance is not None:
        rule = distance_problem(spec.algorithm, distance, block_threads(spec.block))
        if rule is not None:
            raise InvalidParameter(rule, f"{STATIC_RULES[rule]} (got {distance!r} on {block_threads(spec.block)} "
                                         "threads)")
