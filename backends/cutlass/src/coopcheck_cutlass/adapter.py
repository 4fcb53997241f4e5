"""The ``cutlass`` backend as the harness sees it: each specialization's contract kernel is compiled
once with the CuTe DSL (no GPU needed), its PTX/cubin go to the inspectors, and batched launches
run on a GPU. Importing this module loads neither cutlass nor CUDA.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
import weakref
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import coopcheck
from coopcheck import exchange, load_store, reduce, scan, shuffle, warp_reduce, warp_scan
from coopcheck.families import family_of

from coopcheck_cutlass import REQUIRES
from coopcheck_cutlass.cache import ArtifactCache, default_root
from coopcheck_cutlass.exchange_plan import exchange_plan
from coopcheck_cutlass.plan import spec_plan
from coopcheck_cutlass.reduce_plan import reduce_plan
from coopcheck_cutlass.scan_plan import scan_plan
from coopcheck_cutlass.shuffle_plan import shuffle_plan
from coopcheck_cutlass.warp_plan import warp_reduce_plan, warp_scan_plan

if TYPE_CHECKING:
    import numpy as np

#: Keep the DSL's PTX/cubin dumps here (one folder per arch and kernel) instead of a temporary folder.
DUMP_DIR_ENV = "COOP_CUTLASS_DUMP_DIR"
#: Launches also allocate and copy through the CUDA runtime bindings.
LAUNCH_REQUIRES = {**REQUIRES, "cuda": "cuda-bindings"}
#: What activation checks: the DSL, the CUDA bindings it launches through, and numpy for batches.
ACTIVATION_REQUIRES = {**LAUNCH_REQUIRES, "numpy": "numpy"}
#: Byte the Load, Exchange, Shuffle, Reduce, Scan and warp outputs start as, so a slot the kernel never writes shows.
UNWRITTEN = 0xA5
#: What a launch takes: one batch type per family.
Batch = (coopcheck.LoadBatch | coopcheck.StoreBatch | coopcheck.ExchangeBatch | coopcheck.ShuffleBatch
         | coopcheck.ReduceBatch | coopcheck.ScanBatch | coopcheck.WarpReduceBatch | coopcheck.WarpScanBatch)
#: Each family's plan (by its ABI module), whose making checks a spec's statics before the DSL is involved.
PLANS = {load_store: spec_plan, exchange: exchange_plan, shuffle: shuffle_plan, reduce: reduce_plan, scan: scan_plan,
         warp_reduce: warp_reduce_plan, warp_scan: warp_scan_plan}


def dsl_arch(arch: str) -> str:
    """The DSL target for a coop arch: from sm_90 on, the arch-specific variant (sm_90 -> sm_90a).
    The DSL names a detected device the same way and builds its launcher only for a matching
    target, so this is also what runs on the device."""
    match = re.fullmatch(r"sm_(\d+)([af]?)", arch)
    if match is None:
        raise ValueError(f"arch must look like 'sm_90' (got {arch!r})")
    number, suffix = int(match.group(1)), match.group(2)
    return arch if suffix or number < 90 else f"{arch}a"


@dataclass(frozen=True)
class Built:
    """The traced program and the DSL's compiled function for one specialization."""

    program: Any  # coopcheck_cutlass.kernels.Program
    function: Any  # the DSL's JitCompiledFunction


@dataclass
class CompiledKernel:
    """One compiled specialization. ``built`` (the DSL function and how to call it) is None when
    the artifacts came from the disk cache; the first launch compiles it then."""

    key: Hashable
    target: str
    artifacts: coopcheck.Artifacts
    built: Built | None


