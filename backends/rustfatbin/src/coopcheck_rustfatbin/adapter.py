"""The harness adapter of the Rust fatbin backend: compile is a lookup in the shipped fatbin.

Every kernel was built ahead of time (``coopcheck_rustfatbin.build``); compiling a spec validates its
statics with its family's ``check_spec`` and checks that the fatbin holds its entry for the arch. A Scan entry
serves the specs that differ only in mode and seed, a Warp Reduce or Warp Scan entry those that differ only in width,
mode, seed and aggregate (run-time parameters), so the adapter names the entry a launch runs (``launched_symbol``)
for the launch ledger and sanitizer attribution.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import coopcheck
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
)
from coopcheck.families import check_spec
from coopcheck.fatbin import KIND_PTX

from coopcheck_rustfatbin import abi
from coopcheck_rustfatbin.bundle import Bundle, LoaderError

Batch = (LoadBatch | StoreBatch | ExchangeBatch | ShuffleBatch | ReduceBatch | ScanBatch | WarpReduceBatch
         | WarpScanBatch)


@dataclass(frozen=True)
class CompiledKernel:
    """A kernel of the fatbin, for one arch's inspection and for launches of any block shape."""

    symbol: str
    arch: str
    dynamic_shared_bytes: int


class RustFatbinAdapter:
    """``coopcheck.Adapter`` over the fatbin installed with this package (or the one given)."""

    name = "rustfatbin"
    operations = abi.OPERATIONS

    def __init__(self, fatbin: Path | None = None) -> None:
        # the loader's driver API and its host arrays, checked at activation
        coopcheck.require(self.name, {"cuda": "cuda-bindings", "numpy": "numpy"})
        self._fatbin = fatbin
        self._bundle: Bundle | None = None
        self._module: Any = None

    @property
    def bundle(self) -> Bundle:
        if self._bundle is None:
            self._bundle = Bundle(self._fatbin) if self._fatbin else Bundle.default()
        return self._bundle

    def unsupported_reason(self, spec: KernelSpec) -> str | None:
        # A spec that breaks a static rule is supported: compile must refuse it with that rule.
        exported = abi.exported_items_per_thread(spec.operation, spec.algorithm)
        if spec.items_per_thread not in exported and abi.statics_ok(spec):
            listed = ", ".join(map(str, exported))
            return (f"the rustfatbin crate exports {spec.operation} kernels for items_per_thread in {listed} only "
                    f"(got {spec.items_per_thread})")
        return None

    def launched_symbol(self, spec: KernelSpec) -> str:
        """The entry a launch of ``spec`` runs (``coopcheck.LaunchNaming``)."""
        return abi.entry_symbol(spec)

    def kernel_key(self, spec: KernelSpec) -> Hashable:
        """The entry: every block shape (and every value of a run-time static, ``abi.RUN_TIME_STATICS``) shares one
        kernel. A kernel that takes scratch adds its size (a launch parameter that inspection reports), and a spec
        with bad statics keys apart, since its compile must raise where an equal symbol's compile succeeds."""
        if not abi.statics_ok(spec):
            return ("rejected", spec)
        shared, symbol = abi.dynamic_shared_bytes(spec), abi.entry_symbol(spec)
        return (symbol, shared) if shared else symbol

    def compile(self, spec: KernelSpec, *, arch: str) -> CompiledKernel:
        check_spec(spec)
        symbol = abi.entry_symbol(spec)
        if symbol not in self.bundle.symbols(arch):
            reason = self.unsupported_reason(spec) or "the crate does not export it"
            raise LoaderError(f"{symbol}: not in {self.bundle.path} for {arch}: {reason}")
        return CompiledKernel(symbol, arch, abi.dynamic_shared_bytes(spec))

    def artifacts(self, compiled: CompiledKernel) -> Artifacts:
        ptx = self.bundle.image(KIND_PTX, compiled.arch)
        return Artifacts(
            kernel_name=compiled.symbol,
            cubin=self.bundle.elf(compiled.arch),
            ptx=ptx.decode() if ptx is not None else None,
            arch=compiled.arch,
            dynamic_shared_bytes=compiled.dynamic_shared_bytes,
            extra={"fatbin": str(self.bundle.path), "tools": self.bundle.manifest["tools"]},
        )

    def can_launch(self) -> bool:
        from coopcheck_rustfatbin.loader import device_count

        return device_count() > 0

    def launch(self, compiled: CompiledKernel, spec: KernelSpec, batch: Batch) -> Any:
        from coopcheck_rustfatbin.loader import Module

        if self._module is None:
            self._module = Module(self.bundle)
        (dst,) = self._module.run(
            compiled.symbol, grid=batch.n_blocks, block=spec.block,
            shared_bytes=abi.dynamic_shared_bytes(spec), args=_launch_args(compiled.symbol, spec, batch),
        )
        return dst


def _launch_args(symbol: str, spec: KernelSpec, batch: Batch) -> list[Any]:
    """The kernel's arguments in ABI order; ``dst`` is the one that comes back: Store's is its batch's, in and
    out; every other family's is output only, ``abi.out_length`` elements a block. A by-value argument is the
    batch's, or the code of a run-time static of ``spec``."""
    from coopcheck_rustfatbin.loader import In, InOut, Out

    args: list[Any] = []
    for param in abi.PARAMS[spec.operation]:
        if not param.pointer:
            args.append(abi.run_time_value(param, spec, batch))
        elif param.name == "dst" and isinstance(batch, StoreBatch):
            args.append(InOut(_typed(symbol, param, batch.dst, spec.dtype)))
        elif param.name == "dst":
            args.append(Out(batch.n_blocks * abi.out_length(spec), spec.dtype))
        else:
            args.append(In(_typed(symbol, param, getattr(batch, param.name), spec.dtype)))
    return args


def _typed(symbol: str, param: abi.Param, array: Any, dtype: str) -> Any:
    """``array``, checked for the element type the kernel reads (it would reinterpret any other)."""
    wanted = param.dtype or dtype
    if str(array.dtype) != wanted:
        raise LoaderError(f"{symbol}: argument {param.name} is {array.dtype}, the kernel takes {wanted}")
    return array
