"""cuda.coop's factories and the contract kernels around them, compiled and linked for sm_90 without a GPU.

The factories ask numba for the current device's compute capability only to pick NVRTC's target, and
numba asks the same to compile device functions; here both are answered with sm_90, so NVRTC, numba and
nvJitLink do on this machine what they do on an H200 (only loading the cubin needs the GPU).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import coopcheck
import numpy as np
import pytest
from coopcheck.vocabulary import WARP_SIZE
from coopcheck_cccl import adapter, kernels, primitives
from coopcheck_cccl.cache import LtoCache

CC = (9, 0)
#: 1-D, 2-D and 3-D blocks; blocked, striped, vectorized and both transposes; 1- to 8-byte items.
SPECS = [
    coopcheck.KernelSpec("block.load", "int32", (16, 8), 4, "transpose"),
    coopcheck.KernelSpec("block.load", "uint8", (64,), 16, "vectorize"),
    coopcheck.KernelSpec("block.store", "int8", (64,), 3, "warp_transpose"),
    coopcheck.KernelSpec("block.store", "float64", (5, 3, 2), 1, "striped"),
]


@pytest.fixture
def sm_90(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """numba's current device, as cuda.coop's factories and numba's device-function compiles ask for it (and its
    context, as numba asks for the target of an operator's LTO-IR)."""
    from numba import cuda
    from numba.cuda import codegen, dispatcher
    from numba.cuda.core.compiler_lock import global_compiler_lock

    device = SimpleNamespace(compute_capability=CC)
    with global_compiler_lock:
        monkeypatch.setattr(cuda, "get_current_device", lambda: device)
        monkeypatch.setattr(dispatcher, "get_current_device", lambda: device)
        monkeypatch.setattr(codegen.devices, "get_context", lambda: SimpleNamespace(device=device))
        yield


def _kernel(spec: coopcheck.KernelSpec, primitive: object) -> kernels.Kernel:
    """The contract kernel around the primitive, as the adapter builds it."""
    kernel = kernels.contract_kernel(spec, primitive)
    assert kernel.dispatcher.targetoptions["link"] == primitive.files  # type: ignore[attr-defined]
    return kernel


def _link(spec: coopcheck.KernelSpec, primitive: object) -> bytes:
    """The contract kernel's cubin: numba's LTO-IR linked with the primitive's by nvJitLink, as numba does."""
    from cuda.core import Linker, LinkerOptions, ObjectCode
    from numba import cuda

    kernel = _kernel(spec, primitive)
    ltoir, _ = cuda.compile(kernel.dispatcher.py_func, kernel.signature, device=False, abi="numba", cc=CC,
                           output="ltoir")
    objects = [ObjectCode.from_ltoir(ltoir, name=coopcheck.kernel_symbol(spec))]
    objects += [ObjectCode.from_ltoir(Path(f).read_bytes(), name=f) for f in primitive.files]  # type: ignore[attr-defined]
    options = LinkerOptions(arch="sm_{}{}".format(*CC), link_time_optimization=True)
    return bytes(Linker(*objects, options=options).link("cubin").code)


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: coopcheck.kernel_symbol(s, include_block=True))
def test_the_contract_kernel_links_with_the_primitive(spec: coopcheck.KernelSpec, tmp_path: Path) -> None:
    primitive = primitives.make(spec, LtoCache(tmp_path))
    cubin = _link(spec, primitive)
    assert coopcheck.kernel_symbol(spec).encode() in cubin  # the entry is named for sanitizer attribution
    scratch = spec.algorithm in coopcheck.TRANSPOSE_FAMILY
    assert (primitive.temp_storage_bytes >= spec.tile * 1 if scratch else primitive.temp_storage_bytes <= 1)


