"""The benchmark: checks per second of the engine's batched launches against a naive runner, and the cost of
10x the checks in the same launches, per backend that can launch here (plain, or under a sanitizer).

A *check* is one case (all its data-pattern blocks). The naive runner allocates, launches, copies back and
judges one case per launch, the way a pytest-parametrize suite runs; the batched runner is the engine's
own loop. Both go through :class:`harness.engine.Engine`, compiles excluded (each kernel is compiled before
the clock starts, and so does each kernel's first launch), so the ratio is what batching buys. Figures are
measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import coopcheck

from harness.cases import DEFAULT_SEED, PROFILES, Case, group_by_kernel
from harness.contracts import load_contracts
from harness.engine import Engine
from harness.errors import HarnessError
from harness.families import launched
from harness.fingerprint import fingerprint, gpu_present
from harness.lanes import SANITIZER_TOOLS, lane_cases
from harness.options import positive_int
from harness.statuses import Status

MODES = ("batched", "naive", "tenfold")
SIMULATOR_ENV = "NUMBA_ENABLE_CUDASIM"
#: Blocks per launch that never split a group: the batched and tenfold modes run one launch per group.
UNSPLIT = 1 << 30


@dataclass(frozen=True)
class Measure:
    """One backend's run of one mode over the chosen groups."""

    backend: str
    mode: str
    tool: str  # "none" or the compute-sanitizer tool it ran under
    checks: int
    launches: int
    seconds: float
    not_passed: int  # a benchmark of wrong answers measures nothing: the report says how many

    @property
    def per_second(self) -> float:
        return self.checks / self.seconds if self.seconds else 0.0


