"""Compiling without a GPU: numba-cuda to PTX for a named architecture, then nvJitLink to a cubin.

The route needs only pip packages: libNVVM and NVRTC (``nvidia-nvvm``, ``nvidia-cuda-nvrtc``)
for numba, and nvJitLink (``nvidia-nvjitlink``, through ``cuda.bindings``) instead of ptxas.
The PTX version follows the NVVM found; it must not exceed what the target driver accepts.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import SimpleNamespace
from typing import Any

#: The newest PTX that CUDA 13.0 accepts (its ptxas, and the 580 drivers of the GPU hosts).
MAX_PTX_VERSION = (9, 0)
#: What to install when NVVM emits newer PTX (numba-cuda[cu13] alone resolves the newest 13.x).
PINNED_TOOLCHAIN = "nvidia-nvvm==13.0.88 nvidia-cuda-nvrtc==13.0.88 nvidia-nvjitlink==13.0.88"

_ARCH = re.compile(r"sm_(\d+)(\d)([af]?)")
_PTX_VERSION = re.compile(r"^\.version\s+(\d+)\.(\d+)", re.M)


class ToolchainError(RuntimeError):
    """The device toolchain is missing, too new, or failed on a kernel (the message names which)."""


def compute_capability(arch: str) -> tuple[int, int]:
    """``"sm_90"`` -> ``(9, 0)``.

    >>> compute_capability("sm_90"), compute_capability("sm_100")
    ((9, 0), (10, 0))
    """
    match = _ARCH.fullmatch(arch)
    if not match:
        raise ToolchainError(f"arch {arch!r} is not of the form sm_XY")
    return int(match[1]), int(match[2])


def ptx_version(ptx: str) -> tuple[int, int]:
    """The ``.version`` directive of a PTX module."""
    match = _PTX_VERSION.search(ptx)
    if not match:
        raise ToolchainError("PTX without a .version directive")
    return int(match[1]), int(match[2])


def compile_ptx(function: Any, signature: tuple[Any, ...], arch: str, label: str) -> str:
    """PTX of the kernel ``function`` for ``arch``, checked against :data:`MAX_PTX_VERSION`."""
    from numba import cuda

    cc = compute_capability(arch)
    with _device_functions_for(cc):
        ptx, _ = cuda.compile_ptx(function, signature, cc=cc)
    check_ptx_version(ptx, label)
    return str(ptx)


def check_ptx_version(ptx: str, label: str) -> None:
    """Refuse PTX newer than :data:`MAX_PTX_VERSION`, saying which packages to pin."""
    found = ptx_version(ptx)
    if found > MAX_PTX_VERSION:
        raise ToolchainError(
            f"{label}: NVVM emitted PTX {found[0]}.{found[1]}, newer than the "
            f"{MAX_PTX_VERSION[0]}.{MAX_PTX_VERSION[1]} that CUDA 13.0 drivers load; "
            f"install {PINNED_TOOLCHAIN}"
        )


def link_cubin(ptx: str, arch: str, label: str) -> bytes:
    """Assemble ``ptx`` into a cubin for ``arch`` with nvJitLink."""
    try:
        from cuda.bindings import nvjitlink
        handle = nvjitlink.create(1, [f"-arch={arch}"])
    except Exception as error:  # a missing library surfaces as one of several loader errors
        raise ToolchainError(f"{label}: nvJitLink is not available ({error}); install "
                             f"nvidia-nvjitlink==13.0.88") from error
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), label)
        nvjitlink.complete(handle)
        cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
    except nvjitlink.nvJitLinkError as error:
        size = nvjitlink.get_error_log_size(handle)
        log = bytearray(size)
        if size:
            nvjitlink.get_error_log(handle, log)
        raise ToolchainError(f"{label}: nvJitLink failed for {arch}: {error}\n"
                             f"{log.decode(errors='replace')}") from error
    finally:
        nvjitlink.destroy(handle)
    return bytes(cubin)


@functools.cache
def fingerprint() -> str:
    """Identity of everything that shapes the artifacts: the source of this package and of the shared ABI package
    its kernels import (tile lengths, warp lanes, rules), and the toolchain.

    Keys the on-disk artifact cache, so a changed kernel source or toolchain never reuses an entry.
    """
    import coopcheck
    from coopcheck.cachefiles import add_sources
    from cuda.pathfinder import load_nvidia_dynamic_lib

    import coopcheck_numba

    digest = hashlib.sha256()
    add_sources(digest, coopcheck_numba, coopcheck)
    for distribution in ("numba-cuda", "numba", "llvmlite", "cuda-bindings"):
        digest.update(f"{distribution}={_version_of(distribution)}\0".encode())
    for library in ("nvvm", "nvJitLink"):
        path = Path(load_nvidia_dynamic_lib(library).abs_path)
        stat = path.stat()
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _version_of(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "absent"


@contextlib.contextmanager
def _device_functions_for(cc: tuple[int, int]) -> Iterator[None]:
    """Let numba type device functions without a GPU.

    numba-cuda 0.30 lowers every ``cuda.jit(device=True)`` callee for the *current GPU's*
    compute capability (``CUDADispatcher.compile_device``), even inside ``compile_ptx``; with no
    GPU that raises. Answer with the kernel's own target instead, under numba's compiler lock.
    (numba caches a callee per argument types, not per capability: one process, one target.)
    """
    from numba.cuda import dispatcher
    from numba.cuda.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        saved = dispatcher.get_current_device
        dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
        try:
            yield
        finally:
            dispatcher.get_current_device = saved
