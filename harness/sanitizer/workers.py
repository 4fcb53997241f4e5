"""How many sanitized pytest-xdist workers a lane runs, the GPU of each (:mod:`harness.gpus`) and its ``--tx``
spec."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from harness.gpus import spread
from harness.sanitizer import SanitizerLaneError

#: Workers per lane at most, by default: compiling kernels is the CPU-bound part of a lane.
MAX_DEFAULT_WORKERS = 8


def default_workers(gpus: int, cpus: int | None = None) -> int:
    """One per GPU at least; else half the cores, at most :data:`MAX_DEFAULT_WORKERS`."""
    return max(gpus, min((cpus or os.cpu_count() or 2) // 2, MAX_DEFAULT_WORKERS))


@dataclass(frozen=True)
class Slot:
    """One ``--tx`` worker spec: its name (in file names) and its GPU."""

    name: str
    gpu: str


def plan_slots(gpus: list[str], workers: int) -> list[Slot]:
    """``workers`` slots, round-robin over ``gpus``.

    >>> plan_slots(["0", "1"], 3)
    [Slot(name='w0', gpu='0'), Slot(name='w1', gpu='1'), Slot(name='w2', gpu='0')]
    """
    if workers < 1:
        raise SanitizerLaneError(f"--workers must be at least 1, got {workers}")
    return [Slot(f"w{i}", gpu) for i, gpu in enumerate(spread(gpus, workers))]


def tx_spec(python: str, config: str) -> str:
    """``--tx`` for one slot: xdist runs the worker through the wrapper (execnet splits it with shlex)."""
    if "//" in python + config:
        raise SanitizerLaneError(f"a path with '//' cannot ride in an xdist --tx spec: {python} {config}")
    return f"popen//python={shlex.join([python, '-m', 'harness.sanitizer.wrapper', config])}"
