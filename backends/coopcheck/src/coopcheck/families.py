"""Which family's kernel ABI a spec belongs to, by its operation: the one lookup every backend makes."""

from __future__ import annotations

from types import ModuleType

from coopcheck import exchange, load_store, reduce, scan, shuffle, warp_reduce, warp_scan
from coopcheck.adapter import KernelSpec

#: Each family's ABI module (its ``OPERATIONS``, batch type and ``check_spec``).
FAMILIES: tuple[ModuleType, ...] = (load_store, exchange, shuffle, reduce, scan, warp_reduce, warp_scan)


def family_of(spec: KernelSpec) -> ModuleType:
    """The ABI module whose ``OPERATIONS`` hold ``spec.operation``; Load/Store's for any other operation, whose
    ``check_spec`` refuses it by the rule ``operation``.

    >>> family_of(KernelSpec("block.exchange", "int8", (32,), 1, "striped_to_blocked")).__name__
    'coopcheck.exchange'
    """
    return next((f for f in FAMILIES if spec.operation in f.OPERATIONS), load_store)


def check_spec(spec: KernelSpec) -> None:
    """Raise :class:`coopcheck.InvalidParameter` for the first static rule of its family that ``spec`` breaks."""
    family_of(spec).check_spec(spec)
