"""The crate's exports as the host sees them: which specializations exist and each kernel's parameters.

The crate exports one kernel per specialization of each family it implements (Load/Store in
``kernels/src/kernels.rs``, Exchange in ``exchange_kernels.rs``, Shuffle in ``shuffle_kernels.rs``, Reduce in
``reduce_kernels.rs``, Scan in ``scan_kernels.rs``, Warp Reduce in ``warp_reduce_kernels.rs``, Warp Scan in
``warp_scan_kernels.rs``): dtype x items_per_thread x algorithm x the family's variant values, less those its
family's static rules refuse; the block shape is read at run time, and so are Scan's mode and seed and the warp
families' width, mode, seed and aggregate (:data:`RUN_TIME_STATICS`: one entry serves every specialization that
differs in them only, named by :func:`entry_symbol`). Parameters follow the family's batched ABI
(``coopcheck.load_store``, ``coopcheck.exchange``, ``coopcheck.shuffle``, ``coopcheck.reduce``, ``coopcheck.scan``,
``coopcheck.warp_reduce``, ``coopcheck.warp_scan``) in its order, the run-time statics after it; the C types are
those of the crate.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import coopcheck
from coopcheck import (
    InvalidParameter,
    KernelSpec,
    exchange,
    kernel_symbol,
    load_store,
    reduce,
    scan,
    shuffle,
    warp_reduce,
    warp_scan,
)
from coopcheck.families import check_spec, family_of
from coopcheck.vocabulary import WARP_SIZE

#: items_per_thread values the crate exports Load/Store kernels for.
ITEMS_PER_THREAD = (1, 2, 3, 4, 7, 8, 16)
#: ... and Exchange and Shuffle kernels for (those families' contracts go to 8); offset and rotate move one item.
FAMILY_ITEMS_PER_THREAD = (1, 2, 3, 4, 7, 8)
#: ... and Reduce kernels for: its contract's values (8 is not among them).
REDUCE_ITEMS_PER_THREAD = (1, 2, 3, 4, 7, 16)
#: ... and Scan kernels for: its contract's values.
SCAN_ITEMS_PER_THREAD = (1, 2, 4, 7, 16)
#: A logical warp width's code: its lane count (index ``w`` holds ``str(w)``).
WIDTH_CODES = tuple(map(str, range(WARP_SIZE + 1)))
#: Per operation, the variant axes its kernels take as run-time parameters, each value passed as its index here.
RUN_TIME_STATICS = {
    "block.scan": {"mode": scan.MODES, "seed": scan.SEEDS},
    "warp.reduce": {"width": WIDTH_CODES, "mode": warp_reduce.MODES},
    "warp.scan": {"width": WIDTH_CODES, "mode": warp_scan.MODES, "seed": warp_scan.SEEDS,
                  "aggregate": warp_scan.AGGREGATES},
}
#: Bytes per element; float16 travels as its 16 bits.
ITEM_BYTES = {
    "uint8": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
    "float16": 2, "float32": 4, "float64": 8,
}
#: Kernels of the crate that are no contract specialization: the per-capability build probes.
PROBE_CUDA_ARCH = "coop_probe_cuda_arch"
PROBE_SM90 = "coop_probe_cluster_blocks"  # exported only by passes built with cfg(cuda_arch = "90")


@dataclass(frozen=True)
class Param:
    """One kernel parameter: a device pointer to ``dtype`` elements, or an ``int64_t`` by value."""

    name: str
    dtype: str | None = None  # None: the kernel's own dtype
    pointer: bool = True


#: ``(const T *src, const T *init, T *dst, const int32_t *valid, const int64_t *offset,
#: const int32_t *has_oob, const T *oob, int64_t region)``
LOAD_PARAMS = (
    Param("src"), Param("init"), Param("dst"), Param("valid", "int32"), Param("offset", "int64"),
    Param("has_oob", "int32"), Param("oob"), Param("region", "int64", pointer=False),
)
#: ``(const T *items, T *dst, const int32_t *valid, const int64_t *offset, int64_t region)``
STORE_PARAMS = (
    Param("items"), Param("dst"), Param("valid", "int32"), Param("offset", "int64"),
    Param("region", "int64", pointer=False),
)
#: ``(const T *items, const int32_t *ranks, const int32_t *flags, T *dst)``
EXCHANGE_PARAMS = (Param("items"), Param("ranks", "int32"), Param("flags", "int32"), Param("dst"))
#: ``(const T *items, const T *prior, const int32_t *distance, T *dst)``
SHUFFLE_PARAMS = (Param("items"), Param("prior"), Param("distance", "int32"), Param("dst"))
#: ``(const T *items, const int32_t *valid, const T *sentinel, T *dst)``
REDUCE_PARAMS = (Param("items"), Param("valid", "int32"), Param("sentinel"), Param("dst"))
#: ``(const T *items, const T *initial, T *dst, int64_t mode, int64_t seed)``
SCAN_PARAMS = (Param("items"), Param("initial"), Param("dst"), Param("mode", "int64", pointer=False),
               Param("seed", "int64", pointer=False))
#: ``(const T *items, const uint8_t *flags, const int32_t *valid, const T *sentinel, T *dst, int64_t width,
#: int64_t mode)``
WARP_REDUCE_PARAMS = (Param("items"), Param("flags", "uint8"), Param("valid", "int32"), Param("sentinel"),
                      Param("dst"), Param("width", "int64", pointer=False), Param("mode", "int64", pointer=False))
#: ``(const T *items, const T *initial, T *dst, int64_t width, int64_t mode, int64_t seed, int64_t aggregate)``
WARP_SCAN_PARAMS = (Param("items"), Param("initial"), Param("dst"), Param("width", "int64", pointer=False),
                    Param("mode", "int64", pointer=False), Param("seed", "int64", pointer=False),
                    Param("aggregate", "int64", pointer=False))
PARAMS = {"block.load": LOAD_PARAMS, "block.store": STORE_PARAMS, "block.exchange": EXCHANGE_PARAMS,
          "block.shuffle": SHUFFLE_PARAMS, "block.reduce": REDUCE_PARAMS, "block.scan": SCAN_PARAMS,
          "warp.reduce": WARP_REDUCE_PARAMS, "warp.scan": WARP_SCAN_PARAMS}
OPERATIONS = frozenset(PARAMS)


def exported_items_per_thread(operation: str, algorithm: str) -> tuple[int, ...]:
    """The items_per_thread values the crate exports kernels of ``operation``'s ``algorithm`` for."""
    if operation in load_store.OPERATIONS:
        return ITEMS_PER_THREAD
    if operation in reduce.OPERATIONS:
        return REDUCE_ITEMS_PER_THREAD
    if operation in scan.OPERATIONS:
        return SCAN_ITEMS_PER_THREAD
    if operation in warp_reduce.OPERATIONS | warp_scan.OPERATIONS:
        return (1,)
    return (1,) if algorithm in shuffle.SCALAR else FAMILY_ITEMS_PER_THREAD


