"""The deviations every family's reference model can have, written once, and the traits every mutant has.

Each model (Load/Store, Exchange, Shuffle) has the same steps ``rank``, ``register``, ``compile`` and ``launch``;
a deviation of one of those steps is a mixin here, and :func:`family_mutant` makes a family's mutant of one (its
mutant base plus the mixin, its name prefixed with the family's), so that every family's contract is checked
against the same wrong implementations.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import coopcheck
import numpy as np

from .model import Array, linear_rank

M = TypeVar("M", bound=type)


class MutantTraits:
    """What makes a reference model a mutant (mixed into each family's mutant base); ``name`` is its pytest id."""

    name: ClassVar[str]
    #: The contracts it runs on (its family's), and the ones it must break.
    family: ClassVar[tuple[str, ...]]
    targets: ClassVar[tuple[str, ...]]
    #: The contract rules that explain the deviation: every failing case must name one of them.
    rules: ClassVar[tuple[str, ...]]
    #: The oracle's diagnosis of this deviation, where it has one: some failing case must report it.
    diagnosis: ClassVar[str | None] = None


class RankYMajor:
    """The primitive ranks threads y-fastest, y + by*(x + bx*z), while its caller ranks them x-fastest."""

    name = "rank-y-major"
    rules = ("rank-order",)
    diagnosis = "rank-y-major"

    def rank(self, block: tuple[int, ...], x: Array, y: Array, z: Array) -> Array:
        bx, by, bz = (*block, 1, 1)[:3]
        return linear_rank((by, bx, bz), y, x, z)


class StaticsUnchecked:
    """Compile accepts every static parameter combination instead of refusing the bad ones."""

    name = "statics-unchecked"
    rules = ("static-parameters",)

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec:
        return spec


class FloatCanonicalized:
    """Floats pass through an arithmetic move (x + 0): -0.0 becomes +0.0 and NaN payloads are quieted."""

    name = "float-canonicalized"
    rules = ("bit-exact",)
    diagnosis = "floats-canonicalized"

    def register(self, values: Array) -> Array:
        if values.dtype.kind != "f":
            return values
        with np.errstate(invalid="ignore"):  # signalling NaNs quieten: that is the mutant
            moved: Array = values + values.dtype.type(0)
        return moved


class OutputTruncated:
    """The launch copies one element too few back to the host."""

    name = "output-truncated"
    rules = ("output-abi",)

    def launch(self, spec: coopcheck.KernelSpec, batch: Any) -> Array:
        out: Array = super().launch(spec, batch)[:-1]  # type: ignore[misc]
        return out


class InputOverwritten:
    """The launch hands the kernel the host's ``field`` buffer and the kernel clears it after use."""

    rules = ("inputs-unmodified",)
    field: ClassVar[str]

    def launch(self, spec: coopcheck.KernelSpec, batch: Any) -> Array:
        out: Array = super().launch(spec, batch)  # type: ignore[misc]
        getattr(batch, self.field)[:] = 0
        return out


def wrong_identity(op: str, dtype: np.dtype[Any]) -> np.generic:
    """The identity an implementation with a wrong one takes: min the dtype's lowest value, max its highest (each
    the other's identity), matmul the zero matrix, any other operator 1."""
    low = op == "min"
    if op not in ("min", "max"):
        value: np.generic = dtype.type(0 if op == "matmul" else 1)
    elif dtype.kind == "f":
        value = dtype.type(-np.inf if low else np.inf)
    else:
        value = dtype.type(np.iinfo(dtype).min if low else np.iinfo(dtype).max)
    return value


def family_mutant(deviation: type, base: M, prefix: str = "") -> M:
    """The mutant ``base`` (a family's mutant base) with ``deviation`` mixed in, of the deviation's class name
    and docstring; its pytest id is the deviation's, prefixed with ``prefix`` (the family's)."""
    name = f"{prefix}-{deviation.name}" if prefix else deviation.name  # type: ignore[attr-defined]
    namespace = {"name": name, "__doc__": deviation.__doc__, "__module__": base.__module__,
                 "__qualname__": deviation.__qualname__}
    made: M = type(deviation.__name__, (deviation, base), namespace)
    return made


#: The deviations of :func:`common_mutants`, in its order.
COMMON = (RankYMajor, StaticsUnchecked, FloatCanonicalized, OutputTruncated)


def common_mutants(base: M, prefix: str = "") -> tuple[M, ...]:
    """A family's mutants of the deviations in :data:`COMMON` (see :func:`family_mutant`)."""
    return tuple(family_mutant(d, base, prefix) for d in COMMON)
