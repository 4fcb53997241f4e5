"""The adapter protocol: how the harness compiles and launches one backend's contract kernels.

Every backend ships an adapter class and names it in the ``coopcheck.backends`` entry-point group. It
declares the operations it has a kernel builder for (``operations``); each family's kernel ABI (the
``batch`` a launch receives) is written down once, beside the family's vocabulary (Load/Store:
:mod:`coopcheck.load_store`), so that one oracle judges every backend.

Optional methods (an adapter without one gets the default behaviour):

* ``unsupported_case(spec, values) -> str | None`` (:class:`CaseSupport`): an API that cannot take some
  run-time case values (say, no partial tiles) declines those cases with the reason; the others launch.
* ``launched_symbol(spec) -> str`` (:class:`LaunchNaming`): the name of the kernel a launch of ``spec`` runs,
  where one kernel serves several specializations (its run-time parameters telling them apart); the launch ledger
  records it, so sanitizer records naming that kernel reach ``spec``'s cases. Default: :func:`kernel_symbol`.
* ``toolchain() -> dict[str, str]`` (:class:`ToolchainReport`), callable on the class: the versions
  of what the backend compiles with, recorded in the journal's fingerprint; it must be cheap (no
  toolchain import), since the harness asks before it activates any backend.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from coopcheck.vocabulary import block_threads


@dataclass(frozen=True)
class KernelSpec:
    """One compile-time specialization (plus the statics that only rejection cases set)."""

    operation: str  # a contract's operation, e.g. "block.load"
    dtype: str
    block: tuple[int, ...]
    items_per_thread: int
    algorithm: str
    #: The family's static parameters, (name, value) in its contract's order (only rejection cases set any).
    statics: tuple[tuple[str, Any], ...] = ()
    #: The family's own kernel axes past dtype, block, ipt and alg, (name, value) in its contract's order (Block
    #: Exchange's ``slicing`` and ``output``): part of every specialization, and of its kernel symbol.
    variant: tuple[tuple[str, str], ...] = ()

    def static(self, name: str, default: Any = None) -> Any:
        """The family parameter ``name`` (a variant axis, or a static), or ``default`` when the spec has none."""
        return dict(self.variant + self.statics).get(name, default)

    @property
    def threads(self) -> int:
        return block_threads(self.block)

    @property
    def tile(self) -> int:
        return self.threads * self.items_per_thread


def kernel_symbol(spec: KernelSpec, *, include_block: bool = False) -> str:
    """The kernel name every backend uses, so sanitizer records name their specialization (the variant's
    values follow the algorithm, so no specialization's name holds another's).

    >>> kernel_symbol(KernelSpec("block.load", "int32", (16, 8), 4, "striped"), include_block=True)
    'coop_block_load__int32__ipt4__striped__b16x8'
    >>> kernel_symbol(KernelSpec("block.exchange", "int8", (64,), 2, "scatter_to_striped", variant=(("x", "on"),)))
    'coop_block_exchange__int8__ipt2__scatter_to_striped__on'
    """
    name = f"coop_{spec.operation.replace('.', '_')}__{spec.dtype}__ipt{spec.items_per_thread}"
    name += f"__{spec.algorithm}" + "".join(f"__{value}" for _, value in spec.variant)
    if include_block:
        name += "__b" + "x".join(map(str, spec.block))
    return name


@dataclass
class Artifacts:
    """What a compile produced, for the harness's inspectors (no backend-side inspection)."""

    kernel_name: str
    cubin: bytes | None = None  # final SASS container for ``arch``
    ptx: str | None = None
    arch: str = "sm_90"
    dynamic_shared_bytes: int = 0  # requested at launch, invisible in the cubin
    extra: dict[str, Any] = field(default_factory=dict)


def missing_members(obj: object, protocol: type) -> list[str]:
    """The attributes and methods of ``protocol`` that ``obj`` lacks (for a message naming them)."""
    members = [*protocol.__annotations__, *(n for n, v in vars(protocol).items() if callable(v) and n[0] != "_")]
    return [m for m in members if not hasattr(obj, m)]


@runtime_checkable
class Adapter(Protocol):
    """A backend as the harness sees it. Methods raise; they never return error codes."""

    name: str
    #: The operations this backend has a kernel builder for; a case of any other is NotSupported.
    operations: frozenset[str]

    def unsupported_reason(self, spec: KernelSpec) -> str | None:
        """None when the backend implements ``spec`` (of a declared operation); else the exact reason it does not."""

    def kernel_key(self, spec: KernelSpec) -> Hashable:
        """Identity of the compiled kernel; specs with equal keys share one compile."""

    def compile(self, spec: KernelSpec, *, arch: str) -> Any:
        """Compile (or look up) the kernel; raises ``coopcheck.InvalidParameter`` for rejected statics."""

    def artifacts(self, compiled: Any) -> Artifacts:
        """The compiled kernel's PTX / cubin and launch-time shared memory."""

    def can_launch(self) -> bool:
        """Whether :meth:`launch` can run here (a GPU, or a simulator)."""

    def launch(self, compiled: Any, spec: KernelSpec, batch: Any) -> Any:
        """Run one batched launch (``batch`` as the operation's family ABI says) and return the host copy of ``dst``."""


@runtime_checkable
class CaseSupport(Protocol):
    """An adapter whose API takes only some run-time case values (optional; see the module docstring)."""

    def unsupported_case(self, spec: KernelSpec, values: Mapping[str, Any]) -> str | None:
        """None when the backend can run the case whose case axes have ``values`` (resolved: valid_items
        and offset in elements, the others as the contract names them); else the exact reason."""


@runtime_checkable
class LaunchNaming(Protocol):
    """An adapter one of whose kernels serves several specializations (optional; see the module docstring)."""

    def launched_symbol(self, spec: KernelSpec) -> str:
        """The name of the kernel a launch of ``spec`` runs: contained in the name a sanitizer reports for it."""


def launched_symbol(adapter: object, spec: KernelSpec) -> str:
    """The kernel name a launch of ``spec`` by ``adapter`` runs: its ``launched_symbol``, else
    :func:`kernel_symbol`."""
    return adapter.launched_symbol(spec) if isinstance(adapter, LaunchNaming) else kernel_symbol(spec)


class ToolchainReport(Protocol):
    """An adapter class's optional ``toolchain``: versions by component name (see the module docstring)."""

    def __call__(self) -> dict[str, str]: ...
