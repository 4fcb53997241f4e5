"""``python -m harness.sanitizer lane --tool T [options] [-- pytest args]``: one GPU lane under one tool.

The pytest lane and the tool's positive control run from an empty temporary directory, each xdist
worker under its own sanitizer and on its own GPU; then the XML, not pytest's exit status, decides.
Memcheck and initcheck see an access past the end only of an exact-size allocation: adapters
allocate exactly the batch's arrays (no pool, no rounding up), and the lane turns torch's pool off.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.contracts import contracts_dir
from harness.errors import HarnessError
from harness.gpus import gpu_ids, select_gpus
from harness.lanes import SANITIZER_TOOLS
from harness.options import OneLineParser, positive_int, seconds
from harness.sanitizer import SanitizerLaneError
from harness.sanitizer.judge import LaneResult, judge
from harness.sanitizer.junit import junit_outcomes, mark_junit
from harness.sanitizer.layout import LaneLayout
from harness.sanitizer.summary import summary_line
from harness.sanitizer.workers import Slot, default_workers, plan_slots, tx_spec
from harness.sanitizer.wrapper import WrapperConfig
from harness.session import RunConfig, phase_lines

#: Set for the whole lane: torch's caching allocator would hide an overrun inside its pool.
LANE_ENV = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
#: Path options of harness.plugin, made absolute here: pytest runs in a temporary directory.
PATH_OPTIONS = ("--coop-contracts", "--coop-expectations")
#: pytest options the driver sets itself; passing them too is a usage error.
DRIVER_OPTIONS = ("--coop-lane", "--coop-journal", "--coop-sanitizer-tool", "--coop-sanitizer-dir",
                  "--coop-sanitizer-exit-timeout",
                  "--junitxml", "--junit-xml", "--tx", "--dist", "-n", "--numprocesses", "-p no:xdist")


#: Seconds before a lane's session is stopped as hung (``--lane-timeout``), and what its workers get to come down.
LANE_TIMEOUT = 3600.0


@dataclass(frozen=True)
class LaneOptions:
    tool: str
    out: Path
    workers: int | None = None
    sanitizer: str | None = None
    launch_timeout: int | None = None
    lane_timeout: float = LANE_TIMEOUT
    gpus: str | None = None  # --gpus: all, a count or ids; None: every GPU listed

    @property
    def connect_timeout(self) -> int:
        """How long the sanitizer waits for a worker's first CUDA call: ``--launch-timeout``, else the lane's
        limit. A worker collects every item before it makes one, which took over two minutes for 59,000 items
        on a busy machine; a sanitizer that stops waiting checks nothing in that worker."""
        return self.launch_timeout or max(1, math.ceil(self.lane_timeout))


def lane_slots(options: LaneOptions, env: Mapping[str, str]) -> tuple[list[str], list[Slot]]:
    """The GPUs the lane uses (``--gpus``, else every one listed) and its workers' slots, round-robin over them."""
    gpus = select_gpus(options.gpus, env) if options.gpus else gpu_ids(env)
    return gpus, plan_slots(gpus, options.workers or default_workers(len(gpus)))


def find_sanitizer(given: str | None) -> str:
    """``--compute-sanitizer``, ``$COMPUTE_SANITIZER``, PATH, ``$CUDA_HOME/bin`` or ``$CUDA_PATH/bin``."""
    if given:
        found = shutil.which(given)
        if not found:
            raise SanitizerLaneError(f"--compute-sanitizer {given}: not an executable")
        return found
    candidates = [os.environ.get("COMPUTE_SANITIZER"), "compute-sanitizer"]
    candidates += [str(Path(os.environ[v]) / "bin" / "compute-sanitizer") for v in ("CUDA_HOME", "CUDA_PATH")
                   if os.environ.get(v)]
    for candidate in filter(None, candidates):
        found = shutil.which(candidate)
        if found:
            return found
    raise SanitizerLaneError("compute-sanitizer not found: put it on PATH, set COMPUTE_SANITIZER or "
                             "CUDA_HOME, or pass --compute-sanitizer")


