"""Command lines per tool and per worker: sanitizer flags, the wrapper's run, GPUs and xdist specs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import execnet
import pytest
from execnet.gateway_io import popen_args

from harness.lanes import SANITIZER_TOOLS
from harness.sanitizer import SanitizerLaneError
from harness.sanitizer.lane import LaneOptions, lane_slots
from harness.sanitizer.layout import LaneLayout, read_json
from harness.sanitizer.tools import CONTROLS, ERROR_EXITCODE, TOOL_FLAGS, sanitizer_command
from harness.sanitizer.workers import Slot, default_workers, plan_slots, tx_spec
from harness.sanitizer.wrapper import WrapperConfig

COMMON = ["--print-limit", "0", "--error-exitcode", str(ERROR_EXITCODE), "--target-processes", "all",
          "--launch-timeout", "120", "--check-exit-code", "yes", "--require-cuda-init", "no",
          "--destroy-on-device-error", "kernel"]


@pytest.mark.parametrize(("tool", "specific"), [
    ("racecheck", ["--racecheck-report", "hazard", "--racecheck-detect-level", "warn"]),
    ("memcheck", ["--report-api-errors", "no", "--padding", "32"]),
    ("initcheck", []),
    ("synccheck", []),
])
def test_command_line_per_tool(tool: str, specific: list[str]) -> None:
    command = sanitizer_command("/opt/cs", tool, save="x/t.w0.1.xml", log="l/t.w0.1.log")
    assert command == ["/opt/cs", "--tool", tool, *COMMON, *specific,
                       "--xml", "--save", "x/t.w0.1.xml", "--log-file", "l/t.w0.1.log"]


def test_unknown_tool_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown sanitizer tool 'leakcheck'"):
        sanitizer_command("cs", "leakcheck", save="a", log="b")


def test_every_lane_tool_has_flags_and_one_control_named_for_it() -> None:
    assert set(TOOL_FLAGS) == set(CONTROLS) == set(SANITIZER_TOOLS)
    for tool, control in CONTROLS.items():
        assert control.id.startswith(f"control/{tool}/") and control.tool == tool
        assert control.symbol.startswith("coop_control_")
    assert len({c.symbol for c in CONTROLS.values()}) == len(CONTROLS)


RECORDER = """\
import json, os, subprocess, sys
args = sys.argv[1:]
target = args[args.index("--log-file") + 2:]
with open(os.environ["RECORD_TO"], "w") as fh:
    json.dump({"argv": args, "run": os.environ["COOP_SANITIZER_RUN"],
               "gpu": os.environ["CUDA_VISIBLE_DEVICES"]}, fh)
sys.exit(subprocess.call(target) or int(os.environ.get("EXIT", "0")))
"""


@pytest.mark.parametrize("exit_status", [0, ERROR_EXITCODE])
def test_the_wrapper_runs_its_worker_under_the_tool_and_keeps_the_status(
        tmp_path: Path, executable: Callable[[str, str], Path], monkeypatch: pytest.MonkeyPatch,
        exit_status: int) -> None:
    layout = LaneLayout(tmp_path / "lane", "memcheck")
    layout.prepare()
    config = WrapperConfig(str(executable("cs", RECORDER)), "memcheck", str(layout.root), "w1", "3", 120)
    config.write(layout.wrapper_config("w1"))
    monkeypatch.setenv("RECORD_TO", str(tmp_path / "seen.json"))
    monkeypatch.setenv("EXIT", str(exit_status))
    # As xdist starts a worker: the wrapper's module, its config, then the interpreter's options.
    target = ["-c", "import sys; sys.stdout.write(sys.stdin.read().upper())"]
    worker = subprocess.run([sys.executable, "-m", "harness.sanitizer.wrapper", str(layout.wrapper_config("w1")),
                             *target], input="channel", capture_output=True, text=True, check=False)
    assert (worker.returncode, worker.stdout) == (exit_status, "CHANNEL")
    (status,) = layout.statuses()
    card = read_json(status)
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert card["run"] == seen["run"] == status.stem and card["run"].startswith("w1.")
    assert card["returncode"] == exit_status and card["slot"] == "w1" and seen["gpu"] == "3"
    flags = sanitizer_command(config.executable, "memcheck", save=str(layout.xml(card["run"])),
                              log=str(layout.log(card["run"])))[1:]
    assert seen["argv"] == [*flags, sys.executable, *target]


def test_slots_spread_workers_over_gpus() -> None:
    assert plan_slots(["0"], 2) == [Slot("w0", "0"), Slot("w1", "0")]
    assert plan_slots(["4", "6"], 3) == [Slot("w0", "4"), Slot("w1", "6"), Slot("w2", "4")]
    with pytest.raises(SanitizerLaneError, match="--workers must be at least 1"):
        plan_slots(["0"], 0)
    assert (default_workers(1, 16), default_workers(1, 64), default_workers(8, 16), default_workers(1, 2)) == \
        (8, 8, 8, 1)


def test_tx_spec_starts_the_wrapper_with_its_config() -> None:
    spec = execnet.XSpec(tx_spec("/env/bin/python", "/lane dir/wrappers/w0.json"))
    assert spec.popen and popen_args(spec)[:4] == ["/env/bin/python", "-m", "harness.sanitizer.wrapper",
                                                   "/lane dir/wrappers/w0.json"]
    with pytest.raises(SanitizerLaneError, match="'//'"):
        tx_spec("/env//python", "w0.json")


def test_gpus_narrows_the_gpus_a_lane_spreads_its_workers_over() -> None:
    env = {"CUDA_VISIBLE_DEVICES": "4,6"}
    assert lane_slots(LaneOptions("racecheck", Path("o"), workers=3), env) == (
        ["4", "6"], [Slot("w0", "4"), Slot("w1", "6"), Slot("w2", "4")])
    assert lane_slots(LaneOptions("racecheck", Path("o"), workers=2, gpus="1"), env) == (
        ["4"], [Slot("w0", "4"), Slot("w1", "4")])
    assert lane_slots(LaneOptions("racecheck", Path("o"), workers=1, gpus="6,"), env)[1] == [Slot("w0", "6")]
