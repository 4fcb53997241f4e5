"""RustFatbinAdapter on a hand-assembled fatbin: static validation, support, keys, lookups, launch args."""

from __future__ import annotations

from pathlib import Path

import coopcheck
import numpy as np
import pytest
from coopcheck import InvalidParameter, KernelSpec, LoadBatch, StoreBatch, fatbin
from coopcheck_rustfatbin.adapter import RustFatbinAdapter, _launch_args
from coopcheck_rustfatbin.build import FATBIN_NAME
from coopcheck_rustfatbin.bundle import FATBIN_ENV, LoaderError
from coopcheck_rustfatbin.loader import In, InOut, Out


@pytest.fixture
def adapter(tmp_path: Path, assembler) -> RustFatbinAdapter:
    """An adapter over a fatbin with an sm_90 ELF exporting every contract kernel."""
    return RustFatbinAdapter(assembler.build(tmp_path, assembler.entry(fatbin.KIND_ELF, 90, assembler.elf(256))))


def spec(operation="block.load", dtype="int32", block=(128,), ipt=4, algorithm="direct", **statics) -> KernelSpec:
    return KernelSpec(operation, dtype, block, ipt, algorithm, tuple(statics.items()))


def reduce_spec(dtype="int32", block=(65,), ipt=2, algorithm="raking", op="sum") -> KernelSpec:
    return KernelSpec("block.reduce", dtype, block, ipt, algorithm, variant=(("op", op),))


def scan_spec(dtype="int32", block=(65,), ipt=2, algorithm="raking", op="sum", mode="inclusive",
              seed="none") -> KernelSpec:
    return KernelSpec("block.scan", dtype, block, ipt, algorithm, variant=(("op", op), ("mode", mode), ("seed", seed)))


def test_is_a_coop_adapter(adapter):
    assert isinstance(adapter, coopcheck.Adapter) and adapter.name == "rustfatbin"


def test_declares_block_reduce_and_scan_and_the_warp_families(adapter):
    assert {"block.reduce", "block.scan", "warp.reduce", "warp.scan"} <= adapter.operations


@pytest.mark.parametrize(("bad", "rule"), [
    (spec(ipt=0), "items_per_thread"),
    (spec(block=(100,), algorithm="warp_transpose"), "warp_multiple"),
    (spec(dtype="float32", block=(5, 3, 2), ipt=2, algorithm="warp_transpose"), "warp_multiple"),
    (spec(block=(64,), ipt=2, static_valid_items=-1), "valid_items_range"),
    (spec(block=(64,), ipt=2, algorithm="striped", static_valid_items=129), "valid_items_range"),
    (spec(block=(64,), ipt=2, static_offset=-1), "offset_negative"),
    (spec(operation="block.store", store_oob_default=True), "store_oob_default"),
    (spec(dtype="int128"), "dtype"),
    (reduce_spec(algorithm="raking_commutative_only", op="first"), "reduce_commutative"),
    (reduce_spec(dtype="float32", op="matmul"), "reduce_integer_operator"),
    (reduce_spec(op="prod"), "reduce_operator"),
    (reduce_spec(ipt=5, algorithm="warp_reductions_nondeterministic"), "reduce_algorithm"),
    (scan_spec(dtype="float64", op="matmul", seed="prefix"), "scan_integer_operator"),
    (scan_spec(mode="both"), "scan_mode"),
    (scan_spec(seed="callback"), "scan_seed"),
    (scan_spec(ipt=3, algorithm="raking_nondeterministic"), "scan_algorithm"),
])
def test_compile_refuses_bad_statics_with_their_rule(adapter, bad, rule):
    assert adapter.unsupported_reason(bad) is None  # a rejection case must reach compile
    with pytest.raises(InvalidParameter) as refused:
        adapter.compile(bad, arch="sm_90")
    assert refused.value.rule == rule


