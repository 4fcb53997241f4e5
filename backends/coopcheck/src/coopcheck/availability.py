"""Declared unavailability: a backend whose toolchain is not installed says so by name.

A backend calls :func:`require` before it imports its toolchain, both from its qualified namespace
(``coopcheck_numba``) and from its adapter, so that activating it in either import order fails with
:class:`BackendUnavailable` naming the backend and what to install, not with an ImportError from
deep inside an import chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.util import find_spec


class BackendUnavailable(ImportError):
    """An installed backend whose required modules are missing; ``backend`` and ``missing`` say which."""

    def __init__(self, backend: str, missing: Mapping[str, str]) -> None:
        listed = ", ".join(f"module {module!r} (distribution {dist})" for module, dist in missing.items())
        install = " ".join(sorted(set(missing.values())))
        super().__init__(
            f"backend {backend!r} is unavailable: {listed} not installed; try: pip install {install}",
            name=next(iter(missing)),
        )
        self.backend = backend
        self.missing = dict(missing)


def require(backend: str, modules: Mapping[str, str]) -> None:
    """Raise :class:`BackendUnavailable` unless every top-level module in ``modules`` is installed.

    ``modules`` maps a top-level module name to the distribution that provides it. Modules are
    found, not imported, so calling this costs no toolchain import.

    >>> require("example", {"json": "the standard library"})
    >>> require("example", {"no_such_module_here": "no-such-dist"})
    Traceback (most recent call last):
    coopcheck.availability.BackendUnavailable: backend 'example' is unavailable: module 'no_such_module_here' (distribution no-such-dist) not installed; try: pip install no-such-dist
    """  # noqa: E501
    dotted = [module for module in modules if "." in module]
    if dotted:
        # find_spec of a dotted name imports its parent package: exactly the cost this avoids.
        raise ValueError(f"require({backend!r}): give top-level module names, not {dotted}")
    missing = {module: dist for module, dist in modules.items() if find_spec(module) is None}
    if missing:
        raise BackendUnavailable(backend, missing)
