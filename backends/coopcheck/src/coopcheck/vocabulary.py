"""The operation vocabulary shared by every backend, and the static parameter rules they enforce.

The rules live here once so that every backend rejects the same bad parameters with the same
rule name; a backend calls :func:`check_static` from its own public entry point.
"""

from __future__ import annotations

from collections.abc import Collection
from math import prod

OPERATIONS = ("block.load", "block.store")
ALGORITHMS = ("direct", "striped", "vectorize", "transpose", "warp_transpose")
#: Algorithms that exchange through shared scratch and a barrier.
TRANSPOSE_FAMILY = ("transpose", "warp_transpose")
DTYPES = (
    "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64",
)
WARP_SIZE = 32
MAX_BLOCK_THREADS = 1024
#: Block Exchange's methods, CUB's eight (see :mod:`coopcheck.exchange`).
EXCHANGE_METHODS = (
    "striped_to_blocked", "blocked_to_striped", "warp_striped_to_blocked", "blocked_to_warp_striped",
    "scatter_to_blocked", "scatter_to_striped", "scatter_to_striped_guarded", "scatter_to_striped_flagged",
)
#: Block Shuffle's methods: CUB's Offset, Rotate, Up and Down, and Up / Down with their block item (see
#: :mod:`coopcheck.shuffle`).
SHUFFLE_METHODS = ("offset", "rotate", "up", "down", "up_suffix", "down_prefix")
#: Block Reduce's algorithms, CUB's three deterministic ones, and its operators (see :mod:`coopcheck.reduce`).
REDUCE_ALGORITHMS = ("raking", "raking_commutative_only", "warp_reductions")
REDUCE_OPERATORS = ("sum", "min", "max", "matmul", "first")
#: Block Scan's algorithms (CUB's three), operators, modes and seeds (see :mod:`coopcheck.scan`).
SCAN_ALGORITHMS = ("raking", "raking_memoize", "warp_scans")
SCAN_OPERATORS = ("sum", "min", "max", "matmul")
SCAN_MODES = ("inclusive", "exclusive")
SCAN_SEEDS = ("none", "initial", "prefix")
#: Warp Reduce's algorithm (one: the backend picks its own, as CUB picks shuffles or shared memory by the width),
#: operators and modes (see :mod:`coopcheck.warp_reduce`).
WARP_REDUCE_ALGORITHMS = ("any",)
WARP_REDUCE_OPERATORS = REDUCE_OPERATORS
WARP_REDUCE_MODES = ("reduce", "head", "tail")
#: Warp Scan's algorithm (one, as Warp Reduce's), operators, modes, seeds and warp aggregate outputs (see
#: :mod:`coopcheck.warp_scan`).
WARP_SCAN_ALGORITHMS = WARP_REDUCE_ALGORITHMS
WARP_SCAN_OPERATORS = SCAN_OPERATORS
WARP_SCAN_MODES = SCAN_MODES
WARP_SCAN_SEEDS = ("none", "initial")
WARP_SCAN_AGGREGATES = ("on", "off")


