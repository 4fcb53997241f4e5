"""The adapter on a machine without a GPU: what it declares, and that activating it costs no toolchain import."""

from __future__ import annotations

import subprocess
import sys

import coopcheck
import pytest
from coopcheck_cccl import adapter as cccl

SPEC = coopcheck.KernelSpec("block.load", "int32", (16, 8), 4, "striped")


@pytest.fixture
def no_device(monkeypatch: pytest.MonkeyPatch) -> cccl.CcclAdapter:
    """The adapter where numba finds no CUDA device (whatever this machine has)."""
    from numba import cuda

    monkeypatch.setattr(cuda, "is_available", lambda: False)
    return cccl.CcclAdapter()


def test_activating_the_backend_imports_no_toolchain() -> None:
    code = ("import sys, coopcheck; coopcheck.register('cccl'); "
            "print(sorted(m for m in ('numba', 'numba_cuda', 'numpy', 'cuda.coop', 'cuda.bindings', 'cuda.core') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_registry_finds_the_backend() -> None:
    assert "cccl" in coopcheck.available()
    assert isinstance(coopcheck.register("cccl"), coopcheck.Adapter)


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
def test_without_a_device_every_kernel_is_declared_not_supported(no_device: cccl.CcclAdapter, operation: str) -> None:
    spec = coopcheck.KernelSpec(operation, "int32", (32,), 1, "direct")
    assert no_device.unsupported_reason(spec) == cccl.NO_DEVICE
    assert not no_device.can_launch()


def test_without_a_device_nothing_compiles_and_says_why(no_device: cccl.CcclAdapter) -> None:
    with pytest.raises(RuntimeError, match=r"current device only \(none\), not sm_90"):
        no_device.compile(SPEC, arch="sm_90")


def test_bad_statics_are_refused_by_rule_before_any_device_is_asked(no_device: cccl.CcclAdapter) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as refused:
        no_device.compile(coopcheck.KernelSpec("block.load", "int32", (100,), 4, "warp_transpose"), arch="sm_90")
    assert refused.value.rule == "warp_multiple"


def test_the_simulator_is_declared_not_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    from numba import config

    monkeypatch.setattr(config, "ENABLE_CUDASIM", True)
    adapter = cccl.CcclAdapter()
    assert adapter.unsupported_reason(SPEC) == cccl.SIMULATOR and not adapter.can_launch()


def test_with_a_device_float16_is_declared_not_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = cccl.CcclAdapter()
    monkeypatch.setitem(adapter.__dict__, "_device_arch", "sm_90")  # the device a GPU machine reports
    assert adapter.unsupported_reason(SPEC) is None
    half = coopcheck.KernelSpec("block.store", "float16", (64,), 2, "direct")
    assert adapter.unsupported_reason(half) == cccl.DTYPES_REFUSED["float16"]


@pytest.mark.parametrize(("values", "reason"), [
    ({"valid": 512, "oob": "none", "offset": 0}, None),
    ({"valid": 512, "oob": "none", "offset": 1}, None),  # a pointer past the base takes any offset
    ({"valid": 511, "oob": "none", "offset": 0}, cccl.PARTIAL_TILE),
    ({"valid": 0, "oob": "none", "offset": 32}, cccl.PARTIAL_TILE),
    ({"valid": 512, "oob": "value", "offset": 0}, cccl.OOB_DEFAULT),
    ({"valid": 512, "offset": 0}, None),  # Store: no oob axis
])
def test_only_full_tiles_without_oob_default_are_taken(values: dict[str, object], reason: str | None) -> None:
    assert cccl.CcclAdapter().unsupported_case(SPEC, values) == reason  # SPEC's tile: 128 threads x 4


def test_the_block_shape_is_part_of_the_kernel_key() -> None:
    adapter = cccl.CcclAdapter()
    other = coopcheck.KernelSpec("block.load", "int32", (32, 4), 4, "striped")
    assert adapter.kernel_key(SPEC) != adapter.kernel_key(other)


def test_every_contract_algorithm_names_one_of_cuda_coops() -> None:
    from coopcheck_cccl import ALGORITHMS
    from cuda.coop._experimental.block import _block_load_store as cuda_coop

    assert set(ALGORITHMS) == set(coopcheck.ALGORITHMS)
    assert set(ALGORITHMS.values()) <= set(cuda_coop.CUB_BLOCK_LOAD_ALGOS) & set(cuda_coop.CUB_BLOCK_STORE_ALGOS)


def _exchange(method: str, slicing: str = "off", output: str = "inplace", dtype: str = "int32") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.exchange", dtype, (128,), 4, method,
                                variant=(("slicing", slicing), ("output", output)))


