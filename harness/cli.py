"""The coop conformance harness: list the cases, run a lane into a journal, report on journals.

Exit status: 0 when every case is accepted, 1 when a case is not (or the verdict a command checks is
negative), 2 on a usage or input error (one line, no traceback), 130 when an interrupt stopped a run (its
journals resumable), 141 when the reader of the output went away (``| head``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from harness import caseid
from harness.bench import register as register_bench
from harness.cases import DEFAULT_SEED, PROFILES, Case, expand, kernel_points, profile_cases
from harness.contracts import CONTRACTS_ENV, Contract, contracts_dir, load_contracts
from harness.datafile import read_text
from harness.errors import HarnessError, Interrupted
from harness.expectations import Verdict
from harness.fingerprint import gpu_present
from harness.gpus import select_gpus
from harness.hosts import HostError, Hosts, parse_hosts
from harness.journal import JournalLock
from harness.lanes import ALL_LANES, LANE_OUT_ENV, LANE_WORK, lane_kind, lanes_not_run
from harness.options import OneLineParser, arch, count, gibibytes, positive_int, seconds, whole_number
from harness.progress import RunProgress
from harness.report.cli import register as register_report
from harness.scaling import group_costs
from harness.scaling import register as register_predict
from harness.session import (
    INTERRUPTED,
    RECYCLED,
    Recycled,
    RunConfig,
    check_resume,
    exit_with_supervisor,
    phase_lines,
    physical_memory,
    planned_groups,
    read_outcome,
    resolve_backends,
    run_worker,
    supervise_shards,
)


def _shard(text: str) -> tuple[int, int]:
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N with 1 <= K <= N")
    return int(k), int(n)


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lane", choices=ALL_LANES,
                        help="what to run (default: gpu where a CUDA device is present, else host)")
    parser.add_argument("--profile", choices=PROFILES, default="pr",
                        help="how many cases: full (qualification), pr (all pairs of kernel axes), smoke")
    parser.add_argument("--backend", action="append", default=[], metavar="NAME",
                        help="a backend to run, repeatable or comma-separated (default: every installed one)")
    parser.add_argument("--seed", type=whole_number, default=DEFAULT_SEED,
                        help="global seed; case seeds derive from it")
    parser.add_argument("--arch", type=arch, default="sm_90",
                        help="GPU architecture the host lane compiles for: sm_<major><minor>[a|f]")
    parser.add_argument("--max-blocks", type=positive_int, default=4096, metavar="N",
                        help="blocks per launch, at least 1 (lower under racecheck)")
    _contracts_option(parser)
    parser.add_argument("--expectations", type=Path, metavar="FILE",
                        help="waivers file (default: expectations.toml in the contracts folder)")
    parser.add_argument("--worker-memory", type=gibibytes, metavar="GIB",
                        help="a worker that holds more resident memory starts afresh between kernel groups, resuming "
                        "its journal (0: never; default: this machine's memory over the workers plus one)")


def _contracts_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contracts", type=Path, metavar="DIR",
                        help=f"contracts folder (default: ${CONTRACTS_ENV}, else the checkout's contracts/)")


def _contracts(args: argparse.Namespace) -> Path:
    """The contracts folder a command reads. An installed harness has no checkout beside it: a default folder
    without contracts is an error that says how to name one."""
    if args.contracts is not None:
        return Path(args.contracts)
    folder = contracts_dir()
    if not any(folder.glob("*.toml")):
        raise HarnessError(f"{folder}: no contract files here: run from the root of a checkout, or name the "
                           f"folder with --contracts or ${CONTRACTS_ENV}")
    return folder


def _config(args: argparse.Namespace) -> RunConfig:
    folder = _contracts(args)
    if args.expectations is not None and not args.expectations.is_file():
        raise HarnessError(f"--expectations {args.expectations}: no such file")
    expectations = args.expectations or (folder / "expectations.toml")
    return RunConfig(lane=args.lane, profile=args.profile, seed=args.seed,
                     backends=list(args.backend), contracts_dir=folder, arch=args.arch,
                     max_blocks=args.max_blocks, expectations=expectations if expectations.exists() else None,
                     worker_memory=args.worker_memory or None)


def cmd_list(args: argparse.Namespace) -> int:
    contracts = load_contracts(_contracts(args))
    for contract in contracts:
        for profile in PROFILES:
            points, runs, blocks = _profile_size(contract, profile)
            print(f"{contract.id:<12} {profile:<5} {points:>5} kernel points  {runs:>7} run cases in {blocks:>8} "
                  f"blocks  {len(contract.rejects):>2} reject cases  (per backend)")
            if args.ids and profile == args.profile:
                for case in expand(contract, "backend", profile):
                    print("  " + case.id)
    return 0


def _profile_size(contract: Contract, profile: str) -> tuple[int, int, int]:
    """Kernel points, run cases and blocks of one profile, counted without making the cases' ids (the full profile
    has 700,000; rendering and checking them was most of the listing's time). Every run case of a point shares
    the point's kernel spec."""
    points = kernel_points(contract, profile)
    runs = blocks = 0
    for point in points:
        cases = len(profile_cases(contract, "backend", point, profile))
        runs += cases
        blocks += cases * contract.oracle.blocks_per_case(Case(contract, "backend", point).spec)
    return len(points), runs, blocks


