"""The static plan of one block Load/Store call: the rules it must pass and the sizes device code needs.

Pure Python (no cutlass import), so the adapter and host tests use the same numbers the kernels do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import coopcheck
from coopcheck.vocabulary import TRANSPOSE_FAMILY, WARP_SIZE

#: Bytes per element of each coop dtype.
DTYPE_BYTES = {
    "uint8": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
    "int64": 8, "uint64": 8, "float16": 2, "float32": 4, "float64": 8,
}
#: The widest global access a thread issues on sm_90 (LDG.E.128 / STG.E.128).
WIDEST_ACCESS_BYTES = 16
#: Alignment of the transpose scratch in shared memory (one wide access).
SCRATCH_ALIGN = 16


class BlockTile:
    """The threads and tile of a plan's block shape and items per thread (every plan's first arithmetic)."""

    block: tuple[int, ...]
    items_per_thread: int

    @property
    def threads(self) -> int:
        return coopcheck.block_threads(self.block)

    @property
    def tile(self) -> int:
        return self.threads * self.items_per_thread


class RakingGrid(BlockTile):
    """CUB's BlockRakingLayout (without its bank padding): at most a warp of raking threads, each over one segment
    of a grid of one partial a thread (Reduce's raking and Scan's raking algorithms share it)."""

    @property
    def segment(self) -> int:
        """Partials a raking thread reduces: ceil(threads / raking threads), at most a warp of raking threads."""
        return -(-self.threads // min(self.threads, WARP_SIZE))

    @property
    def raking_threads(self) -> int:
        return -(-self.threads // self.segment)


@dataclass(frozen=True)
class ItemsPlan(BlockTile):
    """The fields a plan of the families that pass items between threads (Exchange, Shuffle, Reduce) starts with,
    and the bytes of its ``scratch_items``."""

    dtype: str
    block: tuple[int, ...]
    items_per_thread: int

    @property
    def scratch_items(self) -> int:
        raise NotImplementedError

    @property
    def scratch_bytes(self) -> int:
        return self.scratch_items * DTYPE_BYTES[self.dtype]


@dataclass(frozen=True)
class Plan(BlockTile):
    """A validated block Load/Store configuration; every field is a compile-time constant."""

    operation: str
    dtype: str
    block: tuple[int, ...]
    items_per_thread: int
    algorithm: str

    @property
    def striped(self) -> bool:
        """Whether item i of rank r is tile index r + i*threads (else r*ipt + i)."""
        return self.algorithm == "striped"

    @property
    def vector_items(self) -> int:
        """Items per wide access of ``vectorize``: the largest power of two dividing items_per_thread
        whose bytes fit one 16-byte access; 1 means vectorize degenerates to direct."""
        size = DTYPE_BYTES[self.dtype]
        limit = WIDEST_ACCESS_BYTES // size
        return math.gcd(self.items_per_thread & -self.items_per_thread, limit)

    @property
    def scratch_items(self) -> int:
        """Shared-memory elements the exchange needs: a whole tile for the transpose family."""
        return self.tile if self.algorithm in TRANSPOSE_FAMILY else 0

    @property
    def scratch_bytes(self) -> int:
        return self.scratch_items * DTYPE_BYTES[self.dtype]


def make_plan(
    operation: str,
    *,
    dtype: str,
    block: tuple[int, ...],
    items_per_thread: int,
    algorithm: str,
    oob_default: bool = False,
    valid_items: int | None = None,
    offset: int | None = None,
) -> Plan:
    """Check every static rule (``coopcheck.check_static``) and return the plan.

    >>> make_plan("block.load", dtype="int32", block=(16, 8), items_per_thread=4,
    ...           algorithm="vectorize").vector_items
    4
    """
    coopcheck.check_static(
        operation, block=block, items_per_thread=items_per_thread, algorithm=algorithm, dtype=dtype,
        oob_default=oob_default, valid_items=valid_items, offset=offset,
    )
    return Plan(operation, dtype, block, items_per_thread, algorithm)


def check_oob_value(dtype: str, value: object) -> None:
    """Refuse a static ``oob_default`` that is not a number of ``dtype``'s kind or does not fit it."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise coopcheck.InvalidParameter(
            "oob_default_value", f"oob_default must be an int or float (got {value!r})"
        )
    if dtype.startswith("float"):
        return
    if not isinstance(value, int):
        raise coopcheck.InvalidParameter(
            "oob_default_value", f"oob_default for {dtype} must be an int (got {value!r})"
        )
    bits = DTYPE_BYTES[dtype] * 8
    low, high = (0, 2**bits - 1) if dtype.startswith("uint") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if not low <= value <= high:
        raise coopcheck.InvalidParameter(
            "oob_default_value", f"oob_default {value} does not fit {dtype} [{low}, {high}]"
        )



def spec_plan(spec: coopcheck.KernelSpec) -> Plan:
    """The checked plan of a harness spec (raises ``coopcheck.InvalidParameter`` for a rejected static)."""
    return make_plan(
        spec.operation, dtype=spec.dtype, block=spec.block, items_per_thread=spec.items_per_thread,
        algorithm=spec.algorithm, oob_default=spec.static("store_oob_default", False),
        valid_items=spec.static("static_valid_items"), offset=spec.static("static_offset"),
    )
