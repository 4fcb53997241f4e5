"""``CcclAdapter``: the harness's view of cuda.coop 1.1.1 (see ``coopcheck.Adapter``).

One kernel per specialization (operation, dtype, block shape, items per thread, algorithm, the family's
own statics: CUB specializes on the block shape), the backend's own contract kernel around the cuda.coop
primitive (:mod:`coopcheck_cccl.kernels`), named ``coopcheck.kernel_symbol(spec)``. cuda.coop's factories
compile for the current device, so without a CUDA device (or in numba's simulator) every kernel is
declared NotSupported; with one, Load/Store runs only full-tile cases without oob_default, since 1.1.1
binds no other overload, Exchange only StripedToBlocked, its one bound method, Reduce partial tiles only with
one item a thread (its one ``num_valid`` overload), Scan only with the prefix callback (it binds no
block_aggregate output, which the ABI asks of seeds none and initial), Warp Reduce only mode reduce with every lane
of the width valid (``Reduce(input, op)``: no valid_items, no segments), and Warp Scan only the exclusive sum without
seed or aggregate (``ExclusiveSum``). The warp kernels run every logical warp of the contract's geometry, partial and
non-power-of-two ones too, where CUB promises less (NVIDIA/cccl#858): what fails there is the GPU run's to say. A
kernel declared NotSupported does not compile: ``compile`` refuses it with the reason.

Importing this module loads no numba and no cuda.coop: the registry may import it on any machine.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from coopcheck import (
    Artifacts,
    ExchangeBatch,
    KernelSpec,
    LoadBatch,
    ReduceBatch,
    ScanBatch,
    StoreBatch,
    WarpReduceBatch,
    WarpScanBatch,
    exchange,
    kernel_symbol,
    load_store,
    reduce,
    require,
    scan,
    warp_reduce,
    warp_scan,
)
from coopcheck.families import check_spec
from coopcheck.ptx import entry_name

from coopcheck_cccl import ALGORITHMS, CUDA_CCCL, EXCHANGE_METHODS, REQUIRES, binds_warp_scan, toolchain

#: The warp families, both subject to CUB's whole logical warps.
WARP_OPERATIONS = warp_reduce.OPERATIONS | warp_scan.OPERATIONS
NO_DEVICE = "cuda.coop compiles only with a CUDA device present (factories query the current device)"
SIMULATOR = "numba's CUDA simulator cannot run cuda.coop (its primitives are CUB compiled to LTO-IR)"
PARTIAL_TILE = f"cuda.coop {CUDA_CCCL} binds only full-tile Load/Store (no valid_items)"
REDUCE_PARTIAL_TILE = (f"cuda.coop {CUDA_CCCL} binds num_valid for one item a thread only (BlockReduce's "
                       "Reduce(item, op, num_valid) / Sum(item, num_valid)): a partial tile of several items a "
                       "thread has no overload")
OOB_DEFAULT = f"cuda.coop {CUDA_CCCL} binds no Load with oob_default"
EXCHANGE_METHOD = (f"cuda.coop {CUDA_CCCL} binds only StripedToBlocked of CUB's BlockExchange (its BlockExchangeType "
                   "has no other member)")
SCAN_AGGREGATE = (f"cuda.coop {CUDA_CCCL} binds no BlockScan overload with a block_aggregate output "
                  "(block/_block_scan.py: 'does not support any of the cub.BlockScan C++ APIs that take a block "
                  "aggregate reference'; _types.py: 'Multiple output parameters not supported'): the ABI's "
                  "every-thread aggregate of seeds none and initial has no source (with seed prefix the callback's "
                  "argument is it)")
WARP_SEGMENTED = (f"cuda.coop {CUDA_CCCL} binds WarpReduce's Reduce(input, op) and Sum(input) only "
                  "(warp/_warp_reduce.py: make_reduce, make_sum): no HeadSegmentedReduce or TailSegmentedReduce")
WARP_VALID_ITEMS = (f"cuda.coop {CUDA_CCCL} binds WarpReduce's full-warp Reduce(input, op) and Sum(input) only "
                    "(warp/_warp_reduce.py): no Reduce(input, op, valid_items), so fewer valid lanes than the width "
                    "have no overload")
WARP_ENTRANT_THREADS = ("CUB's WarpReduce and WarpScan promise a result only where \"the number of entrant threads "
                        "must be an multiple of\" the logical warp width (cub/warp/warp_reduce.cuh, warp_scan.cuh), "
                        "and this block leaves a logical warp partial")
WARP_SCAN_ONE = (f"cuda.coop {CUDA_CCCL} binds WarpScan's ExclusiveSum(input, output) alone (warp/_warp_scan.py: "
                 "make_exclusive_sum): no other operator, no inclusive scan, no initial value, no warp_aggregate")
#: dtype -> why cuda.coop cannot take it (measured: tests/compile/test_primitives.py pins each).
DTYPES_REFUSED = {
    "float16": f"cuda.coop {CUDA_CCCL} cannot compile float16: its generated CUB wrapper includes no cuda_fp16.h "
               "(NVRTC: __half is not a complete object type)",
}


@dataclass(frozen=True)
class CompiledKernel:
    """A contract kernel compiled for the current device, and the dynamic shared memory a launch gives it (its
    primitive's TempStorage; a warp primitive's, one a logical warp)."""

    kernel: Any  # coopcheck_cccl.kernels.Kernel
    shared_bytes: int
    arch: str


class CcclAdapter:
    """The ``cccl`` backend: cuda.coop's ``block.make_load`` / ``make_store`` / ``make_exchange`` /
    ``make_reduce`` / ``make_sum`` / ``make_*_scan`` / ``make_*_sum`` and ``warp.make_reduce`` / ``make_sum`` /
    ``make_exclusive_sum`` in numba-cuda kernels."""

    name = "cccl"
    operations = (load_store.OPERATIONS | exchange.OPERATIONS | reduce.OPERATIONS | scan.OPERATIONS
                  | warp_reduce.OPERATIONS | warp_scan.OPERATIONS)

    def __init__(self) -> None:
        require(self.name, REQUIRES)
        toolchain.require_cuda_cccl()
        self._builds: dict[Hashable, CompiledKernel] = {}

    @staticmethod
    def toolchain() -> dict[str, str]:
        """cuda-cccl's release and the CCCL version of its bundled headers (for the journal's fingerprint)."""
        return toolchain.versions()

    @cached_property
    def _device_arch(self) -> str | None:
        """``"sm_90"`` for the current device; None without one (or in the simulator)."""
        from numba import config, cuda

        if config.ENABLE_CUDASIM or not cuda.is_available():
            return None
        major, minor = cuda.get_current_device().compute_capability
        return f"sm_{major}{minor}"

    def unsupported_reason(self, spec: KernelSpec) -> str | None:
        from numba import config

        if config.ENABLE_CUDASIM:
            return SIMULATOR
        if self._device_arch is None:
            return NO_DEVICE
        if spec.operation in exchange.OPERATIONS and spec.algorithm not in EXCHANGE_METHODS:
            return EXCHANGE_METHOD
        if spec.operation in load_store.OPERATIONS and spec.algorithm not in ALGORITHMS:
            return f"cuda.coop {CUDA_CCCL} has no {spec.algorithm!r} algorithm"
        if spec.operation in scan.OPERATIONS and spec.static("seed") != "prefix":
            return SCAN_AGGREGATE
        if spec.operation in warp_reduce.OPERATIONS and spec.static("mode") != "reduce":
            return WARP_SEGMENTED
        if spec.operation in warp_scan.OPERATIONS and not binds_warp_scan(spec):
            return WARP_SCAN_ONE
        if spec.operation in WARP_OPERATIONS and not warp_reduce.whole_logical_warps(spec.threads,
                                                                                     warp_reduce.width(spec)):
            return WARP_ENTRANT_THREADS
        # Reduce: every algorithm and operator of the contract is bound (first through a StatefulFunction); Scan
        # with the prefix callback: every algorithm, operator and mode; Warp Reduce in mode reduce: every operator
        # and width; the warp exclusive sum: every width (both where the block's logical warps are whole).
        return DTYPES_REFUSED.get(spec.dtype)

    def unsupported_case(self, spec: KernelSpec, values: Mapping[str, Any]) -> str | None:
        """Load/Store: only the full tile without oob_default, since 1.1.1 binds ``Load(ptr, items)`` /
        ``Store(ptr, items)``; any offset is taken (the primitive gets ``src[offset:]``). Reduce: a partial tile
        with one item a thread only; Warp Reduce: every lane of the width valid only (the ``lanes`` name whose count
        is the width). Exchange and the scans have no such case values."""
        lanes = values.get("lanes")
        if spec.operation in warp_reduce.OPERATIONS and lanes in warp_reduce.VALID_LANES:
            return None if warp_reduce.VALID_LANES[lanes](warp_reduce.width(spec)) == warp_reduce.width(spec) \
                else WARP_VALID_ITEMS
        if values.get("valid", spec.tile) != spec.tile:
            if spec.operation not in reduce.OPERATIONS:
                return PARTIAL_TILE
            if spec.items_per_thread != 1:
                return REDUCE_PARTIAL_TILE
        if values.get("oob", "none") != "none":
            return OOB_DEFAULT
        return None

    def kernel_key(self, spec: KernelSpec) -> Hashable:
        return (spec.operation, spec.dtype, spec.block, spec.items_per_thread, spec.algorithm, spec.variant)

    def compile(self, spec: KernelSpec, *, arch: str) -> CompiledKernel:
        check_spec(spec)
        device = self._device_arch
        if device is None or arch.rstrip("af") != device:
            raise RuntimeError(f"cuda.coop compiles for the current device only ({device or 'none'}), "
                               f"not {arch}")
        declined = self.unsupported_reason(spec)
        if declined is not None:
            raise NotImplementedError(f"{kernel_symbol(spec)}: {declined}")
        key = self.kernel_key(spec)
        if key not in self._builds:
            self._builds[key] = _build(spec, device)
        return self._builds[key]

    def artifacts(self, compiled: CompiledKernel) -> Artifacts:
        kernel = compiled.kernel
        # numba keeps the PTX and the linked cubin in the kernel's code library (no public getter); it links with
        # cuda.core, whose link gives an ObjectCode: the harness takes the cubin's bytes.
        library = kernel.dispatcher.compile(kernel.signature)._codelibrary
        ptx = library.get_asm_str()
        return Artifacts(kernel_name=entry_name(ptx), cubin=bytes(library.get_cubin().code), ptx=ptx,
                         arch=compiled.arch, dynamic_shared_bytes=compiled.shared_bytes)

    def can_launch(self) -> bool:
        return self._device_arch is not None

    def launch(self, compiled: CompiledKernel, spec: KernelSpec, batch: LoadBatch | StoreBatch | ExchangeBatch
               | ReduceBatch | ScanBatch | WarpReduceBatch | WarpScanBatch) -> Any:
        from coopcheck_cccl.kernels import launch

        return launch(compiled.kernel, spec, batch, compiled.shared_bytes)


def _build(spec: KernelSpec, arch: str) -> CompiledKernel:
    """Make the primitive (NVRTC, or the LTO-IR cache) and compile the contract kernel around it."""
    from coopcheck_cccl import kernels, primitives
    from coopcheck_cccl.cache import LtoCache

    primitive = primitives.make(spec, LtoCache.from_environment())
    kernel = kernels.contract_kernel(spec, primitive)
    kernel.dispatcher.compile(kernel.signature)  # compile and link now: the compile phase, not the launch
    shared = kernels.shared_bytes(spec, primitive.temp_storage_bytes)
    kernels.allow_dynamic_shared(kernel, shared)
    return CompiledKernel(kernel, shared, arch)