def test_the_exchange_family_is_declared_with_striped_to_blocked_its_one_method(
        monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = cccl.CcclAdapter()
    monkeypatch.setitem(adapter.__dict__, "_device_arch", "sm_90")
    assert adapter.operations >= coopcheck.exchange.OPERATIONS
    for slicing in coopcheck.exchange.SLICING:
        for output in coopcheck.exchange.OUTPUTS:
            assert adapter.unsupported_reason(_exchange("striped_to_blocked", slicing, output)) is None
    others = [m for m in coopcheck.exchange.METHODS if m != "striped_to_blocked"]
    assert len(others) == 7 and {adapter.unsupported_reason(_exchange(m)) for m in others} == {cccl.EXCHANGE_METHOD}
    half = _exchange("striped_to_blocked", dtype="float16")
    assert adapter.unsupported_reason(half) == cccl.DTYPES_REFUSED["float16"]
    assert adapter.unsupported_case(_exchange("striped_to_blocked"), {"ranks": "none"}) is None


def test_the_exchange_statics_are_part_of_the_kernel_key_and_checked_by_rule(no_device: cccl.CcclAdapter) -> None:
    keys = {no_device.kernel_key(_exchange("striped_to_blocked", s, o)) for s in ("off", "on")
            for o in ("inplace", "separate")}
    assert len(keys) == 4
    with pytest.raises(coopcheck.InvalidParameter) as refused:
        no_device.compile(_exchange("striped_to_blocked", slicing="warp"), arch="sm_90")
    assert refused.value.rule == "exchange_slicing"


def test_every_exchange_method_the_backend_names_is_one_of_cuda_coops() -> None:
    from coopcheck_cccl import EXCHANGE_METHODS
    from cuda.coop._experimental import block

    assert set(EXCHANGE_METHODS) <= set(coopcheck.exchange.METHODS)
    assert set(EXCHANGE_METHODS.values()) == {t.name for t in block.BlockExchangeType}


def _reduce(ipt: int) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.reduce", "int32", (65,), ipt, "raking", variant=(("op", "first"),))


@pytest.mark.parametrize(("ipt", "valid", "reason"), [
    (1, 65, None), (1, 64, None), (1, 0, None),  # Reduce(item, op, num_valid)
    (4, 260, None),  # Reduce(items, op): the full tile
    (4, 259, cccl.REDUCE_PARTIAL_TILE), (4, 1, cccl.REDUCE_PARTIAL_TILE),
])
def test_reduce_takes_a_partial_tile_with_one_item_a_thread_only(ipt: int, valid: int, reason: str | None) -> None:
    assert cccl.CcclAdapter().unsupported_case(_reduce(ipt), {"valid": valid}) == reason


def test_with_a_device_every_reduce_algorithm_and_operator_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = cccl.CcclAdapter()
    monkeypatch.setitem(adapter.__dict__, "_device_arch", "sm_90")
    assert "block.reduce" in adapter.operations
    for algorithm in coopcheck.reduce.ALGORITHMS:
        for op in coopcheck.reduce.OPERATORS:
            spec = coopcheck.KernelSpec("block.reduce", "uint16", (16, 8), 3, algorithm, variant=(("op", op),))
            assert adapter.unsupported_reason(spec) is None, (algorithm, op)


def _scan(seed: str, op: str = "sum", mode: str = "inclusive", algorithm: str = "raking", ipt: int = 4,
          dtype: str = "int32") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.scan", dtype, (65,), ipt, algorithm,
                                variant=(("op", op), ("mode", mode), ("seed", seed)))