@pytest.mark.usefixtures("sm_90")
def test_the_temp_storage_is_dynamic_shared_memory_aligned_for_it(tmp_path: Path) -> None:
    from numba import cuda

    primitive = primitives.make(SPECS[0], LtoCache(tmp_path))
    assert primitive.temp_storage_alignment <= kernels.TEMP_STORAGE_ALIGNMENT
    kernel = _kernel(SPECS[0], primitive)
    ptx, _ = cuda.compile_ptx(kernel.dispatcher.py_func, kernel.signature, cc=CC)
    declared = re.findall(r"^\.extern \.shared \.align (\d+) \.b8 \w+\[\];", ptx, re.M)
    # The one dynamic array the primitive gets (from byte 0), no static ones.
    assert declared == [str(kernels.TEMP_STORAGE_ALIGNMENT)]
    assert ".shared .align" not in ptx.replace(".extern .shared .align", "")


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("spec", SPECS[1:3], ids=lambda s: s.operation)
def test_the_reported_entry_name_is_the_kernel_symbol_mangled(spec: coopcheck.KernelSpec, tmp_path: Path) -> None:
    """What the adapter's artifacts name the kernel (sanitizer records and the journal match it by the symbol)."""
    from coopcheck.ptx import entry_name
    from numba import cuda

    kernel = _kernel(spec, primitives.make(spec, LtoCache(tmp_path)))
    ptx, _ = cuda.compile_ptx(kernel.dispatcher.py_func, kernel.signature, cc=CC)
    assert re.fullmatch(rf"_Z\w*{coopcheck.kernel_symbol(spec)}\w*", entry_name(ptx))


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize(("operation", "stores"), [("block.load", 3), ("block.store", 0)])
def test_only_the_load_kernel_writes_its_payload_back(operation: str, stores: int, tmp_path: Path) -> None:
    """Load and Store share one kernel body; before linking (the primitive is a call), the Load kernel's own
    global stores are its 3 payload slots per thread and the Store kernel has none, nor any branch."""
    from numba import cuda

    spec = coopcheck.KernelSpec(operation, "int32", (64,), 3, "direct")
    kernel = _kernel(spec, primitives.make(spec, LtoCache(tmp_path)))
    ptx, _ = cuda.compile_ptx(kernel.dispatcher.py_func, kernel.signature, cc=CC)
    assert len(re.findall(r"^\s*st\.global", ptx, re.M)) == stores and not re.search(r"^\s*(@%p\d+ )?bra", ptx, re.M)


@pytest.mark.usefixtures("sm_90")
def test_a_second_factory_call_costs_no_nvrtc(tmp_path: Path) -> None:
    primitives.make(SPECS[0], LtoCache(tmp_path))
    again = LtoCache(tmp_path)
    primitive = primitives.make(SPECS[0], again)
    assert (again.hits, again.misses) == (1, 0)
    assert primitive.temp_storage_bytes == 16 * 8 * 4 * 4  # a tile of int32: read back from the cached LTO-IR


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("algorithm", ["direct", "transpose"])
def test_float16_does_not_compile_as_the_adapter_declares(algorithm: str, tmp_path: Path) -> None:
    """Pins :data:`coopcheck_cccl.adapter.DTYPES_REFUSED`: once a cuda-cccl compiles float16, this fails."""
    assert "float16" in adapter.DTYPES_REFUSED
    with pytest.raises(RuntimeError, match=r"^NVRTC error: ") as refused:
        primitives.make(coopcheck.KernelSpec("block.load", "float16", (32,), 2, algorithm), LtoCache(tmp_path))
    assert "must be a pointer to a complete object type" in str(refused.value) and "T=__half" in str(refused.value)