def statics_ok(spec: KernelSpec) -> bool:
    """Whether ``spec`` keeps every static rule of its family."""
    try:
        check_spec(spec)
    except InvalidParameter:
        return False
    return True


def entry_symbol(spec: KernelSpec) -> str:
    """The name of the crate's entry that runs ``spec``: its kernel symbol without the run-time statics.

    >>> entry_symbol(KernelSpec("block.scan", "int8", (65,), 2, "raking",
    ...                         variant=(("op", "sum"), ("mode", "exclusive"), ("seed", "prefix"))))
    'coop_block_scan__int8__ipt2__raking__sum'
    """
    run_time = RUN_TIME_STATICS.get(spec.operation, {})
    return kernel_symbol(replace(spec, variant=tuple(v for v in spec.variant if v[0] not in run_time)))


def run_time_value(param: Param, spec: KernelSpec, batch: Any) -> int:
    """The value of by-value parameter ``param`` in a launch of ``spec``: a run-time static's code (its index in
    :data:`RUN_TIME_STATICS`), else the batch's field."""
    codes = RUN_TIME_STATICS.get(spec.operation, {}).get(param.name)
    return codes.index(spec.static(param.name)) if codes else int(getattr(batch, param.name))


def specializations() -> Iterator[KernelSpec]:
    """One spec (one-warp block) per specialization of the contracts the crate has a kernel for: none that its
    family's static rules refuse (Scan's entries serve several: see :func:`entry_symbol`)."""
    Variant = tuple[tuple[str, str], ...]
    families: list[tuple[str, Sequence[str], list[Variant]]] = [
        (op, coopcheck.ALGORITHMS, [()]) for op in sorted(load_store.OPERATIONS)]
    families.append(("block.exchange", exchange.METHODS,
                     [(("slicing", s), ("output", o)) for s in exchange.SLICING for o in exchange.OUTPUTS]))
    families.append(("block.shuffle", shuffle.METHODS, [(("output", o),) for o in shuffle.OUTPUTS]))
    families.append(("block.reduce", reduce.ALGORITHMS, [(("op", o),) for o in reduce.OPERATORS]))
    families.append(("block.scan", scan.ALGORITHMS, [(("op", o), ("mode", m), ("seed", s)) for o in scan.OPERATORS
                                                     for m in scan.MODES for s in scan.SEEDS]))
    widths = [str(w) for w in warp_reduce.WIDTHS]
    families.append(("warp.reduce", warp_reduce.ALGORITHMS, [
        (("width", w), ("op", o), ("mode", m)) for w in widths for o in warp_reduce.OPERATORS
        for m in warp_reduce.MODES]))
    families.append(("warp.scan", warp_scan.ALGORITHMS, [
        (("width", w), ("op", o), ("mode", m), ("seed", s), ("aggregate", a)) for w in widths
        for o in warp_scan.OPERATORS for m in warp_scan.MODES for s in warp_scan.SEEDS for a in warp_scan.AGGREGATES]))
    for operation, algorithms, variants in families:
        for algorithm in algorithms:
            for dtype in coopcheck.DTYPES:
                for ipt in exported_items_per_thread(operation, algorithm):
                    for variant in variants:
                        spec = KernelSpec(operation, dtype, (32,), ipt, algorithm, variant=variant)
                        if statics_ok(spec):
                            yield spec