def check_pytest_args(args: Sequence[str]) -> None:
    """Refuse the options the driver owns, saying what to do instead."""
    for i, arg in enumerate(args):
        name = arg.split("=", 1)[0]
        joined = f"{arg} {args[i + 1]}" if i + 1 < len(args) else arg
        numprocesses = name.startswith("-n") and name[2:].isalnum()
        if name == "--tx":  # xdist's gateways to other hosts: the judge reads the tools' XML here
            raise SanitizerLaneError(f"pytest option {arg!r} is set by the lane driver; leave it out: a sanitizer "
                                     "lane runs on this host: run one on each host and give `harness report` their "
                                     "journals together (use --workers for the number of sanitized workers)")
        if name in DRIVER_OPTIONS or joined in DRIVER_OPTIONS or numprocesses:
            raise SanitizerLaneError(f"pytest option {arg!r} is set by the lane driver; leave it out "
                                     "(use --workers for the number of sanitized workers)")


def absolute_paths(args: Sequence[str], cwd: Path) -> list[str]:
    """``--coop-contracts contracts`` -> ``--coop-contracts <cwd>/contracts`` (both spellings).

    >>> absolute_paths(["--coop-contracts", "c", "--coop-expectations=e.toml", "-k", "x"], Path("/r"))
    ['--coop-contracts', '/r/c', '--coop-expectations=/r/e.toml', '-k', 'x']
    """
    out = list(args)
    for i, arg in enumerate(out):
        name, eq, value = arg.partition("=")
        if name in PATH_OPTIONS and eq:
            out[i] = f"{name}={cwd / value}"
        elif i and out[i - 1] in PATH_OPTIONS:
            out[i] = str(cwd / arg)
    return out


def pytest_command(layout: LaneLayout, slots: list[Slot], pytest_args: Sequence[str],
                   python: str = sys.executable, exit_timeout: float = LANE_TIMEOUT) -> list[str]:
    """The pytest session of the lane: cases and control, one sanitized worker per slot, each given
    ``exit_timeout`` seconds to come down at the end (its sanitizer finishes its analysis then)."""
    return [python, "-P", "-m", "pytest", "-p", "xdist", "-p", "harness.plugin",
            "-p", "harness.sanitizer.plugin", "--coop-lane", f"gpu-{layout.tool}",
            "--coop-journal", layout.journal_template,
            "--coop-sanitizer-tool", layout.tool, "--coop-sanitizer-dir", str(layout.root),
            "--coop-sanitizer-exit-timeout", f"{exit_timeout:g}",
            # harness.plugin schedules by kernel group under any distributing mode.
            "--junitxml", str(layout.junit), "--dist", "load",
            *(f"--tx={tx_spec(python, str(layout.wrapper_config(slot.name)))}" for slot in slots),
            *pytest_args]


