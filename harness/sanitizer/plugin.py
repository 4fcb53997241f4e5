"""pytest plugin of the sanitizer lanes: the tool's positive control item, and each worker's process card.

Enabled by the lane driver with ``-p harness.sanitizer.plugin --coop-sanitizer-tool T
--coop-sanitizer-dir DIR``. A worker run under the wrapper (``COOP_SANITIZER_RUN`` set) writes
``processes/<pid>.json`` naming its run, so the run's XML maps to this pid's launches. The control
item (node id ``control/<tool>/<bug>``) records its launch in ``controls/<worker>.jsonl`` before
launching, in the format of the case ledger.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from harness.journal import JournalWriter, LaunchRecord
from harness.sanitizer.layout import RUN_ENV, LaneLayout, write_json
from harness.sanitizer.tools import CONTROLS, Control

LAYOUT = pytest.StashKey[LaneLayout]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("coopcheck", "coop conformance cases")
    group.addoption("--coop-sanitizer-tool", choices=sorted(CONTROLS),
                    help="the compute-sanitizer tool this session runs under: adds its positive control")
    group.addoption("--coop-sanitizer-dir", type=Path, help="the lane folder (set by the lane driver)")
    group.addoption("--coop-sanitizer-exit-timeout", type=float, metavar="SECONDS",
                    help="how long xdist waits for a sanitized worker to come down before killing it (set by the "
                         "lane driver: the sanitizer analyses and writes its report after the worker exits)")


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "coop_control: a planted positive control of a sanitizer lane")
    tool, folder = config.getoption("coop_sanitizer_tool"), config.getoption("coop_sanitizer_dir")
    if not tool:
        return
    if folder is None:
        raise pytest.UsageError("--coop-sanitizer-tool needs --coop-sanitizer-dir (the driver sets both)")
    layout = config.stash[LAYOUT] = LaneLayout(folder, tool)
    exit_timeout = config.getoption("coop_sanitizer_exit_timeout")
    if exit_timeout is not None and not hasattr(config, "workerinput"):
        _give_workers_time_to_exit(exit_timeout)
    run = os.environ.get(RUN_ENV)
    if run:
        write_json(layout.process_card(os.getpid()), {"pid": os.getpid(), "run": run, "worker": _worker()})


def _give_workers_time_to_exit(seconds: float) -> None:
    """xdist ends its workers with ``NodeManager.EXIT_TIMEOUT`` (10 s) to come down and then kills them. A
    sanitized worker's process is its wrapper, which outlives the interpreter by the sanitizer's analysis at
    exit; killed, it leaves no exit status and the tool's report may be unwritten, so the lane loses every
    record (seen on a loaded H200: all eight wrappers killed, the control unseen). This controller waits longer;
    xdist has no option for it."""
    from xdist.workermanage import NodeManager

    NodeManager.EXIT_TIMEOUT = max(NodeManager.EXIT_TIMEOUT, seconds)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    if LAYOUT not in config.stash:
        return
    control = CONTROLS[config.stash[LAYOUT].tool]
    item = ControlItem.from_parent(session, name=control.id, nodeid=control.id, control=control)
    item.add_marker(pytest.mark.coop_control)
    items.append(item)


class ControlItem(pytest.Item):
    """Launches the planted bug once; whether the sanitizer saw it is judged from its XML afterwards."""

    def __init__(self, *, control: Control, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.control = control

    def runtest(self) -> None:
        from harness.sanitizer.controls import LAUNCHERS, LaunchError  # numba: only here, in a sanitizer lane

        layout = self.config.stash[LAYOUT]
        with JournalWriter(layout.control_ledger(_worker())) as ledger:
            ledger.write(LaunchRecord(self.control.symbol, (self.control.id,), 1))
        try:
            LAUNCHERS[layout.tool]()
        except LaunchError as exc:  # the sanitizer may end the planted kernel: its XML is the verdict
            self.user_properties.append(("launch", f"{type(exc).__name__}: {exc}".splitlines()[0]))
        self.user_properties.append(("plants", self.control.plants))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(__file__), None, self.control.id