def summarize(finals: dict[str, Verdict]) -> tuple[Counter[tuple[str, str, str]], int]:
    """Counts by (contract, backend, status), and how many cases are not accepted."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for record in finals.values():
        contract, backend = caseid.head(record.id)
        counts[contract, backend, str(record.status)] += 1
    return counts, sum(1 for r in finals.values() if not r.accepted)


def _announcement(lane: str, chosen: bool, gpu: bool, cases: int) -> str:
    """What a run is about to do, and why this lane when the run picked it: the main job picks it itself."""
    running = f"running the {lane} lane ({LANE_WORK[lane]}, {cases} cases)"
    if not gpu and lane != "gpu":
        running += "; the gpu lane needs a CUDA device"
    return running if chosen else f"{'CUDA device' if gpu else 'no CUDA device'} found: {running}"


def _gpus(given: str | None, on_hosts: bool) -> list[str] | None:
    """``--gpus``: here, as :func:`harness.gpus.select_gpus` reads it; with ``--hosts``, ids only, which every
    host is taken to have (its GPUs are not listed from here)."""
    if given is None:
        return None
    if on_hosts and (given.strip() == "all" or given.strip().isdigit()):
        raise HarnessError(f"--gpus {given} with --hosts: name the GPU ids every host has (e.g. --gpus 0,1; one id: "
                           "0,): all and a count list this machine's GPUs, not the hosts'")
    return select_gpus(given, os.environ)


def _devices(gpus: list[str] | None, jobs: int, specs: list[str] | None) -> list[str | None]:
    """The GPU of each shard: round-robin over ``gpus`` among the shards of one host. Shard i runs on gateway i mod
    n of ``specs`` (None: all here); gateways of one spec share a host and so its GPUs.

    >>> _devices(["0", "1"], 4, ["popen", "popen", "ssh=b"])
    ['0', '1', '0', '0']
    """
    hosts = specs or [""]
    if not gpus:
        return [None] * jobs
    before = [sum(1 for j in range(i) if hosts[j % len(hosts)] == hosts[i % len(hosts)]) for i in range(jobs)]
    return [gpus[n % len(gpus)] for n in before]


def cmd_run(args: argparse.Namespace) -> int:
    if args.gpus is not None and args.no_isolate:
        raise HarnessError("--gpus gives each worker process its GPU: leave out --no-isolate")
    if args.hosts and args.no_isolate:
        raise HarnessError("--hosts runs each shard's worker on a host: leave out --no-isolate")
    gpu = gpu_present()
    chosen, args.lane = args.lane is not None, args.lane or ("gpu" if gpu else "host")
    config = _config(args)
    if lane_kind(config.lane) != config.lane:
        tool = config.lane.partition("-")[2]
        raise HarnessError(f"lane {config.lane} runs under compute-sanitizer: use "
                           f"`python -m harness.sanitizer lane --tool {tool}` (or `tox -e {config.lane}`)")
    config.backends = resolve_backends(config.backends)  # before any worker starts: one clear error
    contracts = load_contracts(config.contracts_dir)  # so is a bad contract
    ledger = config.ledger()  # and an unreadable expectations file
    if args.ids_file:
        config.only_ids = frozenset(read_text(args.ids_file, HarnessError, f"--ids-file {args.ids_file}").split())
    specs = parse_hosts(args.hosts) if args.hosts else None
    gpus = _gpus(args.gpus, specs is not None)
    jobs = args.jobs or (len(gpus) if gpus else 1) * (len(specs) if specs else 1)
    if args.balance_from:
        config.costs = group_costs(args.balance_from)
    if args.worker_memory is None and not args.no_isolate:
        config.worker_memory = physical_memory() // (jobs + 1)
    plan = planned_groups(config, contracts)
    print(_announcement(config.lane, chosen, gpu, sum(len(cases) for _backend, cases in plan)), flush=True)
    if specs:
        print(f"{jobs} worker(s) on {len(specs)} gateway(s) ({', '.join(dict.fromkeys(specs))}), round-robin"
              + (f", each on GPU(s) {', '.join(gpus)} of its host" if gpus else ""), flush=True)
    elif gpus:
        print(f"{jobs} worker(s) on GPU(s) {', '.join(gpus)}, round-robin", flush=True)
    out = Path(os.environ.get(LANE_OUT_ENV, "reports/out"))
    journal = args.resume or args.journal or out / f"{config.lane}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    devices = _devices(gpus, jobs, specs)
    shards = [replace(config, shard=(k, jobs), gpu=device)
              for k, device in zip(range(1, jobs + 1), devices, strict=True)]
    journals = [journal] if jobs == 1 else [journal.with_name(f"{journal.stem}.shard{k}of{jobs}.jsonl")
                                            for k in range(1, jobs + 1)]
    for shard, path in zip(shards, journals, strict=True):
        if args.resume:
            if not path.exists():
                raise HarnessError(f"{path}: no such journal to resume")
            check_resume(path, shard.session_record())
        elif path.exists() and path.stat().st_size:
            where = f"--journal {journal}" + (f" (its shard {path})" if path != journal else "")
            raise HarnessError(f"{where}: already exists: continue it with --resume {journal}, or name a new "
                               "journal")
    try:
        if args.no_isolate:
            for shard, path in zip(shards, journals, strict=True):
                run_worker(shard, path)
        elif specs:
            with Hosts(specs, config, args.dist) as hosts, RunProgress(plan, config.ledger(), sys.stderr) as progress:
                supervise_shards(list(zip(shards, journals, strict=True)), args.group_timeout, progress,
                                 hosts.launches(jobs))
        else:
            with RunProgress(plan, config.ledger(), sys.stderr) as progress:
                supervise_shards(list(zip(shards, journals, strict=True)), args.group_timeout, progress)
    except HostError as exc:
        resume = f"--resume {journal}" + (f" --jobs {jobs}" if jobs > 1 else "")
        raise HostError(f"{exc}; the other shards ran on: continue the run with {resume} (on any hosts, or here)"
                        ) from None
    except (KeyboardInterrupt, Interrupted):
        one = len(journals) == 1
        raise Interrupted(f"interrupted: {', '.join(map(str, journals))} {'keeps' if one else 'keep'} what "
                          f"{'it' if one else 'they'} recorded; continue with --resume {journal}") from None
    outcome = read_outcome(ledger, journals, whole_run=config.only_ids is None)
    counts, not_accepted = summarize(outcome.finals)
    print(f"lane {config.lane}, profile {config.profile}, journal(s) {', '.join(map(str, journals))}")
    for (contract, backend, status), n in sorted(counts.items()):
        print(f"  {contract:<12} {backend:<11} {status:<15} {n:>7}")
    for line in phase_lines(outcome.phases):
        print(line)
    for problem in outcome.problems:
        print(f"expectation: {problem}", file=sys.stderr)
    total = sum(counts.values())
    if total == 0:
        print("no case ran: a lane that ran nothing fails", file=sys.stderr)
        return 1
    print(f"{total - not_accepted} of {total} cases accepted")
    print("lanes not run:")
    for lane, how in lanes_not_run(config.lane, gpu):
        print(f"  {lane:<15} {how}")
    return 1 if not_accepted or outcome.problems else 0


def cmd_worker(args: argparse.Namespace) -> int:
    if args.supervised:
        exit_with_supervisor(sys.stdin.fileno())
    config = replace(_config(args), shard=args.shard)
    if args.only:
        config.only_ids = frozenset(read_text(args.only, HarnessError, f"--only {args.only}").split())
    if args.balance:
        costs = json.loads(read_text(args.balance, HarnessError, f"--balance {args.balance}"))
        if not isinstance(costs, dict) or not all(isinstance(v, int | float) for v in costs.values()):
            raise HarnessError(f"--balance {args.balance}: not a JSON object of seconds per kernel group")
        config.costs = {str(kernel): float(seconds) for kernel, seconds in costs.items()}
    lock = JournalLock(args.journal, args.lock_fd) if args.lock_fd is not None else None
    try:
        run_worker(config, args.journal, lock)
    except KeyboardInterrupt:  # the supervisor reports the interrupt, once
        return INTERRUPTED
    except Recycled:  # its supervisor starts a fresh worker, which resumes after it
        return RECYCLED
    finally:
        if lock is not None:
            lock.release()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m harness", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list", help="case counts per contract and profile")
    _contracts_option(p)
    p.add_argument("--profile", choices=PROFILES, default="pr", help="with --ids: whose ids to print")
    p.add_argument("--ids", action="store_true", help="also print every case id")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("run", help="run a lane into a journal (isolated worker; resumable)")
    _run_options(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--resume", type=Path, metavar="JOURNAL",
                       help="continue this journal of the same session: cases it records are not run again")
    which.add_argument("--journal", type=Path, help=f"a new journal to write (default: in ${LANE_OUT_ENV} or "
                       "reports/out, named by lane and time)")
    p.add_argument("--ids-file", type=Path, metavar="FILE",
                   help="run only the case ids listed in this file (e.g. a re-run)")
    p.add_argument("--group-timeout", type=seconds, default=900.0, metavar="SECONDS",
                   help="how long a kernel group may go without progress before it is a Timeout (at least 1)")
    p.add_argument("--no-isolate", action="store_true", help="run in this process (no crash isolation)")
    p.add_argument("--jobs", type=positive_int, metavar="N",
                   help="parallel workers, each a shard of the kernel groups with its own journal (default: one "
                   "per GPU of --gpus, else 1)")
    p.add_argument("--gpus", metavar="all|N|ID,...", help="give worker k the GPU k mod n as its only device "
                   "(CUDA_VISIBLE_DEVICES): all listed, the first N, or ids such as 0,1 (one id: 2,)")
    p.add_argument("--balance-from", type=Path, nargs="+", metavar="JOURNAL",
                   help="a previous run's journals: assign kernel groups to shards by their measured cost "
                   "(default: contiguous slices)")
    p.add_argument("--hosts", action="append", metavar="SPEC,...", help="run the shards on these execnet gateways, "
                   "round-robin (repeatable or comma-separated; N*SPEC is N gateways): popen//python=python3, "
                   "ssh=gpu1//python=/opt/venv/bin/python; each host installs the wheels of --dist in a fresh "
                   "environment (--jobs defaults to one shard per gateway, times the GPUs of --gpus)")
    p.add_argument("--dist", type=Path, default=Path("wheels", "dist"), metavar="DIR",
                   help="with --hosts: the run's wheels and their manifest.json (default: wheels/dist)")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("worker", help="(internal) the worker process of a supervised run")
    _run_options(p)
    p.add_argument("--journal", type=Path, required=True, help="the journal to write (the supervisor holds its lock)")
    p.add_argument("--only", type=Path, metavar="FILE", help="file of the case ids to run")
    p.add_argument("--shard", type=_shard, default="1/1", help="K/N: the K-th of N slices of the kernel groups")
    p.add_argument("--balance", type=Path, metavar="FILE", help="the supervisor's table of measured group costs "
                   "(JSON) that assigns groups to shards")
    p.add_argument("--lock-fd", type=count, help="the supervisor's lock on the journal, inherited as this descriptor")
    p.add_argument("--supervised", action="store_true", help="end at once when standard input (the supervisor's "
                   "pipe) closes")
    p.set_defaults(func=cmd_worker)
    register_report(sub)
    register_bench(sub)
    register_predict(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(exc, file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, with a shell's status for SIGPIPE
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that the exit's flush does not fail too
        return 128 + signal.SIGPIPE
