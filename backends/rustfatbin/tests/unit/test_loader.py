"""The loader's host-side decisions: which device can run which image, and what it refuses before
loading, driven through a stand-in for the few driver calls that come first."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from coopcheck import fatbin
from coopcheck_rustfatbin import loader
from coopcheck_rustfatbin.bundle import Bundle, LoaderError
from cuda.bindings import driver


def entry(kind: int, arch: int) -> fatbin.Entry:
    return fatbin.Entry(kind, arch, (1, 8), 0x11, 0, 64, 0, 0, 0)


@pytest.mark.parametrize(("entries", "device", "runs"), [
    ([entry(fatbin.KIND_ELF, 90)], (9, 0), True),
    ([entry(fatbin.KIND_ELF, 80)], (8, 6), True),  # SASS runs on later minors of its major
    ([entry(fatbin.KIND_ELF, 86)], (8, 0), False),
    ([entry(fatbin.KIND_ELF, 80)], (9, 0), False),  # ...but never on another major
    ([entry(fatbin.KIND_ELF, 90)], (10, 0), False),
    ([entry(fatbin.KIND_ELF, 80), entry(fatbin.KIND_PTX, 80)], (9, 0), True),  # PTX JITs forward
    ([entry(fatbin.KIND_PTX, 100)], (9, 0), False),
    ([entry(fatbin.KIND_ELF, 120)], (12, 1), True),
])
def test_which_device_can_run_which_image(entries, device, runs):
    assert loader.loadable(entries, *device) is runs


class DeviceDriver:
    """``cuda.bindings.driver`` as far as Module's set-up goes, on a device of capability ``major.minor``."""

    CUresult = driver.CUresult
    CUdevice_attribute = driver.CUdevice_attribute

    def __init__(self, major: int, minor: int, load: Any = driver.CUresult.CUDA_SUCCESS) -> None:
        self.capability = {driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: major,
                           driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: minor}
        self.load, self.loaded = load, []

    def _ok(self, *values: Any) -> tuple[Any, ...]:
        return (driver.CUresult.CUDA_SUCCESS, *values)

    def cuInit(self, flags: int) -> tuple[Any, ...]:
        return self._ok()

    def cuCtxGetCurrent(self) -> tuple[Any, ...]:
        return self._ok(1)

    def cuCtxGetDevice(self) -> tuple[Any, ...]:
        return self._ok(0)

    def cuDeviceGetAttribute(self, attribute: Any, device: int) -> tuple[Any, ...]:
        return self._ok(self.capability[attribute])

    def cuModuleLoadData(self, image: bytes) -> tuple[Any, ...]:
        self.loaded.append(image)
        return (self.load, None)

    def cuGetErrorName(self, error: Any) -> tuple[Any, ...]:
        return self._ok(error.name.encode())


@pytest.fixture
def sm80_only(tmp_path: Path, assembler) -> Bundle:
    return Bundle(assembler.build(tmp_path, assembler.entry(fatbin.KIND_ELF, 80, assembler.elf(256))))


def test_a_fatbin_without_an_image_for_the_device_is_refused_before_loading(monkeypatch, sm80_only):
    device = DeviceDriver(9, 0)
    monkeypatch.setattr(loader, "_driver", lambda: device)
    with pytest.raises(LoaderError, match=r"nothing in it runs on this sm_90 device: it holds ELF sm_80 .*"
                                          r"rebuild with COOP_CUDA_ARCHS including 9.0"):
        loader.Module(sm80_only)
    assert device.loaded == []


def test_a_driver_failure_names_the_call_and_the_cuda_result(monkeypatch, sm80_only):
    device = DeviceDriver(8, 6, load=driver.CUresult.CUDA_ERROR_INVALID_IMAGE)
    monkeypatch.setattr(loader, "_driver", lambda: device)
    with pytest.raises(LoaderError, match=r"fatbin: cuModuleLoadData failed with CUDA_ERROR_INVALID_IMAGE$"):
        loader.Module(sm80_only)
    assert device.loaded == [sm80_only.data]


class CurrentStream:
    cuda_stream = 0x7F00


class Torch:
    """As much of torch as the loader touches: ``torch.cuda.current_stream().cuda_stream``."""

    class cuda:
        @staticmethod
        def current_stream() -> CurrentStream:
            return CurrentStream()


def test_a_launch_without_a_stream_uses_torchs_current_one_when_torch_is_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", Torch)
    assert loader._stream_handle(None) == 0x7F00
    assert loader._stream_handle(0x42) == 0x42


def test_a_launch_without_a_stream_or_torch_uses_the_legacy_default_stream(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert loader._stream_handle(None) == 0


class MemoryDriver:
    """The memory calls of one launch's arguments, recorded: allocations, fills, copies, frees."""

    CUresult = driver.CUresult

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def cuMemAlloc(self, nbytes: int) -> tuple[Any, int]:
        self.calls.append(("alloc", nbytes))
        return driver.CUresult.CUDA_SUCCESS, 0x1000 * len(self.calls)

    def cuMemsetD8Async(self, pointer: int, value: int, nbytes: int, stream: int) -> tuple[Any]:
        self.calls.append(("memset", value, nbytes))
        return (driver.CUresult.CUDA_SUCCESS,)

    def cuMemcpyHtoDAsync(self, pointer: int, host: int, nbytes: int, stream: int) -> tuple[Any]:
        self.calls.append(("to device", nbytes))
        return (driver.CUresult.CUDA_SUCCESS,)

    def cuMemcpyDtoHAsync(self, host: int, pointer: int, nbytes: int, stream: int) -> tuple[Any]:
        self.calls.append(("to host", nbytes))
        return (driver.CUresult.CUDA_SUCCESS,)

    def cuMemFree(self, pointer: int) -> tuple[Any]:
        self.calls.append(("free", pointer))
        return (driver.CUresult.CUDA_SUCCESS,)


def test_an_output_is_sized_by_its_length_and_comes_back_as_a_new_array(monkeypatch):
    import numpy as np

    memory = MemoryDriver()
    monkeypatch.setattr(loader, "_driver", lambda: memory)
    given = np.arange(3, dtype=np.int16)
    with loader._DeviceArgs("k", [loader.In(given), loader.Out(5, "float64"), 7], stream=0) as args:
        assert args.params[0][2] == 7
        back = args.copy_back()
    assert memory.calls[:4] == [("alloc", 6), ("to device", 6), ("alloc", 40), ("memset", loader.UNWRITTEN, 40)]
    assert memory.calls[4] == ("to host", 40) and [c[0] for c in memory.calls[5:]] == ["free", "free"]
    (out,) = back
    assert out.shape == (5,) and out.dtype == np.float64
