"""Loading the fatbin into the current CUDA context and launching its kernels through ``cuda.bindings``.

``cuda.bindings.driver`` is imported on first use, never at import. A fatbin without an image
the device can run is refused before ``cuModuleLoadData`` with the archs it has; every driver
failure becomes :class:`LoaderError` naming the kernel and the ``CUresult``. Device buffers are
allocated at the exact byte size of their host array (an output's: of its length), so memcheck sees
any access past the end.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from coopcheck import fatbin

from coopcheck_rustfatbin.bundle import Bundle, LoaderError

#: Byte written over a Load's output before launch, so a slot the kernel fails to write shows.
UNWRITTEN = 0xA5
#: Dynamic shared memory a launch gets without opting in through a function attribute.
DEFAULT_DYNAMIC_SHARED = 48 * 1024


@dataclass(frozen=True)
class In:
    """A host array copied to the device before launch."""

    array: Any


@dataclass(frozen=True)
class InOut:
    """A host array copied to the device before launch and back (into a copy) after it."""

    array: Any


@dataclass(frozen=True)
class Out:
    """A device buffer of ``length`` elements of ``dtype``, filled with :data:`UNWRITTEN`, copied back after launch
    into a new host array."""

    length: int
    dtype: str

    @property
    def nbytes(self) -> int:
        return self.length * np.dtype(self.dtype).itemsize


Arg = In | InOut | Out | int  # an int travels as int64_t


def _driver() -> Any:
    from cuda.bindings import driver

    return driver


def _check(result: tuple[Any, ...], call: str, kernel: str) -> Any:
    """The values of a driver call's result, or :class:`LoaderError` naming call, kernel and CUresult."""
    driver = _driver()
    error, *values = result
    if error != driver.CUresult.CUDA_SUCCESS:
        name_error, name = driver.cuGetErrorName(error)
        label = name.decode() if name_error == driver.CUresult.CUDA_SUCCESS else f"CUresult {int(error)}"
        raise LoaderError(f"{kernel}: {call} failed with {label}")
    return values[0] if len(values) == 1 else tuple(values)


def device_count() -> int:
    """CUDA devices visible here; 0 without the driver or ``cuda-bindings``."""
    try:
        driver = _driver()
        if driver.cuInit(0)[0] != driver.CUresult.CUDA_SUCCESS:
            return 0
        error, count = driver.cuDeviceGetCount()
    except (ImportError, RuntimeError):  # no cuda-bindings, or no driver library (libcuda) to load
        return 0
    return int(count) if error == driver.CUresult.CUDA_SUCCESS else 0


