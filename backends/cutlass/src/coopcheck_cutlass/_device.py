"""Exact-size device copies of a launch's host arrays through the CUDA runtime (cuda.bindings), in
the primary context the DSL launches in; exact sizes let memcheck see any access past an end."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from cuda.bindings import runtime as cudart


class DeviceError(RuntimeError):
    """A CUDA runtime call failed."""


def _check(result: tuple[Any, ...], what: str) -> Any:
    err, *values = result
    if err != cudart.cudaError_t.cudaSuccess:
        _, name = cudart.cudaGetErrorName(err)
        raise DeviceError(f"{what} failed: {name.decode()}")
    return values[0] if values else None


def device_count() -> int:
    """CUDA devices visible here (0 without a driver or a device)."""
    err, count = cudart.cudaGetDeviceCount()
    return count if err == cudart.cudaError_t.cudaSuccess else 0


@contextmanager
def buffers(arrays: Mapping[str, np.ndarray]) -> Iterator[dict[str, int]]:
    """Device copies of ``arrays`` (by name -> address), freed on exit."""
    addresses: dict[str, int] = {}
    try:
        for name, array in arrays.items():
            host = np.ascontiguousarray(array)
            if not host.nbytes:
                addresses[name] = 0
                continue
            addresses[name] = int(_check(cudart.cudaMalloc(host.nbytes), f"cudaMalloc({name})"))
            _check(cudart.cudaMemcpy(addresses[name], host.ctypes.data, host.nbytes,
                                     cudart.cudaMemcpyKind.cudaMemcpyHostToDevice), f"copy of {name} to the device")
        yield addresses
    finally:
        for address in addresses.values():
            if address:
                cudart.cudaFree(address)


def synchronize() -> None:
    """Wait for the launch; a kernel fault surfaces here."""
    _check(cudart.cudaDeviceSynchronize(), "the kernel")


def read(address: int, like: np.ndarray) -> np.ndarray:
    """A host copy of the device array at ``address`` with the shape and dtype of ``like``."""
    out = np.empty_like(like)
    if out.nbytes:
        _check(cudart.cudaMemcpy(out.ctypes.data, address, out.nbytes,
                                 cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost), "copy of the output to the host")
    return out
