"""The per-worker wrapper: one xdist worker's interpreter run under compute-sanitizer, its exit status kept.

xdist starts a worker as ``<python> -m harness.sanitizer.wrapper CONFIG -u -c <bootstrap>`` (from
``--tx popen//python=...``). The wrapper runs ``<sanitizer flags> <python> -u -c <bootstrap>``
with this run's own XML and log files and the slot's GPU, passes the execnet pipe (stdin/stdout)
through untouched, and records the sanitizer's exit status so the lane tells a crash from findings.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.sanitizer.layout import RUN_ENV, LaneLayout, read_json, write_json
from harness.sanitizer.tools import sanitizer_command


@dataclass(frozen=True)
class WrapperConfig:
    """What one slot's wrapper needs: the sanitizer, the tool, the lane folder, the slot and its GPU."""

    executable: str
    tool: str
    root: str
    slot: str
    gpu: str
    launch_timeout: int

    def write(self, path: Path) -> None:
        write_json(path, asdict(self))

    @classmethod
    def read(cls, path: Path) -> WrapperConfig:
        return cls(**read_json(path))


def run(config: WrapperConfig, target: Sequence[str]) -> int:
    """Run ``target`` under the sanitizer; write ``status/<run>.json``; return the sanitizer's status."""
    layout = LaneLayout(Path(config.root), config.tool)
    run_id = f"{config.slot}.{os.getpid()}"
    command = sanitizer_command(config.executable, config.tool, save=str(layout.xml(run_id)),
                                log=str(layout.log(run_id)), launch_timeout=config.launch_timeout)
    env = {**os.environ, RUN_ENV: run_id, "CUDA_VISIBLE_DEVICES": config.gpu}
    proc = subprocess.Popen([*command, *target], env=env)
    # xdist ends a worker with SIGTERM at worst: pass it on rather than orphan the sanitizer.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: proc.send_signal(signum))
    status = proc.wait()
    write_json(layout.status(run_id), {"run": run_id, "slot": config.slot, "sanitizer_pid": proc.pid,
                                       "returncode": status})
    return status if status >= 0 else 128 - status


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m harness.sanitizer.wrapper CONFIG [python options...]", file=sys.stderr)
        return 2
    return run(WrapperConfig.read(Path(args[0])), [sys.executable, *args[1:]])


if __name__ == "__main__":
    sys.exit(main())
