"""The report commands: report, bundle, verify, nightly, baseline, diff.

``register`` adds them to the harness CLI's subparsers (``python -m harness report ...``); ``main`` runs
them alone (``python -m harness.report report ...``). Exit status: 0 success, 1 the verdict the command
checks is negative (not qualified, bundle does not verify, night failed, regression), 2 usage or input error.
Each command imports its module when it runs, so registering them costs the harness CLI (and its lane
workers) no template engine or JUnit library.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.contracts import CONTRACTS_ENV, NOT_CONTRACTS, contract_paths, contracts_dir
from harness.errors import HarnessError
from harness.expectations import Ledger, load_expectations
from harness.fingerprint import MANIFEST_ENV
from harness.options import OneLineParser, count, positive_int, seconds
from harness.report.errors import ReportError

OUT = Path("reports/out")


def journal_paths(given: Sequence[Path]) -> list[Path]:
    """Journals named, or the journals directly inside a folder named (sorted: timestamped names merge
    oldest first)."""
    from harness.report.verdicts import journals_in

    paths: list[Path] = []
    for path in given:
        if path.is_dir():
            found = journals_in(path)
            if not found:
                raise ReportError(f"{path}: no journal (*.jsonl) in this folder")
            paths += found
        elif path.is_file():
            paths.append(path)
        else:
            raise ReportError(f"{path}: no such journal or folder")
    return paths


def _default_contracts() -> Path:
    """The contracts folder the report reads when no option names one. ``$COOP_CONTRACTS`` is taken as spelled;
    the checkout's own folder, which the harness finds by an absolute path, is named relative to the working
    directory, since the report shows each input by the name it was read under and names no machine paths."""
    folder = contracts_dir()
    return folder if os.environ.get(CONTRACTS_ENV) else Path(os.path.relpath(folder))


def _in_contracts(name: str) -> Path | None:
    """The contracts folder's file ``name`` when it exists: the default of an input option."""
    path = _default_contracts() / name
    return path if path.is_file() else None


def _expectations(args: argparse.Namespace) -> Path | None:
    given: Path | None = args.expectations
    return given if args.no_expectations or given is not None else _in_contracts("expectations.toml")


def _coverage(args: argparse.Namespace) -> Path | None:
    given: Path | None = args.coverage
    return given if given is not None else _in_contracts("coverage.toml")


def _contracts(args: argparse.Namespace) -> list[Path]:
    """The contract files whose rules the report counts: those of ``--contracts``, else of the contracts folder
    (none there: no rule is counted, and the report says so)."""
    given: Path | None = args.contracts
    if given is not None:
        return contract_paths(given)
    folder = _default_contracts()
    return contract_paths(folder) if any(p.stem not in NOT_CONTRACTS for p in folder.glob("*.toml")) else []


def _ledger(args: argparse.Namespace) -> Ledger:
    """The expectations in force, as of today."""
    path = _expectations(args)
    return Ledger(load_expectations(path) if path else [])


def _manifest(args: argparse.Namespace) -> Path | None:
    given: Path | None = args.manifest
    if given is not None:
        return given
    env = os.environ.get(MANIFEST_ENV)
    return Path(env) if env else None


def _print_summary(doc: dict[str, Any]) -> None:
    summary = doc["summary"]
    print(summary["passed"])
    print(summary["not_accepted"])
    for problem in summary["problems"]:
        print(f"not qualified: {problem}", file=sys.stderr)


def cmd_report(args: argparse.Namespace) -> int:
    from harness.report.document import Inputs, Source
    from harness.report.qualification import write_report

    optional = {"expectations": _expectations(args), "manifest": _manifest(args), "coverage": _coverage(args)}
    inputs = Inputs([Source.of(p) for p in journal_paths(args.journals)],
                    **{key: Source.of(path) for key, path in optional.items() if path is not None},
                    contracts=[Source.of(p) for p in _contracts(args)])
    doc = write_report(inputs, args.out)
    _print_summary(doc)
    print(f"report: {args.out}/report.html (also .md, .json, junit.xml)")
    return 0 if doc["summary"]["qualified"] else 1


