"""The crate's exports as the host sees them: which specializations exist and each kernel's parameters.

The crate (``kernels/src/kernels.rs``) exports one kernel per operation x dtype x items_per_thread
x algorithm; the block shape is read at run time. Parameters follow ``coopcheck.adapter``'s batched ABI
in its order; the C types are those of ``kernels.rs``.
"""

from __future__ import annotations

from dataclasses import dataclass

import coopcheck
from coopcheck import KernelSpec, kernel_symbol

#: items_per_thread values the crate exports kernels for.
ITEMS_PER_THREAD = (1, 2, 3, 4, 7, 8, 16)
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
PARAMS = {"block.load": LOAD_PARAMS, "block.store": STORE_PARAMS}


def exported_symbols() -> frozenset[str]:
    """The contract kernels every pass of the crate exports."""
    return frozenset(
        kernel_symbol(KernelSpec(operation, dtype, (1,), ipt, algorithm))
        for operation in coopcheck.OPERATIONS
        for dtype in coopcheck.DTYPES
        for ipt in ITEMS_PER_THREAD
        for algorithm in coopcheck.ALGORITHMS
    )


def dynamic_shared_bytes(spec: KernelSpec) -> int:
    """Dynamic shared memory a launch of ``spec`` needs: the transpose family's scratch tile."""
    if spec.algorithm in coopcheck.TRANSPOSE_FAMILY:
        return spec.tile * ITEM_BYTES[spec.dtype]
    return 0