class InvalidParameter(ValueError):
    """A static parameter combination the API refuses; ``rule`` names the broken rule."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} [{rule}]")
        self.rule = rule


#: rule name -> what it forbids; the contracts name these in their ``reject`` tables.
STATIC_RULES = {
    "items_per_thread": "items_per_thread must be a positive int",
    "warp_multiple": "warp_transpose needs a block whose thread count is a multiple of 32",
    "store_oob_default": "oob_default applies to Load only",
    "valid_items_range": "a static valid_items must lie in [0, threads * items_per_thread]",
    "offset_negative": "offset must be >= 0",
    "algorithm": "algorithm must be one of " + ", ".join(ALGORITHMS),
    "block": f"a block has 1 to 3 positive extents and at most {MAX_BLOCK_THREADS} threads",
    "oob_default_value": "a static oob_default is a number (not a bool) that the dtype represents",
    "dtype": "dtype must be one of " + ", ".join(DTYPES),
    # Block Exchange (coopcheck.exchange)
    "exchange_method": "an exchange method is one of " + ", ".join(EXCHANGE_METHODS),
    "exchange_slicing": "warp time-slicing is on or off",
    "exchange_output": "an exchange's output is inplace or separate",
    "exchange_warp_multiple": "the warp-striped exchange methods need a block of whole warps, or one warp of fewer "
                              "than 32 threads (time-sliced or not)",
    # Block Shuffle (coopcheck.shuffle)
    "shuffle_method": "a shuffle method is one of " + ", ".join(SHUFFLE_METHODS),
    "shuffle_output": "a shuffle's output is inplace or separate",
    "shuffle_scalar": "offset and rotate move one item per thread (items_per_thread 1)",
    "shuffle_offset_distance": "offset's distance is an int with |distance| < threads (a source inside the block)",
    "shuffle_rotate_distance": "rotate's distance is an int in [1, threads)",
    "shuffle_no_distance": "up and down take no distance",
    # Block Reduce (coopcheck.reduce)
    "reduce_algorithm": "a reduce algorithm is one of " + ", ".join(REDUCE_ALGORITHMS),
    "reduce_operator": "a reduce operator is one of " + ", ".join(REDUCE_OPERATORS),
    "reduce_commutative": "raking_commutative_only takes a commutative operator (sum, min or max)",
    "reduce_integer_operator": "matmul multiplies 2x2 matrices packed into an integer item: integer dtypes only",
    # Block Scan (coopcheck.scan)
    "scan_algorithm": "a scan algorithm is one of " + ", ".join(SCAN_ALGORITHMS),
    "scan_operator": "a scan operator is one of " + ", ".join(SCAN_OPERATORS),
    "scan_mode": "a scan is inclusive or exclusive",
    "scan_seed": "a scan's seed is none, an initial value or a block prefix callback (" + ", ".join(SCAN_SEEDS) + ")",
    "scan_integer_operator": "matmul multiplies 2x2 matrices packed into an integer item: integer dtypes only",
    # Warp Reduce (coopcheck.warp_reduce)
    "warp_reduce_algorithm": "a warp reduce algorithm is one of " + ", ".join(WARP_REDUCE_ALGORITHMS),
    "warp_reduce_width": f"a logical warp has 1 to {WARP_SIZE} threads (CUB's LogicalWarpThreads)",
    "warp_reduce_operator": "a warp reduce operator is one of " + ", ".join(WARP_REDUCE_OPERATORS),
    "warp_reduce_mode": "a warp reduction is a plain, head-segmented or tail-segmented one ("
                        + ", ".join(WARP_REDUCE_MODES) + ")",
    "warp_reduce_scalar": "a warp reduction takes one item a thread (items_per_thread 1)",
    "warp_reduce_integer_operator": "matmul multiplies 2x2 matrices packed into an integer item: integer dtypes only",
    # Warp Scan (coopcheck.warp_scan)
    "warp_scan_algorithm": "a warp scan algorithm is one of " + ", ".join(WARP_SCAN_ALGORITHMS),
    "warp_scan_width": f"a logical warp has 1 to {WARP_SIZE} threads (CUB's LOGICAL_WARP_THREADS)",
    "warp_scan_operator": "a warp scan operator is one of " + ", ".join(WARP_SCAN_OPERATORS),
    "warp_scan_mode": "a warp scan is inclusive or exclusive",
    "warp_scan_seed": "a warp scan's seed is none or an initial value (" + ", ".join(WARP_SCAN_SEEDS) + ")",
    "warp_scan_aggregate": "a warp scan writes its warp aggregate or not (" + ", ".join(WARP_SCAN_AGGREGATES) + ")",
    "warp_scan_scalar": "a warp scan takes one item a thread (items_per_thread 1)",
    "warp_scan_integer_operator": "matmul multiplies 2x2 matrices packed into an integer item: integer dtypes only",
}


def block_threads(block: tuple[int, ...]) -> int:
    """Threads in a block of shape (x[, y[, z]])."""
    return prod(block)


def check_operation(operation: str, operations: Collection[str]) -> None:
    """The ``operation`` rule: a family's entry point takes its own operations only."""
    if operation not in operations:
        raise InvalidParameter("operation", f"unknown operation {operation!r}")


def check_choice(rule: str, value: object, choices: Collection[object]) -> None:
    """A rule that names the values a parameter may take (a method, a kernel axis): ``value`` is one of them.

    >>> check_choice("shuffle_output", "inplace", ("inplace", "separate"))
    """
    if value not in choices:
        raise InvalidParameter(rule, f"{STATIC_RULES[rule]} (got {value!r})")


def check_dtype(dtype: str) -> None:
    """The ``dtype`` rule, which every family shares."""
    if dtype not in DTYPES:
        raise InvalidParameter("dtype", f"{STATIC_RULES['dtype']} (got {dtype!r})")


def check_items_per_thread(items_per_thread: int) -> None:
    """The ``items_per_thread`` rule, which every family shares."""
    if type(items_per_thread) is not int or items_per_thread < 1:
        raise InvalidParameter(
            "items_per_thread", f"{STATIC_RULES['items_per_thread']} (got {items_per_thread!r})"
        )


def check_block(block: tuple[int, ...]) -> None:
    """The ``block`` rule, which every family shares."""
    if not isinstance(block, tuple) or not 1 <= len(block) <= 3 \
            or any(type(d) is not int or d < 1 for d in block) or block_threads(block) > MAX_BLOCK_THREADS:
        raise InvalidParameter("block", f"{STATIC_RULES['block']} (got {block!r})")


def check_static(
    operation: str,
    *,
    block: tuple[int, ...],
    items_per_thread: int,
    algorithm: str,
    dtype: str,
    oob_default: bool = False,
    valid_items: int | None = None,
    offset: int | None = None,
) -> None:
    """Raise :class:`InvalidParameter` for the first static rule the parameters break.

    ``valid_items`` and ``offset`` are checked only when they are compile-time constants.

    >>> try:
    ...     check_static("block.load", block=(100,), items_per_thread=4, algorithm="warp_transpose",
    ...                  dtype="int32")
    ... except InvalidParameter as exc:
    ...     print(exc.rule)
    warp_multiple
    """
    check_operation(operation, OPERATIONS)
    check_dtype(dtype)
    check_choice("algorithm", algorithm, ALGORITHMS)
    check_items_per_thread(items_per_thread)
    check_block(block)
    threads = block_threads(block)
    if algorithm == "warp_transpose" and threads % WARP_SIZE:
        raise InvalidParameter(
            "warp_multiple", f"{STATIC_RULES['warp_multiple']} (got {threads} threads)"
        )
    if oob_default and operation == "block.store":
        raise InvalidParameter("store_oob_default", STATIC_RULES["store_oob_default"])
    tile = threads * items_per_thread
    if valid_items is not None and not 0 <= valid_items <= tile:
        raise InvalidParameter(
            "valid_items_range",
            f"a static valid_items must lie in [0, {tile}] (got {valid_items})",
        )
    if offset is not None and offset < 0:
        raise InvalidParameter("offset_negative", f"{STATIC_RULES['offset_negative']} (got {offset})")
