"""``NumbaAdapter``: the harness's view of the numba-cuda backend (see ``coopcheck.Adapter``).

It builds the kernels of every family: Load/Store, Exchange, Shuffle, Reduce, Scan, Warp Reduce and Warp Scan. One
contract kernel per kernel key (operation, dtype, ipt, algorithm, variant), compiled once per arch and launched with
one block per case instance. Where it compiles depends on the machine:

* a GPU of the requested arch: numba compiles for it, and the artifacts are what it launches;
* no GPU (or another arch): PTX via ``compile_ptx`` and a cubin via nvJitLink (see
  :mod:`coopcheck_numba.toolchain`), cached on disk when ``COOP_NUMBA_CACHE_DIR`` is set;
* ``NUMBA_ENABLE_CUDASIM=1``: numba's CUDA simulator runs the kernels; there are no artifacts.

Importing this module loads no numba: the registry may import it on any machine.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from coopcheck import (
    Artifacts,
    ExchangeBatch,
    KernelSpec,
    LoadBatch,
    ReduceBatch,
    ScanBatch,
    ShuffleBatch,
    StoreBatch,
    WarpReduceBatch,
    WarpScanBatch,
    exchange,
    load_store,
    reduce,
    require,
    scan,
    shuffle,
    warp_reduce,
    warp_scan,
)
from coopcheck.families import check_spec
from coopcheck.ptx import entry_name

from coopcheck_numba import REQUIRES


@dataclass(frozen=True)
class _Build:
    """One compiled contract kernel: the numba dispatcher and, off the simulator, its artifacts."""

    kernel: Any  # coopcheck_numba.kernels.ContractKernel
    target: str  # "gpu" | "host" | "simulator"
    arch: str
    entry: str
    ptx: str | None = None
    cubin: bytes | None = None


@dataclass(frozen=True)
class CompiledKernel:
    """What :meth:`NumbaAdapter.compile` returns: the shared build plus the spec it was asked for,
    whose block sizes the dynamic shared memory of its artifacts."""

    spec: KernelSpec
    build: _Build


class NumbaAdapter:
    """The ``numba`` backend: numba-cuda ``@cuda.jit`` kernels around :mod:`coopcheck_numba.blockio`."""

    name = "numba"
    operations = (load_store.OPERATIONS | exchange.OPERATIONS | shuffle.OPERATIONS | reduce.OPERATIONS
                  | scan.OPERATIONS | warp_reduce.OPERATIONS | warp_scan.OPERATIONS)

    def __init__(self) -> None:
        require(self.name, REQUIRES)
        self._builds: dict[tuple[Hashable, str], _Build] = {}

    def unsupported_reason(self, spec: KernelSpec) -> str | None:
        """Every operation, dtype, algorithm (method), variant, items_per_thread and block shape is implemented."""
        return None

    def kernel_key(self, spec: KernelSpec) -> Hashable:
        """What a contract kernel is specialized on: the block shape is a launch parameter."""
        return (spec.operation, spec.dtype, spec.items_per_thread, spec.algorithm, *spec.variant)

    def compile(self, spec: KernelSpec, *, arch: str) -> CompiledKernel:
        check_spec(spec)
        slot = (self.kernel_key(spec), arch)
        if slot not in self._builds:
            self._builds[slot] = _build(spec, arch)
        return CompiledKernel(spec, self._builds[slot])

    def artifacts(self, compiled: CompiledKernel) -> Artifacts:
        spec, build = compiled.spec, compiled.build
        return Artifacts(
            kernel_name=build.entry, cubin=build.cubin, ptx=build.ptx, arch=build.arch,
            dynamic_shared_bytes=_shared_bytes(spec), extra={"target": build.target},
        )

    def can_launch(self) -> bool:
        from numba import cuda

        from coopcheck_numba.blockio import SIMULATED

        return SIMULATED or bool(cuda.is_available())

    def launch(self, compiled: CompiledKernel, spec: KernelSpec,
               batch: LoadBatch | StoreBatch | ExchangeBatch | ShuffleBatch | ReduceBatch | ScanBatch | WarpReduceBatch
               | WarpScanBatch) -> Any:
        from coopcheck_numba.kernels import launch

        return launch(compiled.build.kernel, spec, batch, _shared_bytes(spec))


def _shared_bytes(spec: KernelSpec) -> int:
    """The dynamic shared memory a launch of ``spec``'s kernel provides (its block's size decides it)."""
    from coopcheck_numba.blockio import shared_bytes
    from coopcheck_numba.exchange import exchange_shared_bytes
    from coopcheck_numba.reduce import reduce_shared_bytes
    from coopcheck_numba.scan import scan_shared_bytes
    from coopcheck_numba.shuffle import shuffle_shared_bytes
    from coopcheck_numba.warp_reduce import warp_reduce_shared_bytes
    from coopcheck_numba.warp_scan import warp_scan_shared_bytes

    if spec.operation in warp_scan.OPERATIONS:
        return warp_scan_shared_bytes(spec.dtype, spec.threads)
    if spec.operation in warp_reduce.OPERATIONS:
        return warp_reduce_shared_bytes(spec.dtype, spec.threads)
    if spec.operation in scan.OPERATIONS:
        return scan_shared_bytes(spec.dtype, spec.threads)
    if spec.operation in reduce.OPERATIONS:
        return reduce_shared_bytes(spec.dtype, spec.threads)
    if spec.operation in shuffle.OPERATIONS:
        return shuffle_shared_bytes(spec.dtype, spec.threads)
    if spec.operation in exchange.OPERATIONS:
        return exchange_shared_bytes(spec.dtype, spec.items_per_thread, spec.static("slicing") == "on", spec.threads)
    return shared_bytes(spec.dtype, spec.items_per_thread, spec.algorithm, spec.threads)


def _build(spec: KernelSpec, arch: str) -> _Build:
    from numba import cuda

    from coopcheck_numba.blockio import SIMULATED
    from coopcheck_numba.kernels import contract_kernel

    kernel = contract_kernel(spec)
    if SIMULATED:
        return _Build(kernel, "simulator", arch, kernel.symbol)
    if cuda.is_available():
        major, minor = cuda.get_current_device().compute_capability
        if arch == f"sm_{major}{minor}":
            return _build_on_gpu(kernel)
    return _build_on_host(kernel, arch)


def _build_on_gpu(kernel: Any) -> _Build:
    compiled = kernel.dispatcher.compile(kernel.signature)
    # numba keeps the PTX and cubin it loaded in the kernel's code library (no public getter).
    library = compiled._codelibrary
    ptx = library.get_asm_str()
    return _Build(kernel, "gpu", _library_arch(library), entry_name(ptx), ptx, library.get_cubin())


def _library_arch(library: Any) -> str:
    cc = library._ensure_cc(None)  # numba's own choice for the current GPU: (9, 0, "a") on Hopper
    return "sm_" + "".join(map(str, cc))


def _build_on_host(kernel: Any, arch: str) -> _Build:
    from coopcheck_numba import toolchain
    from coopcheck_numba.cache import ArtifactCache

    cache = ArtifactCache.from_environment()
    key = ArtifactCache.key(toolchain.fingerprint(), arch, kernel.symbol)
    stored = cache.get(key) if cache else None
    if stored:
        ptx, cubin = stored
    else:
        ptx = toolchain.compile_ptx(kernel.dispatcher.py_func, kernel.signature, arch, kernel.symbol)
        cubin = toolchain.link_cubin(ptx, arch, kernel.symbol)
    if cache and not stored:
        cache.put(key, ptx, cubin)
    return _Build(kernel, "host", arch, entry_name(ptx), ptx, cubin)
