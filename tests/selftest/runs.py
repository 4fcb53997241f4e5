"""Runs a model over one profile's cases as the harness does: one batched launch per kernel point, judged
per case by the oracle, reject cases compiled and expected to be refused with their rule."""

from __future__ import annotations

from dataclasses import dataclass

import coop
import numpy as np

from harness.cases import Case, expand, group_by_kernel
from harness.contracts import Contract
from harness.oracles.block_load_store import build_load, build_store, judge_load, judge_store
from harness.session import RunConfig

from .model import ReferenceModel

#: Backend name in the case ids of the self-test (the ids also seed the data).
BACKEND = "model"
#: The global seed of a default run, so the self-test judges the data the real lanes draw.
GLOBAL_SEED = RunConfig.seed
#: The check a reject case exercises (contracts map it to their static-parameters rule).
REJECT_CHECK = "rejects-statics"


@dataclass(frozen=True)
class Launch:
    """One kernel point's batched launch: its cases (block k runs case k) and its read-only inputs."""

    spec: coop.KernelSpec
    cases: tuple[Case, ...]
    batch: coop.LoadBatch | coop.StoreBatch


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
    """A case the model failed: each failed check with the contract rules it enforces, and why."""

    case_id: str
    caught_by: tuple[tuple[str, tuple[str, ...]], ...]  # (oracle check, its rules)
    detail: str

    def __str__(self) -> str:
        rules = [rule for _, rules in self.caught_by for rule in rules]
        return f"{self.case_id}: {self.detail} [rules: {', '.join(rules)}]"


def _read_only(batch: coop.LoadBatch | coop.StoreBatch) -> coop.LoadBatch | coop.StoreBatch:
    """Freeze the input arrays: a model that writes into them fails loudly instead of poisoning others."""
    for value in vars(batch).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return batch


def plan(contract: Contract, profile: str, seed: int = GLOBAL_SEED) -> Plan:
    """Expand ``contract`` for ``profile`` and build every launch's inputs once."""
    cases = expand(contract, BACKEND, profile)
    build = build_load if contract.operation == "block.load" else build_store
    launches = tuple(
        Launch(spec, tuple(group), _read_only(build(spec, group, seed)))
        for spec, group in group_by_kernel(c for c in cases if c.reject is None)
    )
    return Plan(contract, launches, tuple(c for c in cases if c.reject is not None))


def _caught_by(contract: Contract, checks: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((check, tuple(contract.rules_for_check(check))) for check in checks)


def failures(model: ReferenceModel, work: Plan) -> list[Failure]:
    """Every case of ``work`` that ``model`` fails, in case order (reject cases last)."""
    found: list[Failure] = []
    for launch in work.launches:
        spec, batch = model.compile(launch.spec), launch.batch
        out = model.launch(spec, batch)
        for block, case in enumerate(launch.cases):
            if isinstance(batch, coop.LoadBatch):
                judgement = judge_load(spec, batch, out, block)
            else:
                judgement = judge_store(spec, batch, batch.dst, out, block)
            if not judgement:
                detail = "; ".join(map(str, judgement.violations)) + f" ({judgement.total} wrong)"
                found.append(Failure(case.id, _caught_by(work.contract, judgement.checks), detail))
    for case in work.rejects:
        assert case.reject is not None
        try:
            model.compile(case.spec)
        except coop.InvalidParameter as exc:
            if exc.rule == case.reject.rule:
                continue
            detail = f"refused with rule {exc.rule!r}, expected {case.reject.rule!r}"
        else:
            detail = f"compiled a combination it must refuse with rule {case.reject.rule!r}"
        found.append(Failure(case.id, _caught_by(work.contract, (REJECT_CHECK,)), detail))
    return found


def outline(found: list[Failure]) -> str:
    """One line for a report: how many cases failed, each failed check with its rules, the first case.

    >>> outline([Failure("block.store/m/ipt=2", (("nothing-else-written", ("store-nothing-else",)),), "")])
    '1 failing case(s) | nothing-else-written: store-nothing-else | first block.store/m/ipt=2'
    """
    if not found:
        return "no case failed"
    checks = dict(pair for failure in found for pair in failure.caught_by)
    parts = [f"{check}: {', '.join(rules)}" for check, rules in sorted(checks.items())]
    return " | ".join([f"{len(found)} failing case(s)", *parts, f"first {found[0].case_id}"])
