"""cuda.coop's factories and the contract kernels around them, compiled and linked for sm_90 without a GPU (as numba
does at a launch: with the dispatcher's launch bounds).

The factories ask numba for the current device's compute capability only to pick NVRTC's target, and
numba asks the same to compile device functions; here both are answered with sm_90, so NVRTC, numba and
nvJitLink do on this machine what they do on an H200 (only loading the cubin needs the GPU).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import coopcheck
import numpy as np
import pytest
from coopcheck.vocabulary import WARP_SIZE
from coopcheck_cccl import adapter, kernels, operators, primitives
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
                           output="ltoir", launch_bounds=kernel.dispatcher.targetoptions.get("launch_bounds"))
    objects = [ObjectCode.from_ltoir(ltoir, name=coopcheck.kernel_symbol(spec))]
    objects += [ObjectCode.from_ltoir(Path(f).read_bytes(), name=f) for f in primitive.files]  # type: ignore[attr-defined]
    options = LinkerOptions(arch="sm_{}{}".format(*CC), link_time_optimization=True)
    return bytes(Linker(*objects, options=options).link("cubin").code)


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("spec", SPECS)
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
@pytest.mark.parametrize("spec", EXCHANGES)
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
@pytest.mark.parametrize("spec", REDUCES)
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


def _scan(dtype: str, block: tuple[int, ...], ipt: int, algorithm: str, op: str, mode: str,
          seed: str = "prefix") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.scan", dtype, block, ipt, algorithm,
                                variant=(("op", op), ("mode", mode), ("seed", seed)))


#: Seed prefix (the one the backend takes): every algorithm and mode, the sums (make_*_sum) and each other operator
#: (make_*_scan), one item a thread (the scalar overloads) and several, 1-D, 2-D and 3-D blocks, 1- to 8-byte items.
SCANS = [
    _scan("int32", (65,), 1, "raking", "sum", "inclusive"),
    _scan("uint8", (16, 8), 4, "raking_memoize", "sum", "exclusive"),
    _scan("float64", (32,), 7, "warp_scans", "sum", "inclusive"),
    _scan("float32", (13, 5), 1, "warp_scans", "min", "exclusive"),
    _scan("int16", (8, 4, 2), 2, "raking", "max", "inclusive"),
    _scan("uint64", (1,), 1, "raking_memoize", "matmul", "exclusive"),
    _scan("int8", (100,), 16, "warp_scans", "matmul", "inclusive"),
]


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("spec", SCANS)
def test_the_scan_kernel_links_with_cuda_coops_primitive(spec: coopcheck.KernelSpec, tmp_path: Path) -> None:
    """The kernel of the Scan ABI around ``make_*_sum`` / ``make_*_scan`` with the prefix callback: the entry named
    for attribution, the callback's code (and the operator's) linked in, TempStorage for the warps' partials."""
    primitive = primitives.make(spec, LtoCache(tmp_path))
    assert len(primitive.files) == (2 if spec.static("op") == "sum" else 3)  # the wrapper, the callback[, the op]
    assert coopcheck.kernel_symbol(spec).encode() in _link(spec, primitive)
    assert 0 < primitive.temp_storage_bytes <= spec.threads * 8 + 1024


#: A CUB call of cuda.coop's wrapper with explicit TempStorage: ``ExclusiveScan(param_0, param_1, param_2)``.
BOUND_CALL = re.compile(r"algorithm_t\(\*temp_storage\)\.(\w+)\(([^)]*)\);")


