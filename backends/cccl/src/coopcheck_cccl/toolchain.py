"""What the backend compiles with, read from installed package metadata and files (nothing is imported).

cuda.coop compiles CUB from the headers bundled in its own wheel, so the CCCL version that matters is the
wheel's ``cuda/std/__cccl/version.h``, not any CUDA toolkit's.
"""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, files, version

from coopcheck import BackendUnavailable

from coopcheck_cccl import CUDA_CCCL

VERSION_HEADER = "cuda/std/__cccl/version.h"
_DEFINE = re.compile(r"^#define\s+CCCL_VERSION\s+(\d+)\s*$", re.M)


def require_cuda_cccl() -> None:
    """Raise :class:`coopcheck.BackendUnavailable` unless cuda-cccl :data:`CUDA_CCCL` is installed."""
    try:
        found = version("cuda-cccl")
    except PackageNotFoundError:
        found = None
    if found != CUDA_CCCL:
        raise BackendUnavailable("cccl", {"cuda.coop": f"cuda-cccl=={CUDA_CCCL}"})


def cccl_version(header: str) -> str:
    """``3005000`` in ``#define CCCL_VERSION`` -> ``"3.5.0"`` (major * 10**6 + minor * 10**3 + patch).

    >>> cccl_version("#define CCCL_VERSION 3005000\\n")
    '3.5.0'
    """
    match = _DEFINE.search(header)
    if match is None:
        raise ValueError(f"{VERSION_HEADER}: no '#define CCCL_VERSION <number>' line")
    number = int(match[1])
    return f"{number // 1_000_000}.{number // 1000 % 1000}.{number % 1000}"


def bundled_header() -> str:
    """The text of the version header in the installed cuda-cccl wheel."""
    found = [f for f in files("cuda-cccl") or () if str(f).endswith("/include/" + VERSION_HEADER)]
    if len(found) != 1:
        raise FileNotFoundError(f"cuda-cccl {version('cuda-cccl')} lists {len(found)} copies of {VERSION_HEADER}")
    return found[0].read_text(encoding="utf-8")


def versions() -> dict[str, str]:
    """The cuda-cccl release and the CCCL version of the headers it bundles (those cuda.coop compiles)."""
    return {"cuda-cccl": version("cuda-cccl"), "cccl": cccl_version(bundled_header())}
