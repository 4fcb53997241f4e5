"""Which GPUs a run spreads its worker processes over (``--gpus``), each worker seeing one as its only device.

GPUs are listed without initializing CUDA in this process (``nvidia-smi -L``), or taken from
``CUDA_VISIBLE_DEVICES`` when that is set; worker ``i`` of a run gets GPU ``i mod n``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping

from harness.errors import HarnessError

#: What a worker process is told its one device is; a journal's session record keeps what its worker saw.
VISIBLE_ENV = "CUDA_VISIBLE_DEVICES"


def gpu_ids(env: Mapping[str, str]) -> list[str]:
    """Device ids to hand out: ``CUDA_VISIBLE_DEVICES`` if set, else one per ``GPU n:`` line of nvidia-smi."""
    if VISIBLE_ENV in env:
        ids = [d.strip() for d in env[VISIBLE_ENV].split(",") if d.strip()]
        if not ids:
            raise HarnessError(f"{VISIBLE_ENV} is set but names no device; unset it or name one")
        return ids
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise HarnessError(f"cannot list GPUs with `nvidia-smi -L`: {exc}") from None
    listed = [line for line in out.stdout.splitlines() if line.startswith("GPU ")]
    ids = [str(i) for i in range(len(listed))]
    if out.returncode != 0 or not ids:
        raise HarnessError(f"`nvidia-smi -L` lists no GPU (exit status {out.returncode}); a run on GPUs needs one")
    return ids


def select_gpus(given: str, env: Mapping[str, str]) -> list[str]:
    """``--gpus``: ``all`` (every listed GPU), a count ``N`` (the first N listed), or a comma-separated list of
    ids (``0,1``; one id alone is written ``2,``, since a bare number is a count), as CUDA_VISIBLE_DEVICES
    takes them (indices, UUIDs, MIG ids)."""
    given = given.strip()
    if given == "all":
        return gpu_ids(env)
    if given.isdigit():
        if int(given) < 1:
            raise HarnessError(f"--gpus {given}: name at least one GPU (all, a count, or ids such as 0,1)")
        listed = gpu_ids(env)
        if int(given) > len(listed):
            raise HarnessError(f"--gpus {given}: only {len(listed)} GPU(s) listed ({', '.join(listed)}); "
                               "name fewer, or the ids to use")
        return listed[:int(given)]
    ids = [d.strip() for d in given.split(",") if d.strip()]
    if not ids:
        raise HarnessError(f"--gpus {given!r}: names no GPU (all, a count, or ids such as 0,1)")
    twice = next((d for i, d in enumerate(ids) if d in ids[:i]), None)
    if twice is not None:
        raise HarnessError(f"--gpus {given!r}: GPU {twice} named twice; for several workers per GPU use --jobs")
    return ids


def spread(gpus: list[str], workers: int) -> list[str]:
    """The GPU of each of ``workers`` workers, round-robin.

    >>> spread(["0", "1"], 3)
    ['0', '1', '0']
    """
    return [gpus[i % len(gpus)] for i in range(workers)]