def _bound_calls(make: Callable[[], object], monkeypatch: pytest.MonkeyPatch) -> tuple[str, set[str]]:
    """The C++ wrapper that ``make`` (a factory call) has NVRTC compile, and the CUB calls it binds."""
    from cuda.coop._experimental import _nvrtc

    sources: list[str] = []
    compile_cpp = _nvrtc.compile
    monkeypatch.setattr(_nvrtc, "compile", lambda **kw: sources.append(kw["cpp"]) or compile_cpp(**kw))
    make()
    cpp = "".join(sources)
    return cpp, {f"{name}({args})" for name, args in BOUND_CALL.findall(cpp)}


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize(("op", "ipt", "mode", "calls"), [
    ("sum", 1, "inclusive", {"InclusiveSum(param_0, param_1, param_2)"}),
    ("max", 4, "exclusive", {"ExclusiveScan(param_0, param_1, param_2, param_3)"}),
])
def test_the_scan_primitive_passes_the_prefix_callback_last(op: str, ipt: int, mode: str, calls: set[str],
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One overload, CUB's with a BlockPrefixCallbackOp (input, output[, scan_op], callback): the kernel calls it."""
    spec = _scan("int32", (64,), ipt, "raking", op, mode)
    cpp, bound = _bound_calls(lambda: primitives.make(spec, LtoCache(tmp_path)), monkeypatch)
    last = max(calls).split(", ")[-1].rstrip(")")
    assert bound == calls and f"auto {last} = [{last}_state]" in cpp  # the last: the stateful callback


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize(("factory", "ipt", "calls"), [
    ("make_inclusive_sum", 4, {"InclusiveSum(param_0, param_1)"}),
    ("make_exclusive_sum", 1, {"ExclusiveSum(param_0, param_1)"}),
    ("make_exclusive_scan", 4, {"ExclusiveScan(param_0, param_1, param_2)",
                                "ExclusiveScan(param_0, param_1, param_2, param_3)"}),
    ("make_inclusive_scan", 1, {"InclusiveScan(param_0, param_1, param_2)"}),
])
def test_cuda_coops_scans_without_a_callback_bind_no_block_aggregate(factory: str, ipt: int, calls: set[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Pins :data:`coopcheck_cccl.adapter.SCAN_AGGREGATE`: the seedless factories bind (input, output) for sums and
    (input, output[, initial_value], op) for scans, the op last (a lambda of the wrapper's): none binds CUB's
    overloads with a trailing block_aggregate; once a cuda-cccl does, this fails."""
    from cuda.coop._experimental import block

    operator = () if factory.endswith("_sum") else (operators.binary("max", np.dtype("int32")),)
    cpp, bound = _bound_calls(lambda: getattr(block, factory)(np.dtype("int32"), 64, *operator, ipt), monkeypatch)
    assert bound == calls
    for call in bound - {"InclusiveSum(param_0, param_1)", "ExclusiveSum(param_0, param_1)"}:
        op = call.split(", ")[-1].rstrip(")")
        assert f"auto {op} = []" in cpp  # the scan's op, stateless: no output parameter follows it


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("ipt", [1, 3])
def test_the_scan_kernel_meets_at_a_barrier_after_each_tile(ipt: int, tmp_path: Path) -> None:
    """Before linking (the primitive is a call), the kernel's own PTX: one scan call and one block barrier per tile
    (CUB's TempStorage is reused by the next tile's scan only after a barrier), however the loop is laid out."""
    from numba import cuda

    spec = _scan("int32", (64,), ipt, "warp_scans", "max", "inclusive")
    kernel = kernels.contract_kernel(spec, primitives.make(spec, LtoCache(tmp_path)))
    ptx, _ = cuda.compile_ptx(kernel.dispatcher.py_func, kernel.signature, cc=CC)
    calls = len(re.findall(r"\bcall(?:\.uni)?\s+(?:\(\w+\),\s*)?block_scan\w+", ptx))  # the name may start a line
    barriers = len(re.findall(r"^\s*(?:bar|barrier)\.sync\b", ptx, re.M))
    assert calls in (1, coopcheck.scan.PREFIX_TILES) and barriers == calls, (calls, barriers)


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("seed", ["none", "initial"])
def test_the_scan_primitive_is_made_for_the_prefix_callback_only(seed: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"seed '{seed}': the Scan primitive is made for seed 'prefix' only"):
        primitives.make(_scan("int32", (64,), 2, "raking", "sum", "inclusive", seed), LtoCache(tmp_path))


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("spec", [_scan("float64", (1024,), 16, "raking_memoize", "sum", "inclusive"),
                                  _reduce("float64", (1024,), 1, "raking_commutative_only", "min")], ids=str)
def test_a_1024_thread_kernel_of_float64_items_fits_the_register_file(spec: coopcheck.KernelSpec,
                                                                      tmp_path: Path) -> None:
    """The kernels' launch bounds (the block's threads) make ptxas fit the registers a 1024-thread block may take.
    Unbounded, the scan of 16 items a thread takes 126 a thread, and the H200 refused every launch of the Reduce one
    over the full profile with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (its min and max, 30 cases)."""
    from harness.inspect.cubin import read_resources
    from harness.inspect.limits import REGISTERS_PER_BLOCK, block_registers

    primitive = primitives.make(spec, LtoCache(tmp_path))
    cubin = _link(spec, primitive)
    symbol = coopcheck.kernel_symbol(spec).encode()
    entry = next(name for name in re.findall(rb"\.text\.(\w+)", cubin) if symbol in name)
    registers = read_resources(cubin, entry.decode()).registers
    assert block_registers(registers, spec.threads) <= REGISTERS_PER_BLOCK, registers


def _warp(dtype: str, block: tuple[int, ...], width: int, op: str = "sum") -> coopcheck.KernelSpec:
    if op == "scan":
        return coopcheck.KernelSpec("warp.scan", dtype, block, 1, "any", variant=(
            ("width", str(width)), ("op", "sum"), ("mode", "exclusive"), ("seed", "none"), ("aggregate", "off")))
    return coopcheck.KernelSpec("warp.reduce", dtype, block, 1, "any",
                                variant=(("width", str(width)), ("op", op), ("mode", "reduce")))


#: What the backend takes of the warp families: make_sum and make_reduce with each other operator (first: a
#: StatefulFunction), make_exclusive_sum; power-of-two widths (WarpReduceShfl / WarpScanShfl) and 7 and 24
#: (WarpReduceSmem / WarpScanSmem), several logical warps a hardware warp, 1-D and 2-D blocks, 1- to 8-byte items,
#: every logical warp whole (the adapter declines a block that leaves one partial).
WARPS = [
    _warp("int32", (14,), 7),
    _warp("float64", (1024,), 32, "min"),
    _warp("int8", (13, 5), 1, "max"),
    _warp("uint16", (24,), 24, "matmul"),
    _warp("float32", (16, 8), 8, "first"),
    _warp("int64", (7,), 7, "first"),
    _warp("int32", (14,), 7, "scan"),
    _warp("uint64", (1024,), 32, "scan"),
    _warp("float64", (16, 4), 16, "scan"),
    _warp("int8", (24,), 24, "scan"),
]


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize("spec", WARPS)
def test_the_warp_kernel_links_and_meets_the_contracts_resource_rules(spec: coopcheck.KernelSpec,
                                                                       tmp_path: Path) -> None:
    """The kernel of the Warp Reduce / Warp Scan ABI around cuda.coop's warp primitive: the entry named for
    attribution, a TempStorage a logical warp within its aligned slot, and the contract's resource rules on the final
    SASS (no block barrier, no local memory, no CALL: the operator and the primitive inlined by link-time
    optimization)."""
    from harness.contracts import load_contracts
    from harness.inspect import inspect_artifacts, resource_violations

    primitive = primitives.make(spec, LtoCache(tmp_path))
    assert primitive.temp_storage_alignment <= kernels.TEMP_STORAGE_ALIGNMENT
    assert primitive.temp_storage_bytes <= spec.threads * 8 + 1024
    cubin, symbol = _link(spec, primitive), coopcheck.kernel_symbol(spec).encode()
    entry = next(name for name in re.findall(rb"\.text\.(\w+)", cubin) if symbol in name)
    artifacts = coopcheck.Artifacts(kernel_name=entry.decode(), cubin=cubin, arch="sm_90",
                                    dynamic_shared_bytes=kernels.shared_bytes(spec, primitive.temp_storage_bytes))
    contract = {c.operation: c for c in load_contracts()}[spec.operation]
    point = {"dtype": spec.dtype, "block": "x".join(map(str, spec.block)), "ipt": 1, "alg": "any", **dict(spec.variant)}
    report = inspect_artifacts(artifacts)
    assert resource_violations(report, "any", contract.resources_for(point), ["any"]) == []


@pytest.mark.usefixtures("sm_90")
@pytest.mark.parametrize(("spec", "calls"), [
    (_warp("int32", (64,), 8), {"Sum(param_0)"}),
    (_warp("int32", (28,), 7, "max"), {"Reduce(param_0, param_1)"}),
    (_warp("int32", (28,), 7, "scan"), {"ExclusiveSum(param_0, param_1)"}),
], ids=["sum", "max", "exclusive-sum"])
def test_the_warp_primitive_binds_cubs_full_warp_call(spec: coopcheck.KernelSpec, calls: set[str],
                                                      monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The CUB call cuda.coop's wrapper makes for the warp primitive: the full-warp overloads, with the logical
    warp's width the template's VIRTUAL_WARP_THREADS."""
    cpp, bound = _bound_calls(lambda: primitives.make(spec, LtoCache(tmp_path)), monkeypatch)
    assert bound == calls
    assert re.search(rf"using algorithm_t = cub::Warp\w+<[^>]*,\s*{coopcheck.warp_reduce.width(spec)}>;", cpp), cpp