#: StripedToBlocked, cuda.coop's one exchange method, in place and not, with and without warp time-slicing.
EXCHANGES = [
    coopcheck.KernelSpec("block.exchange", "int64", (100,), 3, "striped_to_blocked",
                         variant=(("slicing", "off"), ("output", "inplace"))),
    coopcheck.KernelSpec("block.exchange", "uint8", (16, 8), 4, "striped_to_blocked",
                         variant=(("slicing", "on"), ("output", "separate"))),
    coopcheck.KernelSpec("block.exchange", "float32", (8, 4, 2), 1, "striped_to_blocked",
                         variant=(("slicing", "off"), ("output", "separate"))),
]


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("spec", EXCHANGES, ids=lambda s: coopcheck.kernel_symbol(s, include_block=True))
def test_the_exchange_kernel_links_with_cuda_coops_primitive(spec: coopcheck.KernelSpec, tmp_path: Path) -> None:
    """The kernel of the Exchange ABI around ``make_exchange``: the entry named for attribution, scratch for one
    warp's share of the tile when time-sliced (CUB's WarpTimeSlicing) and for the whole tile otherwise."""
    primitive = primitives.make(spec, LtoCache(tmp_path))
    assert coopcheck.kernel_symbol(spec).encode() in _link(spec, primitive)
    item = np.dtype(spec.dtype).itemsize
    share = min(spec.threads, WARP_SIZE) if spec.static("slicing") == "on" else spec.threads
    assert share * spec.items_per_thread * item <= primitive.temp_storage_bytes
    assert primitive.temp_storage_bytes < (share + WARP_SIZE) * spec.items_per_thread * item + 64


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize(("output", "stores"), [("inplace", 3), ("separate", 6)])
def test_a_separate_output_also_writes_the_input_as_the_call_left_it(output: str, stores: int,
                                                                     tmp_path: Path) -> None:
    """Before linking (the primitive is a call), the kernel's own global stores per thread: the exchanged ipt
    items, and with a separate output the input items too (the ABI's second tile)."""
    from numba import cuda

    spec = coopcheck.KernelSpec("block.exchange", "int32", (64,), 3, "striped_to_blocked",
                                variant=(("slicing", "off"), ("output", output)))
    kernel = kernels.contract_kernel(spec, primitives.make(spec, LtoCache(tmp_path)))
    ptx, _ = cuda.compile_ptx(kernel.dispatcher.py_func, kernel.signature, cc=CC)
    assert len(re.findall(r"^\s*st\.global", ptx, re.M)) == stores


def _reduce(dtype: str, block: tuple[int, ...], ipt: int, algorithm: str, op: str) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.reduce", dtype, block, ipt, algorithm, variant=(("op", op),))


#: make_sum and make_reduce with each operator of the contract (first: a StatefulFunction), every algorithm, one
#: item a thread (the full-tile and num_valid overloads) and several, 1-D, 2-D and 3-D blocks, 1- to 8-byte items.
REDUCES = [
    _reduce("int32", (65,), 1, "raking", "sum"),
    _reduce("float64", (16, 8), 4, "warp_reductions", "sum"),
    _reduce("float32", (13, 5), 1, "raking_commutative_only", "min"),
    _reduce("int8", (8, 4, 2), 3, "warp_reductions", "max"),
    _reduce("uint16", (100,), 1, "raking", "matmul"),
    _reduce("uint64", (32,), 2, "warp_reductions", "matmul"),
    _reduce("float32", (65,), 1, "raking", "first"),
    _reduce("int16", (16, 8), 4, "warp_reductions", "first"),
]


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("spec", REDUCES, ids=lambda s: coopcheck.kernel_symbol(s, include_block=True))
def test_the_reduce_kernel_links_with_cuda_coops_primitive(spec: coopcheck.KernelSpec, tmp_path: Path) -> None:
    """The kernel of the Reduce ABI around ``make_sum`` / ``make_reduce``: the entry named for attribution, the
    operator's code linked in (one per operator and dtype), and TempStorage for the block's partials."""
    primitive = primitives.make(spec, LtoCache(tmp_path))
    cubin = _link(spec, primitive)
    assert coopcheck.kernel_symbol(spec).encode() in cubin
    assert 0 < primitive.temp_storage_bytes <= spec.threads * 8 + 1024


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("op", ["sum", "first", "max"])
def test_one_item_a_thread_calls_the_full_tile_and_the_num_valid_overloads(op: str, tmp_path: Path) -> None:
    """Before linking (the primitive is a call), a kernel of one item a thread holds both of cuda.coop's calls:
    ``Reduce(item, op)`` for the full tile and ``Reduce(item, op, num_valid)`` for a partial one; with several
    items a thread, the full tile's one."""
    from numba import cuda

    for ipt, want in ((1, 2), (4, 1)):
        spec = _reduce("int32", (64,), ipt, "raking", op)
        kernel = kernels.contract_kernel(spec, primitives.make(spec, LtoCache(tmp_path)))
        ptx, _ = cuda.compile_ptx(kernel.dispatcher.py_func, kernel.signature, cc=CC)
        called = set(re.findall(r"^\s*\.extern \.func (block_reduce\w+)", ptx, re.M))
        assert len(called) == want, (ipt, sorted(called))