def test_an_items_per_thread_the_crate_lacks_is_unsupported_with_the_list(adapter):
    reason = adapter.unsupported_reason(spec(ipt=5))
    assert reason == ("the rustfatbin crate exports block.load kernels for items_per_thread in 1, 2, 3, 4, 7, 8, 16 "
                      "only (got 5)")


@pytest.mark.parametrize(("operation", "algorithm", "ipt", "listed"), [
    ("block.exchange", "scatter_to_striped", 16, "1, 2, 3, 4, 7, 8"),
    ("block.shuffle", "up", 5, "1, 2, 3, 4, 7, 8"),
])
def test_a_family_items_per_thread_the_crate_lacks_is_unsupported(adapter, operation, algorithm, ipt, listed):
    variant = (("slicing", "off"), ("output", "inplace")) if operation == "block.exchange" else (("output", "inplace"),)
    reason = adapter.unsupported_reason(KernelSpec(operation, "int32", (64,), ipt, algorithm, variant=variant))
    assert reason == (f"the rustfatbin crate exports {operation} kernels for items_per_thread in {listed} only "
                      f"(got {ipt})")


def test_a_shuffle_offset_past_one_item_is_refused_by_its_rule_not_unsupported(adapter):
    bad = KernelSpec("block.shuffle", "int32", (64,), 2, "offset", variant=(("output", "inplace"),))
    assert adapter.unsupported_reason(bad) is None
    with pytest.raises(InvalidParameter) as refused:
        adapter.compile(bad, arch="sm_90")
    assert refused.value.rule == "shuffle_scalar"


def test_the_exchange_and_shuffle_kernels_key_by_their_scratch(adapter):
    def exchange(block, slicing):
        return KernelSpec("block.exchange", "int32", block, 2, "scatter_to_blocked",
                          variant=(("slicing", slicing), ("output", "separate")))

    symbol = "coop_block_exchange__int32__ipt2__scatter_to_blocked__on__separate"
    # time-sliced, every block of at least a warp takes one warp's share
    assert adapter.kernel_key(exchange((64,), "on")) == adapter.kernel_key(exchange((16, 8), "on")) \
        == (symbol, 32 * 2 * 4)
    assert adapter.kernel_key(exchange((64,), "off")) != adapter.kernel_key(exchange((16, 8), "off"))


def test_a_reduction_keys_by_its_scratch_of_one_item_a_thread(adapter):
    symbol = "coop_block_reduce__int16__ipt7__warp_reductions__matmul"
    keys = {adapter.kernel_key(reduce_spec("int16", block, 7, "warp_reductions", "matmul"))
            for block in [(65,), (13, 5), (100,)]}
    assert keys == {(symbol, 65 * 2), (symbol, 100 * 2)}


def test_a_scan_of_every_mode_and_seed_keys_by_one_entry_and_its_scratch(adapter):
    symbol = "coop_block_scan__uint16__ipt7__warp_scans__matmul"
    keys = {adapter.kernel_key(scan_spec("uint16", block, 7, "warp_scans", "matmul", mode, seed))
            for block in [(65,), (13, 5), (1,)] for mode in ("inclusive", "exclusive")
            for seed in ("none", "initial", "prefix")}
    assert keys == {(symbol, (65 + 33) * 2), (symbol, (1 + 33) * 2)}


def test_a_scan_launch_is_named_by_its_entry_and_compile_looks_the_entry_up(adapter):
    s = scan_spec("float16", (8, 4, 2), 16, "raking_memoize", "max", "exclusive", "prefix")
    assert isinstance(adapter, coopcheck.LaunchNaming)
    assert adapter.launched_symbol(s) == coopcheck.launched_symbol(adapter, s) \
        == "coop_block_scan__float16__ipt16__raking_memoize__max"
    compiled = adapter.compile(s, arch="sm_90")
    assert compiled.symbol == adapter.launched_symbol(s) and compiled.dynamic_shared_bytes == (64 + 33) * 2
    assert adapter.launched_symbol(reduce_spec()) == coopcheck.kernel_symbol(reduce_spec())