def loadable(entries: Sequence[fatbin.Entry], major: int, minor: int) -> bool:
    """Whether a device of capability ``major.minor`` can run one of ``entries``: SASS of its own
    major version and an arch no newer than it, or PTX of an arch no newer than it (JIT).

    >>> elf90 = fatbin.Entry(fatbin.KIND_ELF, 90, (1, 8), 0x11, 0, 64, 0, 0, 0)
    >>> loadable([elf90], 9, 0), loadable([elf90], 10, 0), loadable([elf90], 8, 6)
    (True, False, False)
    """
    sm = major * 10 + minor
    return any(
        (e.kind == fatbin.KIND_ELF and e.arch // 10 == major and e.arch <= sm)
        or (e.kind == fatbin.KIND_PTX and e.arch <= sm)
        for e in entries
    )


class Module:
    """The bundle's fatbin loaded into the current context (the primary one when none is current)."""

    def __init__(self, bundle: Bundle) -> None:
        driver = _driver()
        where = str(bundle.path)
        self.context = _current_context(driver, where)
        major, minor = _capability(driver, where)
        self.arch = f"sm_{major}{minor}"
        if not loadable(bundle.entries, major, minor):
            raise LoaderError(
                f"{where}: nothing in it runs on this {self.arch} device: it holds {bundle.describe()} "
                f"(SASS runs only within its major version, PTX on its arch or newer); rebuild with "
                f"COOP_CUDA_ARCHS including {major}.{minor}"
            )
        self.module = _check(driver.cuModuleLoadData(bundle.data), "cuModuleLoadData", where)
        self._functions: dict[str, Any] = {}
        self._shared_opt_in: dict[str, int] = {}

    def function(self, symbol: str) -> Any:
        if symbol not in self._functions:
            driver = _driver()
            self._functions[symbol] = _check(
                driver.cuModuleGetFunction(self.module, symbol.encode()), "cuModuleGetFunction", symbol
            )
        return self._functions[symbol]

    def run(
        self,
        symbol: str,
        *,
        grid: int,
        block: tuple[int, ...],
        shared_bytes: int,
        args: Sequence[Arg],
        stream: Any = None,
    ) -> list[Any]:
        """Launch ``symbol`` on ``grid`` x 1 x 1 blocks and wait; return host copies of the Out/InOut args.

        ``stream`` is a ``CUstream`` or a raw handle; when None, torch's current stream if the
        caller has imported torch, else the legacy default stream.
        """
        driver = _driver()
        hstream = driver.CUstream(_stream_handle(stream))
        _check(driver.cuCtxSetCurrent(self.context), "cuCtxSetCurrent", symbol)
        function = self.function(symbol)
        self._allow_shared(symbol, function, shared_bytes)
        with _DeviceArgs(symbol, args, hstream) as device:
            dims = (*block, 1, 1)[:3]
            _check(driver.cuLaunchKernel(function, grid, 1, 1, *dims, shared_bytes, hstream, device.params, 0),
                   "cuLaunchKernel", symbol)
            results = device.copy_back()
            _check(driver.cuStreamSynchronize(hstream), "cuStreamSynchronize", symbol)
        return results

    def _allow_shared(self, symbol: str, function: Any, shared_bytes: int) -> None:
        """Opt in to more than 48 KiB of dynamic shared memory where a launch needs it."""
        if shared_bytes <= max(DEFAULT_DYNAMIC_SHARED, self._shared_opt_in.get(symbol, 0)):
            return
        driver = _driver()
        attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        _check(driver.cuFuncSetAttribute(function, attribute, shared_bytes), "cuFuncSetAttribute", symbol)
        self._shared_opt_in[symbol] = shared_bytes


class _DeviceArgs:
    """The device side of one launch's arguments: exact-size buffers, filled on entry, freed on exit."""

    def __init__(self, symbol: str, args: Sequence[Arg], stream: Any) -> None:
        self.symbol, self.args, self.stream = symbol, args, stream
        self.values: list[int] = []  # per argument: the int64 itself or the device address
        self.owned: list[int] = []

    def __enter__(self) -> _DeviceArgs:
        driver = _driver()
        try:
            for arg in self.args:
                self.values.append(arg if isinstance(arg, int) else self._upload(driver, arg))
        except BaseException:
            self._free()
            raise
        return self

    def _upload(self, driver: Any, arg: In | InOut | Out) -> int:
        nbytes = arg.nbytes if isinstance(arg, Out) else arg.array.nbytes
        if not nbytes:
            return 0
        pointer = int(_check(driver.cuMemAlloc(nbytes), "cuMemAlloc", self.symbol))
        self.owned.append(pointer)
        if isinstance(arg, Out):
            call = driver.cuMemsetD8Async(pointer, UNWRITTEN, nbytes, self.stream)
            _check(call, "cuMemsetD8Async", self.symbol)
        else:
            call = driver.cuMemcpyHtoDAsync(pointer, _host_pointer(arg.array, self.symbol), nbytes, self.stream)
            _check(call, "cuMemcpyHtoDAsync", self.symbol)
        return pointer

    @property
    def params(self) -> tuple[tuple[int, ...], tuple[Any, ...]]:
        """``cuLaunchKernel``'s kernelParams: the values and their C types (int64_t or a pointer)."""
        types = tuple(ctypes.c_int64 if isinstance(a, int) else ctypes.c_void_p for a in self.args)
        return tuple(self.values), types

    def copy_back(self) -> list[Any]:
        """Host copies of the Out and InOut arguments, queued on the stream (complete once it syncs)."""
        driver = _driver()
        results = []
        for arg, pointer in zip(self.args, self.values, strict=True):
            if isinstance(arg, In | int):
                continue
            host = np.empty(arg.length, arg.dtype) if isinstance(arg, Out) else arg.array.copy()
            if host.nbytes:
                call = driver.cuMemcpyDtoHAsync(_host_pointer(host, self.symbol), pointer, host.nbytes, self.stream)
                _check(call, "cuMemcpyDtoHAsync", self.symbol)
            results.append(host)
        return results

    def __exit__(self, *exc: object) -> None:
        self._free()

    def _free(self) -> None:
        # After a failed launch the context may be unusable: freeing is best effort, not checked.
        driver = _driver()
        for pointer in self.owned:
            driver.cuMemFree(pointer)
        self.owned.clear()


def _current_context(driver: Any, where: str) -> Any:
    """The calling thread's context; device 0's primary context, made current, when it has none."""
    try:
        initialized = driver.cuInit(0)
    except RuntimeError as exc:  # the driver library itself is missing
        raise LoaderError(f"{where}: the CUDA driver cannot be used here: {exc}") from None
    _check(initialized, "cuInit", where)
    context = _check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent", where)
    if not int(context):
        device = _check(driver.cuDeviceGet(0), "cuDeviceGet", where)
        context = _check(driver.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain", where)
        _check(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent", where)
    return context


def _capability(driver: Any, where: str) -> tuple[int, int]:
    """(major, minor) compute capability of the current context's device."""
    device = _check(driver.cuCtxGetDevice(), "cuCtxGetDevice", where)
    attribute = driver.CUdevice_attribute
    major, minor = (
        int(_check(driver.cuDeviceGetAttribute(a, device), "cuDeviceGetAttribute", where))
        for a in (attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                  attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    )
    return major, minor


def _host_pointer(array: Any, symbol: str) -> int:
    if not array.flags.c_contiguous:
        raise LoaderError(f"{symbol}: host arrays must be C-contiguous")
    return int(array.ctypes.data)


def _stream_handle(stream: Any) -> int:
    if stream is not None:
        return int(stream)
    torch = sys.modules.get("torch")
    if torch is not None:
        return int(torch.cuda.current_stream().cuda_stream)
    return 0
