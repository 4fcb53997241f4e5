"""The kernel ABI of the Block Reduce family, written down once: what a backend's kernel builder receives.

Reduce kernel, one block per case instance (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``);
``rank = x + bx * (y + by * z)``, ``tile = threads * ipt``, and slot ``(r, i)`` of a block is ``r*ipt + i``
(blocked: the slot is the tile index):

* thread ``r`` of block ``b`` holds the items ``items[b*tile + r*ipt + i]``; an item is valid iff its tile index
  is below ``valid[b]`` (0 <= valid <= tile, a run-time value uniform per block);
* every thread calls the block reduction specialized on (dtype, block, ipt, ``spec.algorithm``, the operator
  ``spec.static("op")``) with its items, ``valid[b]`` and, for the recording operator ``first``, the block's
  sentinel ``sentinel[b]`` (a value no valid item of the block has: the oracle puts it in every invalid slot);
* it writes its return value to ``dst[b*out + r]`` and its seen flag (1 where its operator was ever applied to
  an operand equal to the sentinel, else 0, in the dtype) to ``dst[b*out + threads + r]``: ``out`` is
  :func:`out_length`.

Only thread 0's return value is defined (CUB: "the return value is undefined in threads other than thread 0",
``cub/block/block_reduce.cuh``), and only for ``valid >= 1``: with no valid item there is nothing to reduce (a
user operator has no identity). The others are written so that a result landing in the wrong thread can be
diagnosed; nobody judges them. Every seen flag must be 0: no operator is ever applied to an invalid item.

The operators (``op``; integers wrap in two's complement, floats follow IEEE 754 in the dtype):

* sum: ``a + b``; min / max: integers ``a < b ? a : b`` (``b < a``), floats ``fmin`` / ``fmax`` (a NaN operand
  is ignored unless both are NaN), as CUB's ``cuda::minimum`` / ``cuda::maximum``;
* matmul (integers only): the item's bits are a 2x2 matrix ``[[e0, e1], [e2, e3]]`` of ``k = bits / 4``-bit
  entries (``e0`` the lowest), multiplied modulo ``2**k``: ``a @ b``; associative, not commutative;
* first: ``b if a == 0 else a`` (the first non-zero operand; -0.0 counts as zero, NaN does not): associative,
  not commutative; it records an operand equal to the block's sentinel in the thread's seen flag.

Worked example (sum, 2 threads, ipt=2, valid 3, items [1, 2, 3, 99]): thread 0 returns 6; thread 1's return
value is unspecified; every seen flag is 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coopcheck.adapter import KernelSpec
from coopcheck.vocabulary import (
    REDUCE_ALGORITHMS,
    REDUCE_OPERATORS,
    STATIC_RULES,
    InvalidParameter,
    check_block,
    check_choice,
    check_dtype,
    check_items_per_thread,
    check_operation,
)

#: The operations of this family (the contracts' ``operation``), for a backend's declaration.
OPERATIONS = frozenset({"block.reduce"})
ALGORITHMS = REDUCE_ALGORITHMS
OPERATORS = REDUCE_OPERATORS
#: The operators whose operands may be swapped; only these go with raking_commutative_only.
COMMUTATIVE = ("sum", "min", "max")
#: The operators that select one of their operands (their every partial result is an item).
SELECTING = ("min", "max", "first")
#: The operator that records an operand equal to the block's sentinel.
RECORDING = "first"


@dataclass
class ReduceBatch:
    """Arguments of one batched Reduce launch (NumPy arrays on the host; see the module ABI)."""

    items: Any  # dtype[n_blocks * tile]
    valid: Any  # int32[n_blocks]
    sentinel: Any  # dtype[n_blocks]: the value of every invalid item of a block with the operator first
    tile: int

    @property
    def n_blocks(self) -> int:
        return len(self.valid)


def out_length(spec: KernelSpec) -> int:
    """Elements of ``dst`` per block: every thread's return value, then every thread's seen flag.

    >>> out_length(KernelSpec("block.reduce", "int8", (65,), 2, "raking", variant=(("op", "sum"),)))
    130
    """
    return 2 * spec.threads


def check_spec(spec: KernelSpec) -> None:
    """Raise :class:`coopcheck.InvalidParameter` for the first static rule a Reduce spec breaks.

    >>> try:
    ...     check_spec(KernelSpec("block.reduce", "int32", (64,), 1, "raking_commutative_only",
    ...                           variant=(("op", "matmul"),)))
    ... except InvalidParameter as exc:
    ...     print(exc.rule)
    reduce_commutative
    """
    check_operation(spec.operation, OPERATIONS)
    check_dtype(spec.dtype)
    check_choice("reduce_algorithm", spec.algorithm, ALGORITHMS)
    op = spec.static("op")
    check_choice("reduce_operator", op, OPERATORS)
    check_items_per_thread(spec.items_per_thread)
    check_block(spec.block)
    if spec.algorithm == "raking_commutative_only" and op not in COMMUTATIVE:
        raise InvalidParameter("reduce_commutative", f"{STATIC_RULES['reduce_commutative']} (got {op!r})")
    if op == "matmul" and spec.dtype.startswith("float"):
        raise InvalidParameter("reduce_integer_operator",
                               f"{STATIC_RULES['reduce_integer_operator']} (got {spec.dtype!r})")