def pick_groups(backend: str, profile: str, groups: int,
                contracts_dir: Path | None) -> list[tuple[coopcheck.KernelSpec, list[Case]]]:
    """``groups`` kernel groups per contract, evenly spaced over those the backend runs (deterministic)."""
    adapter = coopcheck.register(backend)
    chosen = []
    for contract in load_contracts(contracts_dir):
        cases = [c for c in lane_cases(contract, backend, profile, "gpu") if c.reject is None]
        every = [(spec, run) for spec, group in group_by_kernel(cases) if (run := launched(adapter, spec, group))]
        step = max(1, len(every) // groups)
        chosen += every[::step][:groups]
    return chosen


def measure(backend: str, mode: str, groups: list[tuple[coopcheck.KernelSpec, list[Case]]], seed: int,
            tool: str) -> Measure:
    """Time one mode; compiles, and each kernel's first launch (module load, lazy initialization), happen
    before the clock starts."""
    engine = Engine(coopcheck.register(backend), "gpu", seed, lambda record: None)
    for spec, cases in groups:
        engine.prepare(spec, cases)
        engine.run_group(spec, cases[:1])
    engine.launches = 0
    checks, not_passed, seconds = 0, 0, 0.0
    for spec, cases in groups:
        engine.max_blocks = cases[0].contract.oracle.blocks_per_case(spec) if mode == "naive" else UNSPLIT
        started = time.perf_counter()
        records = engine.run_group(spec, cases * 10 if mode == "tenfold" else cases)
        seconds += time.perf_counter() - started
        checks += len(records)
        not_passed += sum(r.status is not Status.PASS for r in records)
    return Measure(backend, mode, tool, checks, engine.launches, round(seconds, 4), not_passed)


def launchable(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """(backends that can launch here, the others with why)."""
    found, skipped = [], {}
    for name in names or coopcheck.available():
        adapter = coopcheck.register(name)
        if adapter.can_launch():
            found.append(name)
        else:
            skipped[name] = "cannot launch here (no CUDA device, and no simulator for it)"
    return found, skipped


def ratios(results: list[Measure]) -> list[dict[str, Any]]:
    """Per backend and tool: batched over naive checks/s, and the time of 10x the checks over 1x."""
    rows = []
    keyed = {(m.backend, m.tool, m.mode): m for m in results}
    for backend, tool in dict.fromkeys((m.backend, m.tool) for m in results):
        batched, naive, tenfold = (keyed.get((backend, tool, mode)) for mode in MODES)
        row: dict[str, Any] = {"backend": backend, "tool": tool}
        if batched and naive and naive.per_second:
            row["batched_over_naive"] = round(batched.per_second / naive.per_second, 1)
        if batched and tenfold and batched.seconds:
            row["tenfold_time_over_batched"] = round(tenfold.seconds / batched.seconds, 2)
        rows.append(row)
    return rows


def _under_sanitizer(tool: str, argv: list[str]) -> list[Measure]:
    """Run this benchmark again under ``compute-sanitizer --tool`` and read back its measures."""
    sanitizer = os.environ.get("COMPUTE_SANITIZER") or shutil.which("compute-sanitizer")
    if sanitizer is None:
        raise HarnessError(f"--sanitizer {tool}: compute-sanitizer is not on PATH (or set COMPUTE_SANITIZER)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "inner.json"
        cmd = [sanitizer, "--tool", tool, "--print-limit", "0", "--target-processes", "all",
               sys.executable, "-m", "harness", "bench", *argv, "--inner-tool", tool, "--json", str(out)]
        done = subprocess.run(cmd, check=False)
        if done.returncode != 0 or not out.exists():
            raise HarnessError(f"the benchmark under compute-sanitizer --tool {tool} exited {done.returncode}")
        fields = set(Measure.__dataclass_fields__)
        return [Measure(**{k: v for k, v in m.items() if k in fields})
                for m in json.loads(out.read_text(encoding="utf-8"))["results"]]


def table(results: list[Measure]) -> str:
    lines = [f"{'backend':<11} {'tool':<9} {'mode':<8} {'checks':>8} {'launches':>8} {'seconds':>9} "
             f"{'checks/s':>11} {'not passed':>10}"]
    lines += [f"{m.backend:<11} {m.tool:<9} {m.mode:<8} {m.checks:>8} {m.launches:>8} {m.seconds:>9.3f} "
              f"{m.per_second:>11.0f} {m.not_passed:>10}" for m in results]
    for row in ratios(results):
        lines.append(f"{row['backend']:<11} {row['tool']:<9} batched/naive {row.get('batched_over_naive', '-')}x, "
                     f"10x the checks took {row.get('tenfold_time_over_batched', '-')}x the time")
    return "\n".join(lines)


def cmd_bench(args: argparse.Namespace) -> int:
    if not args.inner_tool and not gpu_present():
        # the host-executing backends: numba's simulator, which runs a Python thread per CUDA thread
        os.environ.setdefault(SIMULATOR_ENV, "1")
        args.profile, args.groups = args.profile or "smoke", args.groups or 1
        print(f"bench: no CUDA device found: running what executes on the host ({SIMULATOR_ENV}="
              f"{os.environ[SIMULATOR_ENV]}), profile {args.profile}, {args.groups} group(s) per contract",
              file=sys.stderr)
    args.profile, args.groups = args.profile or "pr", args.groups or 12
    backends, skipped = launchable(list(args.backend))
    for name, why in skipped.items():
        print(f"bench: {name}: {why}", file=sys.stderr)
    if not backends:
        raise HarnessError("no installed backend can launch here: a GPU, or NUMBA_ENABLE_CUDASIM=1 for numba's "
                           "simulator, is needed")
    tool = args.inner_tool or "none"
    results = [measure(b, mode, pick_groups(b, args.profile, args.groups, args.contracts), args.seed, tool)
               for b in backends for mode in MODES]
    if args.sanitizer and not args.inner_tool:
        inner = ["--profile", args.profile, "--groups", str(args.groups), "--seed", str(args.seed)]
        inner += [x for b in backends for x in ("--backend", b)]
        inner += ["--contracts", str(args.contracts)] if args.contracts else []
        results += _under_sanitizer(args.sanitizer, inner)
    doc = {"schema": 1, "kind": "coop-bench", "profile": args.profile, "groups_per_contract": args.groups,
           "backends": backends, "skipped": skipped, "env": fingerprint(backends),
           "results": [asdict(m) | {"checks_per_second": round(m.per_second, 1)} for m in results],
           "ratios": ratios(results)}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    if not args.inner_tool:
        print(table(results))
        print(f"bench: ran {', '.join(backends)}; figures in {args.json}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="checks/s: batched launches vs one check per launch, and 10x the checks")
    p.add_argument("--backend", action="append", default=[], help="repeatable; default: every one that can launch")
    p.add_argument("--profile", choices=PROFILES, help="where the groups come from (pr; smoke without a GPU)")
    p.add_argument("--groups", type=positive_int, help="kernel groups per contract (12; 1 without a GPU)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--contracts", type=Path, help="contracts folder (default: the project's contracts/)")
    p.add_argument("--sanitizer", choices=SANITIZER_TOOLS,
                   help="also run the benchmark under this compute-sanitizer tool")
    p.add_argument("--json", type=Path, default=Path("reports/out/bench.json"), help="where the figures go")
    p.add_argument("--inner-tool", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_bench)