def _plugin_options(pytest_args: Sequence[str]) -> argparse.Namespace:
    """The harness.plugin options the driver needs, read as pytest reads them (the last one wins)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--coop-contracts", type=Path)
    parser.add_argument("--coop-expectations", type=Path)
    parser.add_argument("--coop-arch", default="sm_90")
    parser.add_argument("--coop-items", default="case")
    return parser.parse_known_args(list(pytest_args))[0]


def item_kind(pytest_args: Sequence[str]) -> str:
    """``--coop-items``: which node id the JUnit testcase of a charged case has."""
    return str(_plugin_options(pytest_args).coop_items)


def run_config(tool: str, pytest_args: Sequence[str]) -> RunConfig:
    """The lane, arch, contracts and expectations file of the run, read from pytest options as harness.plugin does."""
    known = _plugin_options(pytest_args)
    folder = known.coop_contracts or contracts_dir()
    expectations = known.coop_expectations or folder / "expectations.toml"
    return RunConfig(lane=f"gpu-{tool}", arch=known.coop_arch, contracts_dir=known.coop_contracts,
                     expectations=expectations if expectations.exists() else None)


def run_pytest(command: list[str], timeout: float) -> tuple[int, str | None]:
    """Run the session in its own process group from an empty directory; (status, timeout problem).

    The group (pytest, its wrappers, sanitizers and workers) is killed when the lane times out or
    this process is interrupted, so no sanitized worker outlives the lane.
    """
    with tempfile.TemporaryDirectory(prefix="coop-sanitizer-") as workdir:
        # An empty ini file pins pytest's rootdir here: no project configuration is picked up from above.
        (Path(workdir) / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        proc = subprocess.Popen(command, cwd=workdir, env={**os.environ, **LANE_ENV}, start_new_session=True)
        try:
            return proc.wait(timeout=timeout), None
        except subprocess.TimeoutExpired:
            return -signal.SIGKILL, f"the lane ran past --lane-timeout {timeout:.0f} s and was stopped"
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def run_lane(options: LaneOptions, pytest_args: Sequence[str]) -> LaneResult:
    """Run and judge one lane; the result's problems are empty when it passed."""
    if options.tool not in SANITIZER_TOOLS:
        raise SanitizerLaneError(f"unknown tool {options.tool!r}; tools: {', '.join(SANITIZER_TOOLS)}")
    check_pytest_args(pytest_args)
    pytest_args = absolute_paths(pytest_args, Path.cwd())
    ledger = run_config(options.tool, pytest_args).ledger()
    sanitizer = find_sanitizer(options.sanitizer)
    gpus, slots = lane_slots(options, os.environ)
    layout = LaneLayout(options.out.resolve(), options.tool)
    layout.prepare()
    for slot in slots:
        WrapperConfig(sanitizer, options.tool, str(layout.root), slot.name, slot.gpu,
                      options.connect_timeout).write(layout.wrapper_config(slot.name))
    print(f"lane gpu-{options.tool}: {len(slots)} sanitized worker(s) on GPU(s) {', '.join(gpus)}; "
          f"{sanitizer}; folder {layout.root}", flush=True)
    command = pytest_command(layout, slots, pytest_args, exit_timeout=options.lane_timeout)
    status, timed_out = run_pytest(command, options.lane_timeout)
    result = judge(layout, [slot.name for slot in slots], ledger)
    if timed_out:
        result.problems.insert(0, timed_out)
    elif status != 0:
        result.problems.append(f"pytest exited {status}: an item failed or the session broke (see above)")
    if layout.junit.exists():
        mark_junit(layout.junit, junit_outcomes(result, item_kind(pytest_args)))
    return result


def report(result: LaneResult) -> int:
    """Print the findings, the summary line and the problems; the exit status of the lane."""
    print(f"{result.tool}: {result.records} record(s): {result.control_records} on the positive control, "
          f"{result.unmapped} unmapped, the others charged to {len(result.charged)} case(s)")
    print(summary_line(result.finals, result.tool))
    for line in phase_lines(result.phases):
        print(line)
    if not result.problems:
        print(f"{result.lane}: passed")
        return 0
    print(f"{result.lane}: FAILED with {len(result.problems)} problem(s):", file=sys.stderr)
    for problem in result.problems:
        print(f"  - {problem}", file=sys.stderr)
    return 1


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m harness.sanitizer", description=__doc__.splitlines()[0],
                           allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)
    lane = sub.add_parser("lane", allow_abbrev=False, help="run one GPU lane under a compute-sanitizer tool",
                          description="Options after -- (and any this command does not know) go to pytest.")
    lane.add_argument("--tool", required=True, choices=SANITIZER_TOOLS)
    lane.add_argument("--out", type=Path, help="lane folder, wiped first (default: reports/out/gpu-<tool>)")
    lane.add_argument("--workers", type=positive_int, help="sanitized xdist workers (default: one per GPU, at least "
                                                  "half the cores, at most 8)")
    lane.add_argument("--gpus", metavar="all|N|ID,...", help="the GPUs the workers go round-robin over: all, "
                      "the first N, or ids such as 0,1 (default: every GPU listed)")
    lane.add_argument("--compute-sanitizer", dest="sanitizer", help="the sanitizer executable")
    lane.add_argument("--launch-timeout", type=positive_int,
                      help="seconds the sanitizer waits for a worker's first CUDA call (default: --lane-timeout)")
    lane.add_argument("--lane-timeout", type=seconds, default=LANE_TIMEOUT,
                      help="seconds before the whole session is stopped as hung (%(default)s)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args, extra = build_parser().parse_known_args(argv[:split])
    options = LaneOptions(args.tool, args.out or Path("reports/out") / f"gpu-{args.tool}", args.workers,
                          args.sanitizer, args.launch_timeout, args.lane_timeout, args.gpus)
    try:
        return report(run_lane(options, [*extra, *argv[split + 1:]]))
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