def cmd_bundle(args: argparse.Namespace) -> int:
    from harness.report import bundle

    doc = bundle.write_bundle(args.out, journal_paths(args.journals), _expectations(args), _manifest(args),
                              _coverage(args), _contracts(args))
    _print_summary(doc)
    print(f"bundle: {args.out} (check it with: python -m harness verify {args.out})")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from harness.report import bundle

    problems = bundle.verify_bundle(args.bundle)
    for problem in problems:
        print(f"{args.bundle}: {problem}", file=sys.stderr)
    if problems:
        print(f"{args.bundle}: does NOT verify ({len(problems)} problem(s))", file=sys.stderr)
        return 1
    print(f"{args.bundle}: verifies: every file matches SHA256SUMS and every count matches the journals")
    return 0


def cmd_nightly(args: argparse.Namespace) -> int:
    from harness.report import nightly
    from harness.report.baseline import read_baseline
    from harness.report.matrix import load_matrix
    from harness.report.toolchain import VenvInstaller, interpreter_of

    matrix = load_matrix(args.matrix or contracts_dir() / "nightly.toml")
    installer = VenvInstaller(args.dist, shlex.split(os.environ.get("COOP_WHEEL_INSTALL_ARGS", "")),
                              os.environ.get("VIRTUALENV_SYSTEM_SITE_PACKAGES", "") not in ("", "0", "false"),
                              interpreter_of)
    night = nightly.Night(_expectations(args), read_baseline(args.baseline) if args.baseline else None,
                          args.history or args.out / "history.jsonl", args.night or "", args.dist)
    rollup = nightly.run_nightly(matrix, args.out, only=args.only, dry_run=args.dry_run, night=night,
                                 installer=installer, lane_timeout=args.lane_timeout, rebuild=installer.rebuild)
    print(f"{rollup.verdict}: " + ", ".join(f"{n} {k}" for k, n in rollup.totals().items()))
    for result in rollup.results:
        if result.outcome in ("failed", "toolchain unavailable"):
            print(f"{result.outcome}: {result.id}: {result.reason} (log {args.out / (result.log or '')})",
                  file=sys.stderr)
    print(f"roll-up: {args.out}/nightly.md, {args.out}/nightly.json"
          + (f"; bisect: {args.out / nightly.BISECT}" if rollup.bisect else ""))
    return 1 if rollup.failed else 0


def cmd_baseline(args: argparse.Namespace) -> int:
    from harness.report.baseline import write_baseline
    from harness.report.verdicts import load_lanes

    doc = write_baseline(load_lanes(journal_paths(args.journals), ledger=_ledger(args)), args.out,
                         _expectations(args))
    print(f"baseline: {args.out} ({', '.join(doc['lanes'])})")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from harness.report import diff
    from harness.report.baseline import read_baseline
    from harness.report.verdicts import load_lanes

    ledger = _ledger(args)
    baseline = read_baseline(args.baseline)
    lanes = load_lanes(journal_paths(args.journals), ledger=ledger)
    rerun = diff.CommandRerun(shlex.split(args.rerun)) if args.rerun else None  # a bad template: before anything
    result = diff.compare(baseline, lanes)
    if rerun is not None and result.new_failures:
        result = diff.compare(baseline, lanes, diff.rerun_groups(result, lanes, rerun, ledger, args.rerun_times))
    print(result.render(args.limit))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result.to_json(), indent=1) + "\n", encoding="utf-8")
    return 1 if result.regression else 0


def _expectations_options(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--expectations", type=Path,
                       help="expectations applied to the journals' verdicts (default: the contracts folder's "
                            "expectations.toml)")
    which.add_argument("--no-expectations", action="store_true", help="apply no expectations file")