def test_compile_looks_a_reduction_up_with_its_scratch(adapter):
    compiled = adapter.compile(reduce_spec("float16", (8, 4, 2), 16, "raking_commutative_only", "max"), arch="sm_90")
    assert compiled.symbol == "coop_block_reduce__float16__ipt16__raking_commutative_only__max"
    assert compiled.dynamic_shared_bytes == 64 * 2


def test_every_block_shape_shares_one_kernel_key(adapter):
    assert adapter.kernel_key(spec(block=(128,))) == adapter.kernel_key(spec(block=(16, 8))) \
        == "coop_block_load__int32__ipt4__direct"


def test_the_transpose_family_keys_by_its_scratch_size(adapter):
    keys = {adapter.kernel_key(spec(block=b, algorithm="transpose")) for b in [(128,), (16, 8), (64,)]}
    symbol = "coop_block_load__int32__ipt4__transpose"
    assert keys == {(symbol, 128 * 4 * 4), (symbol, 64 * 4 * 4)}


def test_a_spec_with_bad_statics_keys_apart_from_its_symbol(adapter):
    good, bad = spec(), spec(static_offset=-1)
    assert adapter.kernel_key(bad) != adapter.kernel_key(good)


def test_compile_looks_the_symbol_up_for_the_arch(adapter):
    compiled = adapter.compile(spec(dtype="float16", block=(32, 4), ipt=7, algorithm="warp_transpose"), arch="sm_90")
    assert compiled.symbol == "coop_block_load__float16__ipt7__warp_transpose"
    assert compiled.dynamic_shared_bytes == 128 * 7 * 2


def test_compile_for_an_arch_the_fatbin_lacks_names_what_it_has(adapter):
    with pytest.raises(LoaderError, match=r"no build for sm_80; it has ELF sm_90"):
        adapter.compile(spec(), arch="sm_80")


def test_artifacts_carry_the_arch_elf_and_the_launch_shared_memory(adapter, assembler):
    artifacts = adapter.artifacts(adapter.compile(spec(algorithm="transpose"), arch="sm_90"))
    assert artifacts.kernel_name == "coop_block_load__int32__ipt4__transpose"
    assert artifacts.cubin == assembler.elf(256) and artifacts.arch == "sm_90" and artifacts.ptx is None
    assert artifacts.dynamic_shared_bytes == 128 * 4 * 4


