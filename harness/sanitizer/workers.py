"""Which GPUs a lane spreads its sanitized pytest-xdist workers over, and the ``--tx`` spec of each.

GPUs are counted without initializing CUDA in this process (``nvidia-smi -L``), or taken from
``CUDA_VISIBLE_DEVICES`` when that is set; worker ``i`` gets GPU ``i mod n`` as its only device.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from harness.sanitizer import SanitizerLaneError

#: Workers per lane at most, by default: compiling kernels is the CPU-bound part of a lane.
MAX_DEFAULT_WORKERS = 8


def gpu_ids(env: Mapping[str, str]) -> list[str]:
    """Device ids to hand out: ``CUDA_VISIBLE_DEVICES`` if set, else one per ``GPU n:`` line of nvidia-smi."""
    if "CUDA_VISIBLE_DEVICES" in env:
        ids = [d.strip() for d in env["CUDA_VISIBLE_DEVICES"].split(",") if d.strip()]
        if not ids:
            raise SanitizerLaneError("CUDA_VISIBLE_DEVICES is set but names no device; unset it or name one")
        return ids
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SanitizerLaneError(f"cannot list GPUs with `nvidia-smi -L`: {exc}") from None
    listed = [line for line in out.stdout.splitlines() if line.startswith("GPU ")]
    ids = [str(i) for i in range(len(listed))]
    if out.returncode != 0 or not ids:
        raise SanitizerLaneError(f"`nvidia-smi -L` lists no GPU (exit status {out.returncode}); "
                                 "a sanitizer lane needs one")
    return ids


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
    return [Slot(f"w{i}", gpus[i % len(gpus)]) for i in range(workers)]


def tx_spec(python: str, config: str) -> str:
    """``--tx`` for one slot: xdist runs the worker through the wrapper (execnet splits it with shlex)."""
    if "//" in python + config:
        raise SanitizerLaneError(f"a path with '//' cannot ride in an xdist --tx spec: {python} {config}")
    return f"popen//python={shlex.join([python, '-m', 'harness.sanitizer.wrapper', config])}"