def _inputs_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("journals", type=Path, nargs="+", metavar="JOURNAL",
                        help="journal files, or folders whose *.jsonl are taken")
    _expectations_options(parser)
    parser.add_argument("--manifest", type=Path, help=f"wheel manifest JSON (default: ${MANIFEST_ENV} when set)")
    parser.add_argument("--coverage", type=Path,
                        help="coverage manifest whose every cell qualifying takes (default: the contracts folder's "
                             "coverage.toml)")
    parser.add_argument("--contracts", type=Path, metavar="DIR",
                        help="folder of the contract files whose rules the report counts as checked (default: the "
                             "contracts folder)")


def register(sub: Any) -> None:
    """Add the report commands to ``sub`` (an argparse subparsers action); each sets ``func``."""
    p = sub.add_parser("report", help="qualification report (Markdown, HTML, JSON, JUnit) from journals")
    _inputs_options(p)
    p.add_argument("--out", type=Path, default=OUT / "report", help="folder for the report files")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("bundle", help="report + journals + expectations + manifest + SHA256SUMS")
    _inputs_options(p)
    p.add_argument("--out", type=Path, required=True, help="a new folder, or a file named *.tar.gz")
    p.set_defaults(func=cmd_bundle)

    p = sub.add_parser("verify", help="check a bundle's hashes and recompute its counts from its journals")
    p.add_argument("bundle", type=Path)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("nightly", help="run the nightly matrix lanes this machine can run, then roll up")
    p.add_argument("--matrix", type=Path, help="matrix file (default: the contracts folder's nightly.toml)")
    p.add_argument("--out", type=Path, default=OUT / "nightly")
    p.add_argument("--only", metavar="PATTERN", help="run only combinations whose id matches (fnmatch)")
    p.add_argument("--dry-run", action="store_true", help="decide what would run; run nothing")
    p.add_argument("--dist", type=Path, default=Path("wheels/dist"),
                   help="the fresh wheels every lane's environment installs (%(default)s)")
    p.add_argument("--baseline", type=Path, help="committed baseline each lane is compared with")
    p.add_argument("--history", type=Path, help="history file the night is appended to (default: OUT/history.jsonl)")
    p.add_argument("--night", help="the night's name in the history, e.g. a CI run id shared by its lane jobs: runs "
                                   "of one name are one night, rolled up together (default: the time, UTC)")
    p.add_argument("--lane-timeout", type=seconds, metavar="SECONDS",
                   help="stop any lane past this many seconds, even one whose own limit is longer (e.g. what one "
                        "call to a GPU machine allows, less the environment's build)")
    _expectations_options(p)
    p.set_defaults(func=cmd_nightly)

    p = sub.add_parser("baseline", help="write the final statuses of journals as a regression baseline")
    p.add_argument("journals", type=Path, nargs="+", metavar="JOURNAL")
    p.add_argument("--out", type=Path, required=True,
                   help="e.g. reports/baselines/gpu-h200.json.gz (gzip-compressed when named .gz)")
    _expectations_options(p)
    p.set_defaults(func=cmd_baseline)

    p = sub.add_parser("diff", help="compare journals with a baseline: exit 1 on a regression")
    p.add_argument("journals", type=Path, nargs="+", metavar="JOURNAL")
    p.add_argument("--baseline", type=Path, required=True)
    _expectations_options(p)
    p.add_argument("--rerun", metavar="COMMAND",
                   help="re-run the kernel groups of new failures whole with this command ({lane}, {ids} file, "
                        "{journal} to write, and the session's {seed} {max_blocks} {profile} {arch}); a case "
                        "whose identical runs disagree is a Flake, a regression unless an expectation declares it")
    p.add_argument("--rerun-times", type=positive_int, default=3, metavar="N",
                   help="identical re-runs of each such group (%(default)s)")
    p.add_argument("--json", type=Path, help="write the whole diff here as JSON")
    p.add_argument("--limit", type=count, default=20, help="cases printed per category (%(default)s)")
    p.set_defaults(func=cmd_diff)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.report", description=__doc__)
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