def test_a_missing_fatbin_says_how_to_build_it(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(FATBIN_ENV, str(tmp_path / FATBIN_NAME))
    with pytest.raises(LoaderError, match=r"coop_kernels.fatbin: missing; build the kernels with `python -m"):
        RustFatbinAdapter().compile(spec(), arch="sm_90")


def _load_batch(s: KernelSpec, n_blocks: int = 2) -> LoadBatch:
    return LoadBatch(
        src=np.zeros(n_blocks * 1024, s.dtype), init=np.zeros(n_blocks * s.tile, s.dtype),
        valid=np.full(n_blocks, 3, np.int32), offset=np.zeros(n_blocks, np.int64),
        has_oob=np.zeros(n_blocks, np.int32), oob=np.zeros(n_blocks, s.dtype), region=1024,
    )


def test_load_arguments_follow_the_abi_with_dst_as_output():
    s = spec()
    batch = _load_batch(s)
    args = _launch_args("k", s, batch)
    assert [type(a) for a in args] == [In, In, Out, In, In, In, In, int]
    assert args[0].array is batch.src and args[-1] == 1024
    assert args[2] == Out(len(batch.init), "int32")


@pytest.mark.parametrize("output", ["inplace", "separate"])
def test_exchange_arguments_follow_the_abi_with_dst_the_output_length(output):
    s = KernelSpec("block.exchange", "uint8", (10, 5), 3, "scatter_to_striped_flagged",
                   variant=(("slicing", "on"), ("output", output)))
    n = 3
    batch = coopcheck.ExchangeBatch(np.zeros(n * s.tile, "uint8"), np.zeros(n * s.tile, np.int32),
                                    np.ones(n * s.tile, np.int32), s.tile)
    args = _launch_args("k", s, batch)
    assert [type(a) for a in args] == [In, In, In, Out]
    assert args[1].array is batch.ranks and args[2].array is batch.flags
    assert args[3] == Out(n * s.tile * (1 if output == "inplace" else 2), "uint8")


def test_shuffle_arguments_make_room_for_the_block_items():
    s = KernelSpec("block.shuffle", "float16", (7,), 2, "down_prefix", variant=(("output", "separate"),))
    batch = coopcheck.ShuffleBatch(np.zeros(4 * s.tile, "float16"), np.zeros(4 * (s.tile + 7), "float16"),
                                   np.zeros(4, np.int32), s.tile)
    args = _launch_args("k", s, batch)
    assert [type(a) for a in args] == [In, In, In, Out]
    assert args[3] == Out(4 * (2 * s.tile + 7), "float16")


def test_reduce_arguments_follow_the_abi_with_dst_two_items_a_thread():
    s = reduce_spec("uint8", (13, 5), 3, "raking", "first")
    n = 4
    batch = coopcheck.ReduceBatch(np.zeros(n * s.tile, "uint8"), np.ones(n, np.int32), np.ones(n, "uint8"), s.tile)
    args = _launch_args("k", s, batch)
    assert [type(a) for a in args] == [In, In, In, Out]
    assert args[0].array is batch.items and args[1].array is batch.valid and args[2].array is batch.sentinel
    assert args[3] == Out(n * 2 * 65, "uint8")


@pytest.mark.parametrize(("mode", "seed", "tiles", "codes"), [("inclusive", "none", 1, [0, 0]),
                                                               ("exclusive", "prefix", 3, [1, 2])])
def test_scan_arguments_follow_the_abi_with_mode_and_seed_codes_last(mode, seed, tiles, codes):
    s = scan_spec("int64", (13, 5), 4, "warp_scans", "min", mode, seed)
    n = 3
    batch = coopcheck.ScanBatch(np.zeros(n * tiles * s.tile, "int64"), np.ones(n, "int64"), s.tile, tiles)
    args = _launch_args("k", s, batch)
    assert [type(a) for a in args] == [In, In, Out, int, int] and args[3:] == codes
    assert args[0].array is batch.items and args[1].array is batch.initial
    assert args[2] == Out(n * (tiles * (s.tile + 65) + 65), "int64")


def test_warp_reduce_arguments_follow_the_abi_with_width_and_mode_codes_last():
    s = KernelSpec("warp.reduce", "int16", (13, 5), 1, "any", variant=(("width", "24"), ("op", "first"),
                                                                        ("mode", "tail")))
    n = 2
    batch = coopcheck.WarpReduceBatch(np.zeros(n * 65, "int16"), np.zeros(n * 65, "uint8"), np.ones(n, np.int32),
                                      np.ones(n, "int16"), 65)
    args = _launch_args("k", s, batch)
    assert [type(a) for a in args] == [In, In, In, In, Out, int, int] and args[5:] == [24, 2]
    assert args[1].array is batch.flags and args[3].array is batch.sentinel
    assert args[4] == Out(n * 2 * 65, "int16")


def test_every_width_and_mode_of_a_warp_reduce_keys_one_entry_without_scratch(adapter):
    keys = {adapter.kernel_key(KernelSpec("warp.reduce", "int16", block, 1, "any", variant=(
        ("width", width), ("op", "first"), ("mode", mode)))) for block in ((1,), (13, 5), (1024,))
        for width in ("1", "7", "32") for mode in ("reduce", "head")}
    assert keys == {"coop_warp_reduce__int16__ipt1__any__first"}


@pytest.mark.parametrize(("aggregate", "out"), [("on", 2), ("off", 1)])
def test_warp_scan_arguments_follow_the_abi_with_the_run_time_codes_last(aggregate, out):
    s = KernelSpec("warp.scan", "uint64", (100,), 1, "any", variant=(
        ("width", "7"), ("op", "matmul"), ("mode", "exclusive"), ("seed", "initial"), ("aggregate", aggregate)))
    n = 3
    batch = coopcheck.WarpScanBatch(np.zeros(n * 100, "uint64"), np.ones(n, "uint64"), 100)
    args = _launch_args("k", s, batch)
    assert [type(a) for a in args] == [In, In, Out, int, int, int, int]
    assert args[3:] == [7, 1, 1, 0 if aggregate == "on" else 1]
    assert args[2] == Out(n * out * 100, "uint64")


def test_a_sentinel_of_another_dtype_is_refused():
    s = reduce_spec("float16")
    batch = coopcheck.ReduceBatch(np.zeros(s.tile, "float16"), np.ones(1, np.int32), np.ones(1, "uint16"), s.tile)
    with pytest.raises(LoaderError, match="k: argument sentinel is uint16, the kernel takes float16"):
        _launch_args("k", s, batch)


def test_a_ranks_argument_of_the_wrong_element_type_is_refused():
    s = KernelSpec("block.exchange", "int32", (32,), 1, "scatter_to_blocked",
                   variant=(("slicing", "off"), ("output", "inplace")))
    batch = coopcheck.ExchangeBatch(np.zeros(32, np.int32), np.zeros(32, np.int64), np.zeros(32, np.int32), 32)
    with pytest.raises(LoaderError, match="k: argument ranks is int64, the kernel takes int32"):
        _launch_args("k", s, batch)


def test_store_arguments_follow_the_abi_with_dst_in_and_out():
    s = spec(operation="block.store", dtype="float16")
    batch = StoreBatch(items=np.zeros(s.tile, "float16"), dst=np.zeros(2048, "float16"),
                       valid=np.ones(1, np.int32), offset=np.zeros(1, np.int64), region=2048)
    args = _launch_args("k", s, batch)
    assert [type(a) for a in args] == [In, InOut, In, In, int]
    assert args[1].array is batch.dst


def test_an_argument_of_the_wrong_element_type_is_refused():
    s = spec()
    batch = _load_batch(s)
    batch.offset = batch.offset.astype(np.int32)
    with pytest.raises(LoaderError, match="k: argument offset is int32, the kernel takes int64"):
        _launch_args("k", s, batch)


@pytest.mark.parametrize("contract_id", ["block.scan", "warp.reduce", "warp.scan"])
@pytest.mark.parametrize("profile", ["pr", "full"])
def test_the_shipped_expectations_declare_exactly_the_cases_it_declines(adapter, profile, contract_id):
    """The gpu lanes accept a declined case only where an expectation declares it, and an entry naming a case the
    adapter runs (a rejection case, which it still refuses by rule) turns its pass into an UnexpectedPass. It
    declines none of these families' cases now (its raking Scans of 65 threads hung until a60b42a)."""
    from fnmatch import fnmatchcase

    from harness.cases import expand
    from harness.contracts import contracts_dir, load_contracts
    from harness.expectations import load_expectations
    from harness.families import launched

    contract = {c.id: c for c in load_contracts()}[contract_id]
    entries = [e for e in load_expectations(contracts_dir() / "expectations.toml")
               if e.tags.get("backend") == "rustfatbin" and fnmatchcase("gpu", e.tags.get("lane", "*"))]
    cases = expand(contract, "rustfatbin", profile)
    declined = {c.id for c in cases if c.reject is None and not launched(adapter, c.spec, [c])}
    declared = {c.id for c in cases if any(fnmatchcase(c.id, e.cases) for e in entries)}
    assert declared == declined
