"""The engine: one backend's kernel groups compiled once, launched in batches, judged per case.

A group is every case of one kernel spec. Host lanes compile and inspect; launch lanes run one
batched launch per group (split at ``max_blocks``) and judge each block with the oracle that the
group's contract names (:mod:`harness.families`): the engine knows no family.
"""

from __future__ import annotations

import time
import traceback
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import coopcheck

from harness.cases import Case
from harness.errors import HarnessError
from harness.families import undeclared
from harness.journal import CaseRecord, LaunchRecord, Record, ResourceRecord
from harness.lanes import LANES, is_run_case, lane_kind
from harness.oracles.launch import Verdict
from harness.statuses import Status

Emit = Callable[[Record], None]


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__


def _where(exc: BaseException) -> str:
    """The error and the harness line that raised it (module path from the package, not the machine's)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return _one_line(exc)
    path = Path(frames[-1].filename)
    parts = path.parts[path.parts.index("harness"):] if "harness" in path.parts else (path.name,)
    return f"{_one_line(exc)} (at {'/'.join(parts)}:{frames[-1].lineno})"


@dataclass
class Engine:
    """Runs groups for one adapter in one lane; every verdict and launch goes to ``emit``."""

    adapter: coopcheck.Adapter
    lane: str
    seed: int
    emit: Emit
    arch: str = "sm_90"
    max_blocks: int = 4096
    _compiled: dict[Hashable, Any] = field(default_factory=dict)
    _compile_errors: dict[Hashable, str] = field(default_factory=dict)
    _reports: dict[Hashable, Any] = field(default_factory=dict)  # kernel key -> its inspection (KernelReport)
    _prepared: dict[Hashable, float] = field(default_factory=dict)  # kernel key -> seconds :meth:`prepare` compiled it
    launches: int = 0  # launches so far: the sequence number of the launch ledger
    #: Seconds spent per phase (see :meth:`timed`), for the run summary and the journal's end record.
    phases: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def run_group(self, spec: coopcheck.KernelSpec, cases: list[Case]) -> list[CaseRecord]:
        """Verdicts for every case of one kernel spec (rejections may share the spec's kernel point).

        Only what the adapter itself does becomes a verdict: an error of the harness (its oracle, its
        inspectors, its inputs) is a :class:`HarnessError` naming the group, and nothing is recorded.
        """
        try:
            records = self._verdicts(spec, cases)
        except HarnessError:
            raise
        except Exception as exc:
            raise HarnessError(f"{cases[0].kernel_id}: the harness failed on this group (no verdict charged to "
                               f"{self.adapter.name}): {_where(exc)}") from exc
        with self.timed("journal"):
            for record in records:
                self.emit(record)
        return records

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Add the block's wall time to ``phase`` (compile, inspect, build, launch, judge, journal)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.phases[phase] += time.perf_counter() - started

    def _verdicts(self, spec: coopcheck.KernelSpec, cases: list[Case]) -> list[CaseRecord]:
        records = [self._reject(c) for c in cases if c.reject is not None]
        rest = [c for c in cases if c.reject is None]
        if rest:
            started = time.perf_counter()
            try:
                reason = undeclared(self.adapter, spec) or self.adapter.unsupported_reason(spec)
            except Exception as exc:
                return records + [self._record(c, Status.CRASH, f"unsupported_reason failed: {_one_line(exc)}")
                                  for c in rest]
            if reason is None and LANES[lane_kind(self.lane)]:
                declined, run = self._declined(spec, [c for c in rest if is_run_case(c)])
                return records + declined + self._run(spec, run)  # timed per launch
            if reason is not None:
                verdicts = [self._record(c, Status.NOT_SUPPORTED, reason) for c in rest]
            else:
                verdicts = self._inspect(spec, rest)
            compiled_before = self._prepared.pop(self.adapter.kernel_key(spec), 0.0)
            share = _share(started, len(rest), compiled_before / len(rest))
            records += [_with_seconds(r, share) for r in verdicts]
        return records

    def _declined(self, spec: coopcheck.KernelSpec, cases: list[Case]) -> tuple[list[CaseRecord], list[Case]]:
        """Split run cases into the verdicts of those the adapter declines (NotSupported, or Crash when asking
        fails) and those it takes; an adapter without ``unsupported_case`` takes every case."""
        if not isinstance(self.adapter, coopcheck.CaseSupport):
            return [], cases
        declined, taken = [], []
        for case in cases:
            try:
                reason = self.adapter.unsupported_case(spec, case.case_values())
            except Exception as exc:
                declined.append(self._record(case, Status.CRASH, f"unsupported_case failed: {_one_line(exc)}"))
                continue
            if reason is None:
                taken.append(case)
            else:
                declined.append(self._record(case, Status.NOT_SUPPORTED, reason))
        return declined, taken

    def _record(self, case: Case, status: Status, detail: str = "", rules: tuple[str, ...] = (),
                artifact: str | None = None, seconds: float = 0.0) -> CaseRecord:
        return CaseRecord(id=case.id, status=status, lane=self.lane, detail=detail, rules=rules,
                          seed=case.seed(self.seed) if is_run_case(case) else None, artifact=artifact,
                          seconds=seconds)

    def _reject(self, case: Case) -> CaseRecord:
        assert case.reject is not None
        want = case.reject.rule
        reason = undeclared(self.adapter, case.spec)
        if reason is not None:  # no kernel builder, so no public entry point to refuse the statics either
            return self._record(case, Status.NOT_SUPPORTED, reason)
        try:
            with self.timed("compile"):
                self.adapter.compile(case.spec, arch=self.arch)
        except coopcheck.InvalidParameter as exc:
            if exc.rule == want:
                return self._record(case, Status.PASS, str(exc))
            return self._record(case, Status.FAIL, f"refused with rule {exc.rule!r}, expected {want!r}: {exc}",
                                ("static-parameters",))
        except Exception as exc:  # a crash instead of the clear error is itself the failure
            return self._record(case, Status.FAIL, f"expected coopcheck.InvalidParameter[{want}], got {_one_line(exc)}",
                                ("static-parameters",))
        return self._record(case, Status.FAIL, f"compiled a combination it must reject ({want})",
                            ("static-parameters",))

    def prepare(self, spec: coopcheck.KernelSpec, cases: list[Case]) -> None:
        """Compile ``spec``'s kernel now if :meth:`run_group` would compile it for ``cases`` (a benchmark keeps
        compiles off its clock; a host lane compiles a batch of groups before listing their SASS at once): not for
        a kernel the backend does not implement, nor, in a launch lane, for a group whose every case it declines,
        nor for rejection cases (each compiles its statics itself, and a refusal must not stand for the kernel key
        they may share with a valid spec). A failure (to declare, to compile) shows in :meth:`run_group`."""
        cases = [c for c in cases if c.reject is None]
        host = not LANES[lane_kind(self.lane)]
        with suppress(Exception):
            if not cases or undeclared(self.adapter, spec) or self.adapter.unsupported_reason(spec):
                return
            if host or self._declined(spec, [c for c in cases if is_run_case(c)])[1]:
                started = time.perf_counter()
                try:
                    self._compile(spec)
                finally:  # a host lane's verdicts carry their group's compile, as a launch lane's do: the first
                    if host:  # group of a key takes it, a later one the cached lookup
                        key = self.adapter.kernel_key(spec)
                        self._prepared[key] = self._prepared.get(key, 0.0) + time.perf_counter() - started

    def prefetch_inspections(self, specs: list[coopcheck.KernelSpec]) -> None:
        """Host lane: list the SASS of the kernels of ``specs`` compiled so far (:meth:`prepare`) and not inspected
        yet in one disassembly (:mod:`harness.inspect.batched`), so that their :meth:`run_group` finds it made. A
        kernel this cannot list, or whose artifacts fail, is left to its own inspection, which says why."""
        try:
            from harness.inspect.batched import prefetch
        except ImportError:
            return  # _inspect names the missing extra
        cubins = []
        for spec in specs:
            key = self.adapter.kernel_key(spec)
            if key in self._compiled and key not in self._reports:
                with suppress(Exception):
                    artifacts = self.adapter.artifacts(self._compiled[key])
                    if artifacts.cubin is not None:
                        cubins.append((artifacts.cubin, artifacts.kernel_name))
        with self.timed("inspect"):
            prefetch(cubins)

    def _compile(self, spec: coopcheck.KernelSpec) -> Any:
        """Compile once per kernel key; a failure is remembered, not retried, per key."""
        key = self.adapter.kernel_key(spec)
        if key in self._compile_errors:
            raise CompileFailed(self._compile_errors[key])
        if key not in self._compiled:
            try:
                with self.timed("compile"):
                    self._compiled[key] = self.adapter.compile(spec, arch=self.arch)
            except Exception as exc:
                detail = _one_line(exc)
                self._compile_errors[key] = detail + "\n" + "".join(traceback.format_exception(exc)[-3:])
                raise CompileFailed(self._compile_errors[key]) from None
        return self._compiled[key]

    def _inspect(self, spec: coopcheck.KernelSpec, cases: list[Case]) -> list[CaseRecord]:
        """Host lane: compile for ``arch`` and check the contract's resource rules on the SASS, and that the
        kernel's block can launch at all (its registers)."""
        try:
            from harness.inspect import forbidden_hits, inspect_artifacts, launch_violations, resource_violations
        except ImportError as exc:
            raise HarnessError(f"the host lane inspects artifacts with the harness's 'inspect' extra "
                               f"(pip install 'coopcheck-harness[inspect]'): {exc}") from None
        try:
            compiled = self._compile(spec)
            artifacts = self.adapter.artifacts(compiled)
        except CompileFailed as exc:
            return [self._record(c, Status.COMPILE_ERROR, str(exc)) for c in cases]
        except Exception as exc:
            return [self._record(c, Status.COMPILE_ERROR, f"artifacts failed: {_one_line(exc)}") for c in cases]
        key = self.adapter.kernel_key(spec)
        if key not in self._reports:
            with self.timed("inspect"):
                self._reports[key] = inspect_artifacts(artifacts)
        report = self._reports[key]
        # The rules that apply depend on the kernel point, which a kernel key may not (a block size, say).
        contract = cases[0].contract
        rules, known = contract.resources_for(dict(cases[0].params)), contract.oracle.ALGORITHMS
        violations = [*resource_violations(report, spec.algorithm, rules, known),
                      *launch_violations(report, spec.threads)]
        sha = report.sha256
        self.emit(ResourceRecord(cases[0].kernel_id, self.lane, sha, report.figures,
                                 forbidden_hits(report, spec.algorithm, rules, known)))
        if violations:
            return [self._record(c, Status.FAIL, "; ".join(violations), ("resources",), sha) for c in cases]
        return [self._record(c, Status.PASS, "", (), sha) for c in cases]

    def _run(self, spec: coopcheck.KernelSpec, cases: list[Case]) -> list[CaseRecord]:
        if not cases:
            return []
        started = time.perf_counter()
        try:
            compiled = self._compile(spec)
        except CompileFailed as exc:
            share = _share(started, len(cases))
            return [self._record(c, Status.COMPILE_ERROR, str(exc), seconds=share) for c in cases]
        compiling = (time.perf_counter() - started) / len(cases)  # each case's part of its group's compile
        per_launch = max(1, self.max_blocks // cases[0].contract.oracle.blocks_per_case(spec))
        records: list[CaseRecord] = []
        for start in range(0, len(cases), per_launch):
            records += self._launch(spec, compiled, cases[start:start + per_launch], compiling)
        return records

    def _launch(self, spec: coopcheck.KernelSpec, compiled: Any, cases: list[Case],
                compiling: float) -> list[CaseRecord]:
        """One batched launch judged from a snapshot of its inputs; only the adapter's own errors are Crash.
        Each case is charged an equal share of the launch's wall time (build, launch, judge) plus ``compiling``,
        its part of the group's compile."""
        started = time.perf_counter()
        oracle = cases[0].contract.oracle
        with self.timed("build"):
            launch = oracle.build(spec, cases, self.seed)
            before = oracle.snapshot(launch.batch)
        self.launches += 1
        self.emit(LaunchRecord(coopcheck.launched_symbol(self.adapter, spec), tuple(c.id for c in cases), self.launches,
                               blocks=tuple(launch.case_of_block.tolist())))
        try:
            with self.timed("launch"):
                out = self.adapter.launch(compiled, spec, launch.batch)
        except Exception as exc:
            share = _share(started, len(cases), compiling)
            return [self._record(c, Status.CRASH, f"launch failed: {_one_line(exc)}", seconds=share) for c in cases]
        with self.timed("judge"):
            verdicts = oracle.judge(launch, before, out)
        share = _share(started, len(cases), compiling)
        records = []
        for case, verdict in zip(cases, verdicts, strict=True):
            if verdict.passed:
                records.append(self._record(case, Status.PASS, seconds=share))
                continue
            detail = f"{verdict.detail} (seed {case.seed(self.seed)}, launch seed {launch.seed}) [{case.id}]"
            records.append(self._record(case, Status.FAIL, detail, explaining_rules(case, verdict), seconds=share))
        return records


def explaining_rules(case: Case, verdict: Verdict) -> tuple[str, ...]:
    """The rules a failure breaks: of the output checks, those whose ``matches`` explain its diagnoses (every
    rule of each failed check when none does); of the other checks (inputs, ABI), every rule."""
    params = dict(case.params)
    applicable = [r for r in case.contract.rules if r.applies(params)]
    explaining = {r.name for r in applicable if set(r.matches) & set(verdict.diagnoses)}
    named: list[str] = []
    for check in verdict.checks:
        of_check = [r.name for r in applicable if r.check == check]
        if check in case.contract.oracle.OUTPUT_CHECKS and explaining:
            of_check = [name for name in of_check if name in explaining]
        named += of_check
    named += sorted(explaining - set(named))
    return tuple(dict.fromkeys(named))


class CompileFailed(Exception):
    """Internal: a kernel key whose compile failed (message already formatted)."""


def _share(started: float, cases: int, plus: float = 0.0) -> float:
    """Each of ``cases`` cases' equal share of the wall time since ``started``, plus ``plus`` seconds each (its
    part of the group's compile): the journal's ``seconds``."""
    return round((time.perf_counter() - started) / cases + plus, 6)


def _with_seconds(record: CaseRecord, seconds: float) -> CaseRecord:
    return replace(record, seconds=seconds)
