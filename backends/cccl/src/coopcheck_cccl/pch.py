"""NVRTC's automatic precompiled headers (``-pch``) for cuda.coop's compiles: CUB's headers parsed once a process.

cuda.coop 1.1.1 compiles each specialization as a few lines of C++ after an ``#include`` of CUB, and parsing
those headers is most of NVRTC's time (about 0.5 s of 0.6 s). Its compile builds a fixed option list, so the
option is added at the one call that takes options, ``nvrtcCompileProgram``, through a stand-in for the
``nvrtc`` binding its module calls; everything else, and the LTO-IR produced, stays as published (byte for
byte: ``tests/compile/test_pch.py``). The precompiled headers live in a directory of this process's own, so
parallel workers never share a half-written one. ``COOP_CCCL_PCH=0`` turns it off.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV = "COOP_CCCL_PCH"
OPTIONS = (b"-pch",)
#: What NVRTC's log says when a compile starts from a header set precompiled before.
USED = b"using precompiled header"

_process_directory: Path | None = None


@dataclass
class PchStats:
    """This context's compiles that precompiled a header set, and those that started from one."""

    created: int = 0
    used: int = 0


class _Binding:
    """``cuda.bindings.nvrtc`` as cuda.coop's compile sees it: ``nvrtcCompileProgram`` with ``options`` added
    (and, given ``stats``, counted from each program's PCH status and log), every other name the binding's own."""

    def __init__(self, nvrtc: Any, options: Sequence[bytes], stats: PchStats | None) -> None:
        self._nvrtc, self._options, self._stats = nvrtc, list(options), stats

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nvrtc, name)

    def nvrtcCompileProgram(self, prog: Any, count: int, options: Sequence[bytes]) -> Any:
        every = [*options[:count], *self._options]
        result = self._nvrtc.nvrtcCompileProgram(prog, len(every), every)
        if self._stats is not None:
            self._count(prog, self._stats)
        return result

    def _count(self, prog: Any, stats: PchStats) -> None:
        success = self._nvrtc.nvrtcResult.NVRTC_SUCCESS
        if self._nvrtc.nvrtcGetPCHCreateStatus(prog)[0] == success:
            stats.created += 1
        err, size = self._nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        if err == success and self._nvrtc.nvrtcGetProgramLog(prog, log)[0] == success and USED in log:
            stats.used += 1


@contextmanager
def precompiled_headers(module: Any, directory: Path | None = None, options: Sequence[bytes] = OPTIONS,
                        count: bool = False) -> Iterator[PchStats | None]:
    """While inside, ``module`` (cuda.coop's ``_nvrtc``) compiles with ``options`` and the PCH ``directory``
    (default: this process's own). Yields, with ``count``, the compiles that precompiled or used a header set
    (three more NVRTC calls a compile, so only a check asks); else, or when ``COOP_CCCL_PCH=0`` leaves the module
    as it is, None."""
    if os.environ.get(ENV, "1") == "0":
        yield None
        return
    stats = PchStats() if count else None
    where = directory or _own_directory()
    added = [*options, f"--pch-dir={where}".encode()] if options else []
    original = module.nvrtc
    module.nvrtc = _Binding(original, added, stats)
    try:
        yield stats
    finally:
        module.nvrtc = original


def _own_directory() -> Path:
    """A temporary directory for this process's precompiled headers, removed at exit."""
    global _process_directory
    if _process_directory is None:
        _process_directory = Path(tempfile.mkdtemp(prefix="coopcheck-pch-"))
        atexit.register(shutil.rmtree, _process_directory, ignore_errors=True)
    return _process_directory
