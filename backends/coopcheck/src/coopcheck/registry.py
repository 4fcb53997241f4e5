"""Backends arrive through the ``coopcheck.backends`` entry-point group; this registry keys them by name.

Importing this module loads no backend: an adapter class is imported only by :func:`register`.
"""

from __future__ import annotations

import os
from importlib.metadata import EntryPoint, entry_points

from coopcheck.adapter import Adapter, ToolchainReport, missing_members

GROUP = "coopcheck.backends"
#: Comma-separated backend names to leave out of :func:`available`.
BLOCK_ENV = "COOP_BLOCK_BACKENDS"

_active: dict[str, Adapter] = {}


class UnknownBackend(LookupError):
    """A backend name no installed distribution provides."""


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def available() -> list[str]:
    """Installed backend names, minus those blocked by ``COOP_BLOCK_BACKENDS``."""
    blocked = {n.strip() for n in os.environ.get(BLOCK_ENV, "").split(",") if n.strip()}
    return sorted(set(_entry_points()) - blocked)


def _entry_point(name: str) -> EntryPoint:
    eps = _entry_points()
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none installed"
        raise UnknownBackend(f"unknown backend {name!r}; installed backends: {known}")
    return eps[name]


def register(name: str) -> Adapter:
    """Activate backend ``name`` (idempotent) and return its adapter."""
    if name in _active:
        return _active[name]
    adapter = _entry_point(name).load()()
    if not isinstance(adapter, Adapter):
        missing = ", ".join(missing_members(adapter, Adapter))
        raise TypeError(f"entry point {GROUP}:{name} does not provide a coopcheck Adapter (it lacks {missing})")
    _active[name] = adapter
    return adapter


def active() -> dict[str, Adapter]:
    """The backends registered so far in this process."""
    return dict(_active)


def toolchain(name: str) -> dict[str, str]:
    """What backend ``name`` compiles with, from its adapter class's optional ``toolchain()`` ({} without
    one); the backend is not activated (its adapter module is imported, which loads nothing heavy)."""
    report: ToolchainReport | None = getattr(_entry_point(name).load(), "toolchain", None)
    return dict(report()) if report is not None else {}
