"""NumbaAdapter as the harness sees it: registry, protocol, kernel keys and names, rejections."""

from __future__ import annotations

import subprocess
import sys

import coopcheck
import pytest
from coopcheck_numba.adapter import NumbaAdapter
from coopcheck_numba.kernels import contract_kernel


@pytest.fixture(scope="module")
def adapter() -> NumbaAdapter:
    return NumbaAdapter()


def test_registered_under_numba_without_importing_numba() -> None:
    script = (
        "import sys, coopcheck\n"
        "adapter = coopcheck.register('numba')\n"
        "assert type(adapter).__name__ == 'NumbaAdapter', adapter\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'numba_cuda', 'llvmlite'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_implements_the_adapter_protocol(adapter: NumbaAdapter) -> None:
    assert isinstance(adapter, coopcheck.Adapter)
    assert adapter.name == "numba"


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
@pytest.mark.parametrize("algorithm", coopcheck.ALGORITHMS)
def test_every_combination_is_supported(adapter: NumbaAdapter, operation: str, algorithm: str) -> None:
    for dtype in coopcheck.DTYPES:
        assert adapter.unsupported_reason(coopcheck.KernelSpec(operation, dtype, (64,), 3, algorithm)) is None


def test_kernel_key_leaves_the_block_shape_to_the_launch(adapter: NumbaAdapter) -> None:
    keys = {adapter.kernel_key(coopcheck.KernelSpec("block.load", "int8", b, 4, "transpose"))
            for b in ((32,), (16, 8), (4, 4, 4), (1024,))}
    assert keys == {("block.load", "int8", 4, "transpose")}
    others = [coopcheck.KernelSpec("block.store", "int8", (32,), 4, "transpose"),
              coopcheck.KernelSpec("block.load", "uint8", (32,), 4, "transpose"),
              coopcheck.KernelSpec("block.load", "int8", (32,), 2, "transpose"),
              coopcheck.KernelSpec("block.load", "int8", (32,), 4, "warp_transpose")]
    assert len({adapter.kernel_key(s) for s in others} | keys) == 5


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
def test_contract_kernel_is_named_by_its_specialization(operation: str) -> None:
    spec = coopcheck.KernelSpec(operation, "uint16", (8, 4), 7, "vectorize")
    kernel = contract_kernel(spec)
    assert kernel.symbol == coopcheck.kernel_symbol(spec) == kernel.dispatcher.py_func.__qualname__
    assert contract_kernel(coopcheck.KernelSpec(operation, "uint16", (256,), 7, "vectorize")) is kernel


@pytest.mark.parametrize(
    ("spec", "rule"),
    [
        (coopcheck.KernelSpec("block.load", "int32", (128,), 0, "direct"), "items_per_thread"),
        (coopcheck.KernelSpec("block.load", "int32", (100,), 4, "warp_transpose"), "warp_multiple"),
        (coopcheck.KernelSpec("block.store", "float32", (5, 3, 2), 2, "warp_transpose"), "warp_multiple"),
        (coopcheck.KernelSpec("block.load", "int32", (64,), 2, "direct", statics=(("static_valid_items", -1),)),
         "valid_items_range"),
        (coopcheck.KernelSpec("block.store", "int32", (64,), 2, "striped", statics=(("static_valid_items", 129),)),
         "valid_items_range"),
        (coopcheck.KernelSpec("block.load", "int32", (64,), 2, "direct", statics=(("static_offset", -1),)),
         "offset_negative"),
        (coopcheck.KernelSpec("block.store", "int32", (64,), 2, "direct", statics=(("store_oob_default", True),)),
         "store_oob_default"),
        (coopcheck.KernelSpec("block.load", "bfloat16", (64,), 2, "direct"), "dtype"),
        (coopcheck.KernelSpec("block.load", "int32", (64,), 2, "blocked"), "algorithm"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_compile_refuses_bad_statics_before_compiling(adapter: NumbaAdapter, spec: coopcheck.KernelSpec,
                                                      rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as refused:
        adapter.compile(spec, arch="sm_90")
    assert refused.value.rule == rule


def _exchange(method: str, slicing: str = "off", output: str = "inplace", block: tuple[int, ...] = (64,),
              dtype: str = "int8", ipt: int = 4) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.exchange", dtype, block, ipt, method,
                                variant=(("slicing", slicing), ("output", output)))


def test_declares_the_block_families_warp_reduce_and_warp_scan(adapter: NumbaAdapter) -> None:
    assert adapter.operations == {"block.load", "block.store", "block.exchange", "block.shuffle", "block.reduce",
                                  "block.scan", "warp.reduce", "warp.scan"}


def test_an_exchange_kernel_key_holds_its_variant_but_not_its_block(adapter: NumbaAdapter) -> None:
    keys = {adapter.kernel_key(_exchange("scatter_to_striped", block=b)) for b in ((32,), (10, 5), (1024,))}
    assert keys == {("block.exchange", "int8", 4, "scatter_to_striped", ("slicing", "off"), ("output", "inplace"))}
    others = [_exchange("scatter_to_striped", slicing="on"), _exchange("scatter_to_striped", output="separate"),
              _exchange("scatter_to_striped_guarded")]
    assert len({adapter.kernel_key(s) for s in others} | keys) == 4


def test_an_exchange_contract_kernel_is_named_by_its_specialization() -> None:
    spec = _exchange("blocked_to_warp_striped", slicing="on", output="separate")
    kernel = contract_kernel(spec)
    assert kernel.symbol == coopcheck.kernel_symbol(spec) == kernel.dispatcher.py_func.__qualname__
    assert kernel.symbol.endswith("__blocked_to_warp_striped__on__separate")
    assert contract_kernel(_exchange("blocked_to_warp_striped", "on", "separate", block=(256,))) is kernel


def _family_rejects(*contract_ids: str) -> list[object]:
    from harness.cases import expand
    from harness.contracts import load_contracts

    contracts = {c.id: c for c in load_contracts()}
    return [pytest.param(case.spec, case.reject.rule, id=f"{cid}/{case.reject.name}")
            for cid in contract_ids for case in expand(contracts[cid], "numba", "pr") if case.reject is not None]


@pytest.mark.parametrize(("spec", "rule"), _family_rejects("block.exchange", "block.shuffle"))
def test_compile_refuses_the_family_contracts_rejection_cases(adapter: NumbaAdapter, spec: coopcheck.KernelSpec,
                                                               rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as refused:
        adapter.compile(spec, arch="sm_90")
    assert refused.value.rule == rule


def _shuffle(method: str, output: str = "inplace", block: tuple[int, ...] = (64,), dtype: str = "int16",
             ipt: int = 1) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.shuffle", dtype, block, ipt, method, variant=(("output", output),))


def test_a_shuffle_kernel_key_holds_its_output_but_not_its_block(adapter: NumbaAdapter) -> None:
    keys = {adapter.kernel_key(_shuffle("rotate", block=b)) for b in ((7,), (10, 5), (1024,))}
    assert keys == {("block.shuffle", "int16", 1, "rotate", ("output", "inplace"))}
    assert adapter.kernel_key(_shuffle("rotate", output="separate")) not in keys


def test_a_shuffle_contract_kernel_is_named_by_its_specialization_and_takes_one_item_of_scratch_a_thread(
        adapter: NumbaAdapter) -> None:
    spec = _shuffle("down_prefix", output="separate", ipt=4)
    kernel = contract_kernel(spec)
    assert kernel.symbol == coopcheck.kernel_symbol(spec) == kernel.dispatcher.py_func.__qualname__
    assert kernel.symbol.endswith("__ipt4__down_prefix__separate")
    assert contract_kernel(_shuffle("down_prefix", "separate", block=(8, 4, 2), ipt=4)) is kernel
    from coopcheck_numba.adapter import _shared_bytes

    assert _shared_bytes(_shuffle("up", block=(10, 5), dtype="float64", ipt=8)) == 50 * 8


def test_no_shipped_expectation_waives_a_case_of_a_family_numba_builds(adapter: NumbaAdapter) -> None:
    """No shipped waiver may declare a pr case of a family numba builds NotSupported (a family whose builder lands
    takes its waiver away in the same change), and a family it does not build yet is declared whole."""
    from fnmatch import fnmatchcase

    from harness.cases import expand
    from harness.contracts import contracts_dir, load_contracts
    from harness.expectations import load_expectations

    entries = [e for e in load_expectations(contracts_dir() / "expectations.toml")
               if fnmatchcase("numba", e.tags.get("backend", "*"))]
    for contract in load_contracts():
        cases = expand(contract, "numba", "pr")
        waived = [c.id for c in cases if any(fnmatchcase(c.id, e.cases) for e in entries)]
        if contract.operation in adapter.operations:
            assert waived == [], waived[:3]
        else:
            assert len(waived) == len(cases), contract.id
