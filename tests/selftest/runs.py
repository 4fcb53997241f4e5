"""Runs a model over one profile's cases as the harness does: one batched launch per kernel point, judged
per case by the oracle, reject cases compiled and expected to be refused with their rule."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Protocol

import coopcheck

from harness.cases import Case, expand, group_by_kernel
from harness.contracts import Contract
from harness.engine import explaining_rules
from harness.oracles.launch import Launch
from harness.session import RunConfig

#: Backend name in the case ids of the self-test (the ids also seed the data).
BACKEND = "model"
#: The global seed of a default run, so the self-test judges the data the real lanes draw.
GLOBAL_SEED = RunConfig.seed
#: The check a reject case exercises (contracts map it to their static-parameters rule).
REJECT_CHECK = "rejects-statics"


class Model(Protocol):
    """A model backend: one family's kernels on the host."""

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec: ...

    def launch(self, spec: coopcheck.KernelSpec, batch: Any) -> Any: ...


@dataclass(frozen=True)
class Plan:
    """Everything one contract's profile asks of a backend."""

    contract: Contract
    launches: tuple[Launch, ...]
    rejects: tuple[Case, ...]

    @property
    def n_cases(self) -> int:
        return sum(len(launch.cases) for launch in self.launches) + len(self.rejects)


@dataclass(frozen=True)
class Failure:
    """A case the model failed: the oracle checks it failed, the rules that explain it, and why."""

    case_id: str
    checks: tuple[str, ...]
    rules: tuple[str, ...]
    detail: str

    def __str__(self) -> str:
        return f"{self.case_id}: {self.detail} [rules: {', '.join(self.rules)}]"


def plan(contract: Contract, profile: str, seed: int = GLOBAL_SEED) -> Plan:
    """Expand ``contract`` for ``profile`` and build every launch's inputs once (kept as the snapshot)."""
    cases = expand(contract, BACKEND, profile)
    launches = tuple(contract.oracle.build(spec, group, seed)
                     for spec, group in group_by_kernel(c for c in cases if c.reject is None))
    return Plan(contract, launches, tuple(c for c in cases if c.reject is not None))


def failures(model: Model, work: Plan) -> list[Failure]:
    """Every case of ``work`` that ``model`` fails, in case order (reject cases last).

    Each launch gets its own copy of the inputs, as a GPU gets its own device buffers: a model that
    writes into them is judged from the plan's untouched snapshot.
    """
    found: list[Failure] = []
    oracle = work.contract.oracle
    for launch in work.launches:
        live = replace(launch, batch=oracle.snapshot(launch.batch))
        out = model.launch(model.compile(launch.spec), live.batch)
        for case, verdict in zip(launch.cases, oracle.judge(live, launch.batch, out), strict=True):
            if not verdict.passed:
                found.append(Failure(case.id, verdict.checks, explaining_rules(case, verdict), verdict.detail))
    for case in work.rejects:
        assert case.reject is not None
        try:
            model.compile(case.spec)
        except coopcheck.InvalidParameter as exc:
            if exc.rule == case.reject.rule:
                continue
            detail = f"refused with rule {exc.rule!r}, expected {case.reject.rule!r}"
        else:
            detail = f"compiled a combination it must refuse with rule {case.reject.rule!r}"
        found.append(Failure(case.id, (REJECT_CHECK,), tuple(work.contract.rules_for_check(REJECT_CHECK)), detail))
    return found


def outline(found: list[Failure]) -> str:
    """One line for a report: how many cases failed, the rules named (with how many cases), the first case.

    >>> outline([Failure("block.store/m/ipt=2", ("nothing-else-written",), ("store-nothing-else",), "")])
    '1 failing case(s) | store-nothing-else: 1 | first block.store/m/ipt=2'
    """
    if not found:
        return "no case failed"
    named = Counter(rule for failure in found for rule in failure.rules)
    parts = [f"{rule}: {n}" for rule, n in sorted(named.items())]
    return " | ".join([f"{len(found)} failing case(s)", *parts, f"first {found[0].case_id}"])
