"""Operation families as plug-ins: a contract file names its family's oracle module, and the engine reaches
the family only through the :class:`Oracle` members below (adding a family touches no engine code).

A backend declares the operations it has a kernel builder for (``Adapter.operations``); a case of another
operation is NotSupported with :func:`undeclared`'s reason before the adapter sees it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast

import coopcheck
from coopcheck.adapter import missing_members

from harness.errors import ContractError

if TYPE_CHECKING:  # cases imports this module (through contracts)
    from harness.cases import Case
    from harness.oracles.launch import Launch, Verdict


class Oracle(Protocol):
    """One family's oracle module (pure NumPy, vectorized): its checks, and a batched launch built and judged."""

    #: Every check the oracle judges by (a contract rule names one, or ``rejects-statics``).
    CHECKS: frozenset[str]
    #: The checks of the element-wise comparison of the output: the ones a diagnosis explains.
    OUTPUT_CHECKS: frozenset[str]
    #: Known wrong implementations the oracle recognises (name -> what it does), for rules' ``matches``.
    DIAGNOSES: Mapping[str, str]
    #: The values the ``alg`` axis (and the resource rules' ``algorithms``) may name: the family's algorithms.
    ALGORITHMS: tuple[str, ...]
    #: The family's own axes past the common ones (name -> the values it may take), kernel or case axes.
    AXES: Mapping[str, tuple[str, ...]]

    def check_static(self, spec: coopcheck.KernelSpec) -> None:
        """Raise ``coopcheck.InvalidParameter`` for the first static rule ``spec`` breaks."""

    def axes_problem(self, operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
        """Why the contract's axes do not fit ``operation`` (None: they do)."""

    def blocks_per_case(self, spec: coopcheck.KernelSpec) -> int:
        """Blocks one case takes in a launch (one per data pattern)."""

    def build(self, spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
        """The inputs of one batched launch of ``cases``."""

    def snapshot(self, batch: Any) -> Any:
        """A copy of a launch's inputs taken before it runs (the oracle judges from it)."""

    def judge(self, launch: Launch, snap: Any, out: object) -> list[Verdict]:
        """Every case's verdict, in case order."""


def load_oracle(name: str, where: str) -> Oracle:
    """Import the oracle module ``name`` that ``where`` (a contract file) names, or say what it lacks."""
    try:
        module: ModuleType = importlib.import_module(name)
    except ImportError as exc:
        raise ContractError(f"{where}: oracle: cannot import {name!r}: {exc}") from None
    missing = missing_members(module, Oracle)
    if missing:
        raise ContractError(f"{where}: oracle: module {name!r} is not an oracle: it lacks {', '.join(missing)}")
    return cast(Oracle, module)


def undeclared(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec) -> str | None:
    """The NotSupported reason of a spec whose operation the backend has no kernel builder for."""
    if spec.operation in adapter.operations:
        return None
    return (f"backend {adapter.name} declares no kernel builder for {spec.operation} "
            f"(it declares: {', '.join(sorted(adapter.operations)) or 'none'})")


def launched(adapter: coopcheck.Adapter, spec: coopcheck.KernelSpec, cases: Sequence[Case]) -> list[Case]:
    """The run cases of one kernel group that ``adapter`` launches: none of a spec it has no builder for or declares
    unsupported, else those its ``unsupported_case`` (where it has one) does not decline."""
    if undeclared(adapter, spec) or adapter.unsupported_reason(spec):
        return []
    if not isinstance(adapter, coopcheck.CaseSupport):
        return list(cases)
    return [c for c in cases if adapter.unsupported_case(spec, c.case_values()) is None]

