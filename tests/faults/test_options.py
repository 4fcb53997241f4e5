"""Item 4: every option value is checked where it is parsed; a bad one is one line naming the option and the
range it takes (exit 2), before anything runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from harness.cli import build_parser
from harness.sanitizer.lane import build_parser as sanitizer_parser
from tests.faults import figures

DIFF = ["diff", "j.jsonl", "--baseline", "b.json"]
BAD_OPTIONS: list[tuple[Callable[[], argparse.ArgumentParser], list[str], str]] = [
    (build_parser, ["run", "--group-timeout", "-1"], "argument --group-timeout: -1 is less than 1 (seconds)"),
    (build_parser, ["run", "--group-timeout", "0"], "argument --group-timeout: 0 is less than 1 (seconds)"),
    (build_parser, ["run", "--group-timeout", "0.5"], "argument --group-timeout: 0.5 is less than 1 (seconds)"),
    (build_parser, ["run", "--group-timeout", "nan"], "argument --group-timeout: nan is not a finite number"),
    (build_parser, ["run", "--group-timeout", "inf"], "argument --group-timeout: inf is not a finite number"),
    (build_parser, ["run", "--group-timeout", "soon"], "argument --group-timeout: 'soon' is not a number"),
    (build_parser, ["run", "--max-blocks", "0"], "argument --max-blocks: 0 is less than 1"),
    (build_parser, ["run", "--worker-memory", "-1"], "argument --worker-memory: -1 is less than 0 (GiB)"),
    (build_parser, ["run", "--worker-memory", "inf"], "argument --worker-memory: inf is not a finite number of GiB"),
    (build_parser, ["run", "--worker-memory", "lots"], "argument --worker-memory: 'lots' is not a number of GiB"),
    (build_parser, ["run", "--max-blocks", "4k"], "argument --max-blocks: '4k' is not a whole number"),
    (build_parser, ["run", "--jobs", "-2"], "argument --jobs: -2 is less than 1"),
    (build_parser, ["run", "--seed", "0x10"], "argument --seed: '0x10' is not a whole number"),
    (build_parser, ["run", "--arch", "90"], "argument --arch: '90' is not a GPU architecture like sm_90"),
    (build_parser, ["worker", "--journal", "j", "--shard", "3/2"], "argument --shard: '3/2' is not K/N"),
    (build_parser, [*DIFF, "--limit", "-1"], "argument --limit: -1 is less than 0"),
    (build_parser, [*DIFF, "--rerun-times", "0"], "argument --rerun-times: 0 is less than 1"),
    (sanitizer_parser, ["lane", "--tool", "racecheck", "--workers", "0"], "argument --workers: 0 is less than 1"),
    (sanitizer_parser, ["lane", "--tool", "racecheck", "--launch-timeout", "-5"],
     "argument --launch-timeout: -5 is less than 1"),
    (sanitizer_parser, ["lane", "--tool", "racecheck", "--lane-timeout", "nan"],
     "argument --lane-timeout: nan is not a finite number"),
]


@pytest.mark.parametrize(("parser", "argv", "message"), BAD_OPTIONS, ids=[" ".join(a) for _, a, _ in BAD_OPTIONS])
def test_a_bad_option_value_is_one_line_naming_the_option_and_its_range(
        parser: Callable[[], argparse.ArgumentParser], argv: list[str], message: str,
        capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest) -> None:
    try:
        parser().parse_args(argv)
        code: object = "parsed"
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    refused = code == 2 and err.count("\n") == 1 and message in err and "Traceback" not in err
    figures.add(request.node, bad_inputs=1, bad_inputs_refused=int(refused))
    assert (code, err.count("\n")) == (2, 1), err
    assert message in err