class CutlassAdapter:
    """coopcheck.Adapter for the CuTe DSL; compiles are cached in-process by (kernel_key, target) and
    on disk (see :mod:`coopcheck_cutlass.cache`)."""

    name = "cutlass"
    operations = (load_store.OPERATIONS | exchange.OPERATIONS | shuffle.OPERATIONS | reduce.OPERATIONS
                  | scan.OPERATIONS | warp_reduce.OPERATIONS | warp_scan.OPERATIONS)

    def __init__(self, *, disk_cache: bool | Path = True) -> None:
        """``disk_cache``: True for the configured folder (``COOP_CUTLASS_CACHE_DIR``), a path for
        that folder, False for none."""
        coopcheck.require(self.name, ACTIVATION_REQUIRES)  # a clear refusal now, not an ImportError later
        self._compiled: dict[tuple[Hashable, str], CompiledKernel] = {}
        root = disk_cache if isinstance(disk_cache, Path) else default_root() if disk_cache else None
        self._disk = ArtifactCache(root) if root is not None else None
        self._dump_root: Path | None = None

    def unsupported_reason(self, spec: coopcheck.KernelSpec) -> str | None:
        """Every operation, algorithm (Exchange or Shuffle method, Reduce or Scan algorithm), variant (Reduce
        operator; Scan operator, mode and seed; the warp families' width, operator, mode, seed and aggregate), dtype
        and block shape of coop is implemented."""
        return None

    def kernel_key(self, spec: coopcheck.KernelSpec) -> Hashable:
        """Every field of the spec is compile-time here, the block shape and variant included."""
        return dataclasses.astuple(spec)

    def compile(self, spec: coopcheck.KernelSpec, *, arch: str) -> CompiledKernel:
        """Compile (or look up) ``spec``'s contract kernel for ``arch``, keeping PTX and cubin.

        Rejected statics raise ``coopcheck.InvalidParameter`` before the DSL is involved; a failed
        compile caches nothing and leaves the DSL ready for the next one.
        """
        PLANS[family_of(spec)](spec)
        target = dsl_arch(arch)
        key = (self.kernel_key(spec), target)
        if key in self._compiled:
            return self._compiled[key]
        built = None
        artifacts = self._disk.get(spec, target) if self._disk is not None else None
        if artifacts is None:
            built, artifacts = self._build(spec, target)
            if self._disk is not None:
                self._disk.put(spec, target, artifacts)
        compiled = CompiledKernel(key[0], target, artifacts, built)
        self._compiled[key] = compiled
        return compiled

    def artifacts(self, compiled: CompiledKernel) -> coopcheck.Artifacts:
        return compiled.artifacts

    def can_launch(self) -> bool:
        """Whether a CUDA device is visible (the DSL has no simulator)."""
        coopcheck.require(self.name, LAUNCH_REQUIRES)
        from coopcheck_cutlass import _device

        return _device.device_count() > 0

    def launch(self, compiled: CompiledKernel, spec: coopcheck.KernelSpec,
               batch: Batch) -> np.ndarray:
        """Run one block per case instance of ``batch`` and return the host copy of ``dst``."""
        if compiled.key != self.kernel_key(spec):
            raise ValueError(f"{coopcheck.kernel_symbol(spec, include_block=True)}: launched with a kernel "
                             f"compiled for another spec ({compiled.artifacts.kernel_name})")
        arrays = _launch_arrays(spec, batch)
        coopcheck.require(self.name, LAUNCH_REQUIRES)
        from coopcheck_cutlass import _device

        if compiled.built is None:
            compiled.built, _ = self._build(spec, compiled.target)
        program, function = compiled.built.program, compiled.built.function
        with _device.buffers(arrays) as addresses:
            function(*program.batch_arguments(addresses, batch))
            _device.synchronize()
            return _device.read(addresses["dst"], arrays["dst"])

    def _build(self, spec: coopcheck.KernelSpec, target: str) -> tuple[Built, coopcheck.Artifacts]:
        """Trace and compile ``spec`` with the DSL for ``target``."""
        coopcheck.require(self.name, REQUIRES)
        import cutlass.cute as cute
        from cutlass.base_dsl import Arch

        from coopcheck_cutlass import artifacts, kernels

        known = [a.to_string() for a in Arch]
        if target not in known:
            raise ValueError(f"the CuTe DSL has no target {target!r}; it knows {', '.join(known)}")

        symbol = coopcheck.kernel_symbol(spec, include_block=True)
        program = kernels.build(spec, symbol)
        function = cute.compile(
            program.host, *program.placeholders(),
            options=f"--gpu-arch {target} --keep-ptx --keep-cubin --dump-dir {self._dump_dir(target, symbol)}",
        )
        return Built(program, function), artifacts.collect(function, target)

    def _dump_dir(self, target: str, symbol: str) -> Path:
        """One folder per variant: the DSL names dumps after the host function and its argument
        types, which closure variants share, so one folder for all would mix their files."""
        if self._dump_root is None:
            configured = os.environ.get(DUMP_DIR_ENV)
            if configured:
                self._dump_root = Path(configured)
            else:
                self._dump_root = Path(tempfile.mkdtemp(prefix="coop-cutlass-"))
                weakref.finalize(self, shutil.rmtree, self._dump_root, True)
        folder = self._dump_root / target / symbol
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def _launch_arrays(spec: coopcheck.KernelSpec, batch: Batch) -> dict[str, np.ndarray]:
    """The kernel's arrays by parameter name, checked against the ABI's sizes and dtypes."""
    if spec.operation in exchange.OPERATIONS:
        return _exchange_arrays(spec, batch)
    if spec.operation in shuffle.OPERATIONS:
        return _shuffle_arrays(spec, batch)
    if spec.operation in reduce.OPERATIONS:
        return _reduce_arrays(spec, batch)
    if spec.operation in scan.OPERATIONS:
        return _scan_arrays(spec, batch)
    if spec.operation in warp_reduce.OPERATIONS:
        return _warp_reduce_arrays(spec, batch)
    if spec.operation in warp_scan.OPERATIONS:
        return _warp_scan_arrays(spec, batch)
    wanted = coopcheck.LoadBatch if spec.operation == "block.load" else coopcheck.StoreBatch
    _check_type(spec, batch, wanted)
    n, tile, region = batch.n_blocks, spec.tile, batch.region
    if isinstance(batch, coopcheck.LoadBatch):
        arrays = {"src": (batch.src, spec.dtype, n * region), "init": (batch.init, spec.dtype, n * tile),
                  "valid": (batch.valid, "int32", n), "offset": (batch.offset, "int64", n),
                  "has_oob": (batch.has_oob, "int32", n), "oob": (batch.oob, spec.dtype, n)}
    else:
        arrays = {"items": (batch.items, spec.dtype, n * tile), "dst": (batch.dst, spec.dtype, n * region),
                  "valid": (batch.valid, "int32", n), "offset": (batch.offset, "int64", n)}
    checked = {name: _checked(name, array, dtype, size) for name, (array, dtype, size) in arrays.items()}
    if spec.operation == "block.load":
        checked["dst"] = _unwritten(spec, n * tile)
    return checked