def exported_symbols() -> frozenset[str]:
    """The contract kernels every pass of the crate exports."""
    return frozenset(entry_symbol(spec) for spec in specializations())


def dynamic_shared_bytes(spec: KernelSpec) -> int:
    """Dynamic shared memory a launch of ``spec`` needs: the transpose family's scratch tile; Exchange's tile, or
    time-sliced one warp's share of it; Shuffle's and Reduce's one item a thread; Scan's one item a thread, one a
    warp's lane and one broadcast; the warp families' none (they exchange through shuffles)."""
    item = ITEM_BYTES[spec.dtype]
    if spec.operation in scan.OPERATIONS:
        return (spec.threads + WARP_SIZE + 1) * item
    if spec.operation in exchange.OPERATIONS:
        sliced = spec.static("slicing") == "on"
        return exchange.warp_lanes(spec.threads) * spec.items_per_thread * item if sliced else spec.tile * item
    if spec.operation in shuffle.OPERATIONS or spec.operation in reduce.OPERATIONS:
        return spec.threads * item
    if spec.algorithm in coopcheck.TRANSPOSE_FAMILY:
        return spec.tile * item
    return 0


def out_length(spec: KernelSpec) -> int:
    """Elements of ``dst`` per block that a kernel writes (Store's ``dst`` is the batch's own, in and out)."""
    family = family_of(spec)
    return family.out_length(spec) if family is not load_store else spec.tile
