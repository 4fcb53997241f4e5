"""The adapter protocol: how the harness compiles and launches one backend's contract kernels.

Every backend ships an adapter class and names it in the ``coopcheck.backends`` entry-point group.
The kernel ABI below is fixed so that one oracle judges every backend.

Load kernel, one block per case instance (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``);
``rank = x + bx * (y + by * z)``, ``tile = threads * ipt``:

* thread ``rank`` of block ``b`` starts with payload ``init[b*tile + rank*ipt + i]``;
* it calls block Load on ``src[b*region + offset[b]:]`` with ``valid[b]`` valid items, passing
  ``oob_default=oob[b]`` when ``has_oob[b]`` is nonzero and no default otherwise;
* it writes every payload slot to ``dst[b*tile + rank*ipt + i]``.

Store kernel: thread ``rank`` of block ``b`` holds ``items[b*tile + rank*ipt + i]`` and calls
block Store on ``dst[b*region + offset[b]:]`` with ``valid[b]`` valid items; the harness fills
``dst`` with per-slot sentinels first, so every stray write shows.

Optional methods (an adapter without one gets the default behaviour):

* ``unsupported_case(spec, values) -> str | None`` (:class:`CaseSupport`): an API that cannot take some
  run-time case values (say, no partial tiles) declines those cases with the reason; the others launch.
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

    operation: str  # "block.load" | "block.store"
    dtype: str
    block: tuple[int, ...]
    items_per_thread: int
    algorithm: str
    static_valid_items: int | None = None
    static_offset: int | None = None
    store_oob_default: bool = False

    @property
    def threads(self) -> int:
        return block_threads(self.block)

    @property
    def tile(self) -> int:
        return self.threads * self.items_per_thread


def kernel_symbol(spec: KernelSpec, *, include_block: bool = False) -> str:
    """The kernel name every backend uses, so sanitizer records name their specialization.

    >>> kernel_symbol(KernelSpec("block.load", "int32", (16, 8), 4, "striped"), include_block=True)
    'coop_block_load__int32__ipt4__striped__b16x8'
    """
    name = f"coop_{spec.operation.replace('.', '_')}__{spec.dtype}__ipt{spec.items_per_thread}"
    name += f"__{spec.algorithm}"
    if include_block:
        name += "__b" + "x".join(map(str, spec.block))
    return name


@dataclass
class LoadBatch:
    """Arguments of one batched Load launch (NumPy arrays on the host; see the module ABI)."""

    src: Any
    init: Any
    valid: Any  # int32[n_blocks]
    offset: Any  # int64[n_blocks]
    has_oob: Any  # int32[n_blocks]
    oob: Any  # dtype[n_blocks]
    region: int

    @property
    def n_blocks(self) -> int:
        return len(self.valid)


@dataclass
class StoreBatch:
    """Arguments of one batched Store launch; ``dst`` arrives sentinel-filled."""

    items: Any
    dst: Any
    valid: Any
    offset: Any
    region: int

    @property
    def n_blocks(self) -> int:
        return len(self.valid)


@dataclass
class Artifacts:
    """What a compile produced, for the harness's inspectors (no backend-side inspection)."""

    kernel_name: str
    cubin: bytes | None = None  # final SASS container for ``arch``
    ptx: str | None = None
    arch: str = "sm_90"
    dynamic_shared_bytes: int = 0  # requested at launch, invisible in the cubin
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Adapter(Protocol):
    """A backend as the harness sees it. Methods raise; they never return error codes."""

    name: str

    def unsupported_reason(self, spec: KernelSpec) -> str | None:
        """None when the backend implements ``spec``; else the exact reason it does not."""

    def kernel_key(self, spec: KernelSpec) -> Hashable:
        """Identity of the compiled kernel; specs with equal keys share one compile."""

    def compile(self, spec: KernelSpec, *, arch: str) -> Any:
        """Compile (or look up) the kernel; raises ``coopcheck.InvalidParameter`` for rejected statics."""

    def artifacts(self, compiled: Any) -> Artifacts:
        """The compiled kernel's PTX / cubin and launch-time shared memory."""

    def can_launch(self) -> bool:
        """Whether :meth:`launch` can run here (a GPU, or a simulator)."""

    def launch(self, compiled: Any, spec: KernelSpec, batch: LoadBatch | StoreBatch) -> Any:
        """Run one batched launch and return the host copy of ``dst``."""


@runtime_checkable
class CaseSupport(Protocol):
    """An adapter whose API takes only some run-time case values (optional; see the module docstring)."""

    def unsupported_case(self, spec: KernelSpec, values: Mapping[str, Any]) -> str | None:
        """None when the backend can run the case whose case axes have ``values`` (resolved: valid_items
        and offset in elements, the others as the contract names them); else the exact reason."""


class ToolchainReport(Protocol):
    """An adapter class's optional ``toolchain``: versions by component name (see the module docstring)."""

    def __call__(self) -> dict[str, str]: ...