def _exchange_arrays(spec: coopcheck.KernelSpec, batch: object) -> dict[str, np.ndarray]:
    """The Exchange kernel's arrays; ``dst`` starts as a recognizable pattern, so a slot never written shows."""
    _check_type(spec, batch, coopcheck.ExchangeBatch)
    size = batch.n_blocks * spec.tile
    return _tile_arrays(spec, batch, {"items": (spec.dtype, size), "ranks": ("int32", size),
                                      "flags": ("int32", size)}, exchange.out_length(spec))


def _shuffle_arrays(spec: coopcheck.KernelSpec, batch: object) -> dict[str, np.ndarray]:
    """The Shuffle kernel's arrays; ``dst`` starts as a recognizable pattern, so a slot never written shows."""
    _check_type(spec, batch, coopcheck.ShuffleBatch)
    n = batch.n_blocks
    return _tile_arrays(spec, batch, {"items": (spec.dtype, n * spec.tile),
                                      "prior": (spec.dtype, n * (spec.tile + spec.threads)),
                                      "distance": ("int32", n)}, shuffle.out_length(spec))


def _reduce_arrays(spec: coopcheck.KernelSpec, batch: object) -> dict[str, np.ndarray]:
    """The Reduce kernel's arrays; ``dst`` starts as a recognizable pattern, so a slot never written shows."""
    _check_type(spec, batch, coopcheck.ReduceBatch)
    n = batch.n_blocks
    return _tile_arrays(spec, batch, {"items": (spec.dtype, n * spec.tile), "valid": ("int32", n),
                                      "sentinel": (spec.dtype, n)}, reduce.out_length(spec))