def test_with_a_device_every_scan_with_the_prefix_callback_is_taken(on_a_gpu: cccl.CcclAdapter) -> None:
    assert "block.scan" in on_a_gpu.operations
    for algorithm in coopcheck.scan.ALGORITHMS:
        for op in coopcheck.scan.OPERATORS:
            for mode in coopcheck.scan.MODES:
                for ipt in (1, 7):
                    spec = _scan("prefix", op, mode, algorithm, ipt, "uint16")
                    assert on_a_gpu.unsupported_reason(spec) is None, spec
                    assert on_a_gpu.unsupported_case(spec, {"init": "rand"}) is None


@pytest.mark.parametrize("seed", ["none", "initial"])
def test_a_scan_whose_aggregate_cuda_coop_cannot_give_is_declared_not_supported(on_a_gpu: cccl.CcclAdapter,
                                                                                 seed: str) -> None:
    for op in coopcheck.scan.OPERATORS:
        for ipt in (1, 4):
            assert on_a_gpu.unsupported_reason(_scan(seed, op, ipt=ipt)) == cccl.SCAN_AGGREGATE


def test_a_float16_scan_is_declared_not_supported(on_a_gpu: cccl.CcclAdapter) -> None:
    assert on_a_gpu.unsupported_reason(_scan("prefix", dtype="float16")) == cccl.DTYPES_REFUSED["float16"]


@pytest.mark.parametrize(("spec", "reason"), [
    (_scan("initial"), cccl.SCAN_AGGREGATE),
    (_scan("prefix", dtype="float16"), cccl.DTYPES_REFUSED["float16"]),
    (coopcheck.KernelSpec("block.exchange", "int32", (64,), 2, "scatter_to_blocked",
                          variant=(("slicing", "off"), ("output", "inplace"))), cccl.EXCHANGE_METHOD),
], ids=["scan-initial", "float16", "exchange-scatter"])
def test_a_kernel_declared_not_supported_does_not_compile(on_a_gpu: cccl.CcclAdapter, spec: coopcheck.KernelSpec,
                                                          reason: str) -> None:
    """Refused before cuda.coop is asked (no NVRTC here), with the declared reason."""
    with pytest.raises(NotImplementedError) as refused:
        on_a_gpu.compile(spec, arch="sm_90")
    assert str(refused.value) == f"{coopcheck.kernel_symbol(spec)}: {reason}"


def test_the_scan_statics_are_part_of_the_kernel_key_and_checked_by_rule(no_device: cccl.CcclAdapter) -> None:
    keys = {no_device.kernel_key(_scan("prefix", op, mode)) for op in ("sum", "max") for mode in coopcheck.scan.MODES}
    assert len(keys) == 4
    with pytest.raises(coopcheck.InvalidParameter) as refused:
        no_device.compile(_scan("prefix", "matmul", dtype="float32"), arch="sm_90")
    assert refused.value.rule == "scan_integer_operator"


def test_the_artifacts_hold_the_linked_cubins_bytes() -> None:
    """numba-cuda links with cuda.core, whose link gives an ObjectCode; the harness's inspectors hash and parse bytes.
    A stand-in for the compiled kernel's code library (reading a real one needs a GPU's context)."""
    from types import SimpleNamespace

    from cuda.core import ObjectCode

    ptx = ".version 8.8\n.target sm_90\n.visible .entry _Z6kernelPi(\n.param .u64 p\n)\n{\nret;\n}\n"
    library = SimpleNamespace(get_asm_str=lambda: ptx, get_cubin=lambda: ObjectCode.from_cubin(b"\x7fELF..."))
    dispatcher = SimpleNamespace(compile=lambda signature: SimpleNamespace(_codelibrary=library))
    compiled = cccl.CompiledKernel(SimpleNamespace(dispatcher=dispatcher, signature=()), 64, "sm_90")
    artifacts = cccl.CcclAdapter().artifacts(compiled)
    kind = type(artifacts.cubin).__name__  # not the object: an ObjectCode's repr hangs without a GPU
    assert kind == "bytes" and artifacts.cubin == b"\x7fELF..."
    assert (artifacts.kernel_name, artifacts.dynamic_shared_bytes) == ("_Z6kernelPi", 64)
