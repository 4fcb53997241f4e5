"""The engine: one backend's kernel groups compiled once, launched in batches, judged per case.

A group is every case of one kernel spec. Host lanes compile and inspect; launch lanes run one
batched launch per group (split at ``max_blocks``) and judge each block with the oracle.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import coop
import numpy as np

from harness.cases import Case
from harness.journal import CaseRecord, LaunchRecord, Record
from harness.lanes import LANES, is_run_case, lane_kind
from harness.oracles import block_load_store as oracle
from harness.statuses import Status

Emit = Callable[[Record], None]


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__


@dataclass
class Engine:
    """Runs groups for one adapter in one lane; every verdict and launch goes to ``emit``."""

    adapter: coop.Adapter
    lane: str
    seed: int
    emit: Emit
    arch: str = "sm_90"
    max_blocks: int = 4096
    _compiled: dict[Hashable, Any] = field(default_factory=dict)
    _compile_errors: dict[Hashable, str] = field(default_factory=dict)
    _inspected: dict[Hashable, tuple[str | None, list[str]]] = field(default_factory=dict)
    _launches: int = 0

    def run_group(self, spec: coop.KernelSpec, cases: list[Case]) -> list[CaseRecord]:
        """Verdicts for every case of one kernel spec (rejections may share the spec's kernel point)."""
        records = [self._reject(c) for c in cases if c.reject is not None]
        rest = [c for c in cases if c.reject is None]
        if rest:
            started = time.perf_counter()
            reason = self.adapter.unsupported_reason(spec)
            if reason is not None:
                verdicts = [self._record(c, Status.NOT_SUPPORTED, reason) for c in rest]
            elif LANES[lane_kind(self.lane)]:
                verdicts = self._run(spec, [c for c in rest if is_run_case(c)])
            else:
                verdicts = self._inspect(spec, rest)
            share = (time.perf_counter() - started) / len(rest)
            records += [_with_seconds(r, share) for r in verdicts]
        for record in records:
            self.emit(record)
        return records

    def _record(self, case: Case, status: Status, detail: str = "", rules: tuple[str, ...] = (),
                artifact: str | None = None) -> CaseRecord:
        return CaseRecord(id=case.id, status=status, lane=self.lane, detail=detail, rules=rules,
                          seed=case.seed(self.seed) if is_run_case(case) else None, artifact=artifact)

    def _reject(self, case: Case) -> CaseRecord:
        assert case.reject is not None
        want = case.reject.rule
        try:
            self.adapter.compile(case.spec, arch=self.arch)
        except coop.InvalidParameter as exc:
            if exc.rule == want:
                return self._record(case, Status.PASS, str(exc))
            return self._record(case, Status.FAIL, f"refused with rule {exc.rule!r}, expected {want!r}: {exc}",
                                ("static-parameters",))
        except Exception as exc:  # a crash instead of the clear error is itself the failure
            return self._record(case, Status.FAIL, f"expected coop.InvalidParameter[{want}], got {_one_line(exc)}",
                                ("static-parameters",))
        return self._record(case, Status.FAIL, f"compiled a combination it must reject ({want})",
                            ("static-parameters",))

    def _compile(self, spec: coop.KernelSpec) -> Any:
        """Compile once per kernel key; a failure is remembered, not retried, per key."""
        key = self.adapter.kernel_key(spec)
        if key in self._compile_errors:
            raise CompileFailed(self._compile_errors[key])
        if key not in self._compiled:
            try:
                self._compiled[key] = self.adapter.compile(spec, arch=self.arch)
            except Exception as exc:
                detail = _one_line(exc)
                self._compile_errors[key] = detail + "\n" + "".join(traceback.format_exception(exc)[-3:])
                raise CompileFailed(self._compile_errors[key]) from None
        return self._compiled[key]

    def _inspect(self, spec: coop.KernelSpec, cases: list[Case]) -> list[CaseRecord]:
        """Host lane: compile for ``arch`` and check the contract's resource rules on the SASS."""
        from harness.inspect import inspect_artifacts, resource_violations

        try:
            compiled = self._compile(spec)
        except CompileFailed as exc:
            return [self._record(c, Status.COMPILE_ERROR, str(exc)) for c in cases]
        key = self.adapter.kernel_key(spec)
        if key not in self._inspected:
            report = inspect_artifacts(self.adapter.artifacts(compiled))
            self._inspected[key] = (report.sha256, resource_violations(report, spec.algorithm,
                                                                          list(cases[0].contract.resources)))
        sha, violations = self._inspected[key]
        if violations:
            return [self._record(c, Status.FAIL, "; ".join(violations), ("resources",), sha) for c in cases]
        return [self._record(c, Status.PASS, "", (), sha) for c in cases]

    def _run(self, spec: coop.KernelSpec, cases: list[Case]) -> list[CaseRecord]:
        if not cases:
            return []
        try:
            compiled = self._compile(spec)
        except CompileFailed as exc:
            return [self._record(c, Status.COMPILE_ERROR, str(exc)) for c in cases]
        records: list[CaseRecord] = []
        for start in range(0, len(cases), self.max_blocks):
            records += self._launch(spec, compiled, cases[start:start + self.max_blocks])
        return records

    def _launch(self, spec: coop.KernelSpec, compiled: Any, cases: list[Case]) -> list[CaseRecord]:
        is_load = spec.operation == "block.load"
        batch: coop.LoadBatch | coop.StoreBatch
        if is_load:
            batch, sentinels = oracle.build_load(spec, cases, self.seed), None
        else:
            batch = oracle.build_store(spec, cases, self.seed)
            sentinels = np.array(batch.dst, copy=True)
        self._launches += 1
        self.emit(LaunchRecord(coop.kernel_symbol(spec), tuple(c.id for c in cases), self._launches))
        try:
            out = np.asarray(self.adapter.launch(compiled, spec, batch))
        except Exception as exc:
            return [self._record(c, Status.CRASH, f"launch failed: {_one_line(exc)}") for c in cases]
        records = []
        for block, case in enumerate(cases):
            if is_load:
                judgement = oracle.judge_load(spec, batch, out, block)  # type: ignore[arg-type]
            else:
                judgement = oracle.judge_store(spec, batch, sentinels, out, block)  # type: ignore[arg-type]
            if judgement:
                records.append(self._record(case, Status.PASS))
                continue
            params = dict(case.params)
            rules = tuple(r for check in judgement.checks for r in case.contract.rules_for_check(check, params))
            detail = "; ".join(map(str, judgement.violations))
            detail += f" ({judgement.total} wrong element(s); seed {case.seed(self.seed)}) [{case.id}]"
            records.append(self._record(case, Status.FAIL, detail, rules))
        return records


class CompileFailed(Exception):
    """Internal: a kernel key whose compile failed (message already formatted)."""


def _with_seconds(record: CaseRecord, seconds: float) -> CaseRecord:
    from dataclasses import replace

    return replace(record, seconds=round(seconds, 6))