def _scan_arrays(spec: coopcheck.KernelSpec, batch: object) -> dict[str, np.ndarray]:
    """The Scan kernel's arrays (the batch's tiles those of the spec's seed); ``dst`` starts as a recognizable
    pattern, so a slot never written shows."""
    _check_type(spec, batch, coopcheck.ScanBatch)
    if batch.tiles != scan.tiles(spec):
        raise ValueError(f"batch.tiles: expected {scan.tiles(spec)} (got {batch.tiles})")
    n = batch.n_blocks
    return _tile_arrays(spec, batch, {"items": (spec.dtype, n * batch.tiles * spec.tile), "initial": (spec.dtype, n)},
                        scan.out_length(spec))


def _warp_reduce_arrays(spec: coopcheck.KernelSpec, batch: object) -> dict[str, np.ndarray]:
    """The Warp Reduce kernel's arrays; ``dst`` starts as a recognizable pattern, so a slot never written shows."""
    _check_type(spec, batch, coopcheck.WarpReduceBatch)
    n = batch.n_blocks
    return _thread_arrays(spec, batch, {"items": (spec.dtype, n * spec.threads), "flags": ("uint8", n * spec.threads),
                                        "valid": ("int32", n), "sentinel": (spec.dtype, n)},
                          warp_reduce.out_length(spec))


def _warp_scan_arrays(spec: coopcheck.KernelSpec, batch: object) -> dict[str, np.ndarray]:
    """The Warp Scan kernel's arrays; ``dst`` starts as a recognizable pattern, so a slot never written shows."""
    _check_type(spec, batch, coopcheck.WarpScanBatch)
    n = batch.n_blocks
    return _thread_arrays(spec, batch, {"items": (spec.dtype, n * spec.threads), "initial": (spec.dtype, n)},
                          warp_scan.out_length(spec))


def _check_type(spec: coopcheck.KernelSpec, batch: object, wanted: type) -> None:
    if not isinstance(batch, wanted):
        article = "an" if wanted.__name__[0] in "AEIOU" else "a"
        raise TypeError(f"{spec.operation} needs {article} {wanted.__name__} (got {type(batch).__name__})")


def _tile_arrays(spec: coopcheck.KernelSpec, batch: Any, fields: dict[str, tuple[str, int]],
                 width: int) -> dict[str, np.ndarray]:
    """A batch of the tile families (Exchange, Shuffle, Reduce, Scan): its ``tile`` and each field (name -> dtype, size)
    checked, and ``dst`` of ``width`` elements a block, unwritten."""
    if batch.tile != spec.tile:
        raise ValueError(f"batch.tile: expected {spec.tile} (got {batch.tile})")
    return _fields(batch, fields) | {"dst": _unwritten(spec, batch.n_blocks * width)}


def _thread_arrays(spec: coopcheck.KernelSpec, batch: Any, fields: dict[str, tuple[str, int]],
                   width: int) -> dict[str, np.ndarray]:
    """A batch of the warp families (one item a thread, no tile): its ``threads`` and each field (name -> dtype,
    size) checked, and ``dst`` of ``width`` elements a block, unwritten."""
    if batch.threads != spec.threads:
        raise ValueError(f"batch.threads: expected {spec.threads} (got {batch.threads})")
    return _fields(batch, fields) | {"dst": _unwritten(spec, batch.n_blocks * width)}


def _fields(batch: Any, fields: dict[str, tuple[str, int]]) -> dict[str, np.ndarray]:
    """Each field of ``batch`` (name -> dtype, size) checked."""
    return {name: _checked(name, getattr(batch, name), dtype, size) for name, (dtype, size) in fields.items()}


def _unwritten(spec: coopcheck.KernelSpec, size: int) -> np.ndarray:
    """An output of ``size`` elements of the spec's dtype, every byte :data:`UNWRITTEN`."""
    import numpy as np

    return np.full(size * np.dtype(spec.dtype).itemsize, UNWRITTEN, np.uint8).view(spec.dtype)


def _checked(name: str, array: Any, dtype: str, size: int) -> np.ndarray:
    import numpy as np

    host = np.asarray(array)
    if host.dtype != np.dtype(dtype) or host.shape != (size,):
        raise ValueError(f"batch.{name}: expected {dtype}[{size}] (got {host.dtype}{list(host.shape)})")
    return np.ascontiguousarray(host)
