"""The kernel ABI of the Block Scan family, written down once: what a backend's kernel builder receives.

Scan kernel, one block per case instance (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``);
``rank = x + bx * (y + by * z)``, ``tile = threads * ipt``, and slot ``(r, i)`` of a tile is ``r*ipt + i`` (blocked:
the slot is the tile index). The kernel is specialized on (dtype, block, ipt, ``spec.algorithm``) and the statics
``op``, ``mode`` and ``seed``; a block scans :func:`tiles` tiles one after the other:

* thread ``r`` of block ``b`` holds, for tile ``k``, the items ``items[(b*tiles + k)*tile + r*ipt + i]``;
* ``seed`` says what logically prefixes each tile's items: ``none``, nothing; ``initial``, the block's
  ``initial[b]`` (CUB's ``initial_value``); ``prefix``, a block prefix callback: every thread holds one, whose
  running prefix starts as ``initial[b]``; called with the block aggregate ``A`` of a tile it returns its running
  prefix ``P`` and sets it to ``op(P, A)``; the tile is prefixed by what thread 0's callback returned (CUB: the
  value lane 0 of the first warp returns);
* it writes its scanned items of tile ``k`` to ``dst[b*out + k*tile + r*ipt + i]``: with mode ``inclusive`` item
  ``t`` of the tile is ``op(seed, x_0, ..., x_t)``, with ``exclusive`` ``op(seed, x_0, ..., x_(t-1))`` (the seed
  itself at ``t = 0``; with no seed item 0 is undefined, but for sum, which starts from 0: CUB's ExclusiveSum);
* then for every tile the block aggregate the thread saw to ``dst[b*out + tiles*tile + k*threads + r]``: with seed
  ``none`` or ``initial`` what the scan returned as ``block_aggregate`` (the operator over the tile's items, the seed
  not among them), with ``prefix`` the argument of the thread's callback call in that tile (any value when the
  thread made none: only thread 0 must make one);
* then how many times the thread called its callback to ``dst[b*out + tiles*tile + tiles*threads + r]``, in the
  dtype (0 without a callback). Thread 0 calls it once per tile, no thread outside the first warp ever; the other
  threads of the first warp may (CUB's raking calls it in its raking threads, its warp_scans in the whole warp).
``out`` is :func:`out_length`.

The operators are :mod:`coopcheck.reduce`'s sum, min, max and matmul (integers wrap; min and max of floats are fmin
and fmax). Worked example (inclusive sum, seed initial 10, 2 threads, ipt=2, items [1, 2, 3, 4]): thread 0 writes
[11, 13], thread 1 [16, 20], and both aggregates 10 (1 + 2 + 3 + 4, the seed not among them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coopcheck.adapter import KernelSpec
from coopcheck.vocabulary import (
    SCAN_ALGORITHMS,
    SCAN_MODES,
    SCAN_OPERATORS,
    SCAN_SEEDS,
    STATIC_RULES,
    InvalidParameter,
    check_block,
    check_choice,
    check_dtype,
    check_items_per_thread,
    check_operation,
)

#: The operations of this family (the contracts' ``operation``), for a backend's declaration.
OPERATIONS = frozenset({"block.scan"})
ALGORITHMS = SCAN_ALGORITHMS
OPERATORS = SCAN_OPERATORS
MODES = SCAN_MODES
SEEDS = SCAN_SEEDS
#: Tiles a block scans with the prefix callback carried across them (one without it).
PREFIX_TILES = 3


@dataclass
class ScanBatch:
    """Arguments of one batched Scan launch (NumPy arrays on the host; see the module ABI)."""

    items: Any  # dtype[n_blocks * tiles * tile]
    initial: Any  # dtype[n_blocks]: the initial value, or the callback's first running prefix
    tile: int
    tiles: int

    @property
    def n_blocks(self) -> int:
        return len(self.initial)


def tiles(spec: KernelSpec) -> int:
    """Tiles one block scans: :data:`PREFIX_TILES` with the prefix callback, else one."""
    return PREFIX_TILES if spec.static("seed") == "prefix" else 1


def out_length(spec: KernelSpec) -> int:
    """Elements of ``dst`` per block: the scanned tiles, every thread's aggregate of each tile, its callback calls.

    >>> out_length(KernelSpec("block.scan", "int8", (65,), 2, "raking",
    ...                       variant=(("op", "sum"), ("mode", "inclusive"), ("seed", "prefix"))))
    650
    """
    n = tiles(spec)
    return n * spec.tile + n * spec.threads + spec.threads


def check_spec(spec: KernelSpec) -> None:
    """Raise :class:`coopcheck.InvalidParameter` for the first static rule a Scan spec breaks.

    >>> try:
    ...     check_spec(KernelSpec("block.scan", "float32", (64,), 1, "raking",
    ...                           variant=(("op", "matmul"), ("mode", "inclusive"), ("seed", "none"))))
    ... except InvalidParameter as exc:
    ...     print(exc.rule)
    scan_integer_operator
    """
    check_operation(spec.operation, OPERATIONS)
    check_dtype(spec.dtype)
    check_choice("scan_algorithm", spec.algorithm, ALGORITHMS)
    op = spec.static("op")
    check_choice("scan_operator", op, OPERATORS)
    check_choice("scan_mode", spec.static("mode"), MODES)
    check_choice("scan_seed", spec.static("seed"), SEEDS)
    check_items_per_thread(spec.items_per_thread)
    check_block(spec.block)
    if op == "matmul" and spec.dtype.startswith("float"):
        raise InvalidParameter("scan_integer_operator", f"{STATIC_RULES['scan_integer_operator']} (got {spec.dtype!r})")
