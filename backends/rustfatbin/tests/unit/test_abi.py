"""The host's view of the crate (coopcheck_rustfatbin.abi) against the crate's source and coop's ABI."""

from __future__ import annotations

import re
from pathlib import Path

import coopcheck
import numpy as np
import pytest
from coopcheck import KernelSpec, exchange, kernel_symbol, reduce, scan, shuffle
from coopcheck_rustfatbin import abi

from harness.cases import expand
from harness.contracts import load_contracts

SOURCES = Path(__file__).resolve().parents[2] / "kernels" / "src"
RUST_TYPES = {"u8": "uint8", "i32": "int32", "i64": "int64"}
#: Where each operation's exported entry is, and the name of its ``fn``.
ENTRIES = {"block.load": ("kernels.rs", "load"), "block.store": ("kernels.rs", "store"),
           "block.exchange": ("exchange_kernels.rs", "entry"), "block.shuffle": ("shuffle_kernels.rs", "entry"),
           "block.reduce": ("reduce_kernels.rs", "entry"), "block.scan": ("scan_kernels.rs", "entry"),
           "warp.reduce": ("warp_reduce_kernels.rs", "entry"), "warp.scan": ("warp_scan_kernels.rs", "entry")}
#: The warp families' batches.
WARP_BATCHES = {"warp.reduce": coopcheck.WarpReduceBatch, "warp.scan": coopcheck.WarpScanBatch}


def _rust_params(operation: str) -> list[abi.Param]:
    """Parameters of the operation's exported ``fn`` in the crate, as abi.Param."""
    file, function = ENTRIES[operation]
    text = (SOURCES / file).read_text()
    found = re.search(rf'extern "ptx-kernel" fn {function}\((.*?)\)', text, re.DOTALL)
    assert found, f"{file}: no exported fn {function}"
    params = []
    for name, pointer, rust in re.findall(r"(\w+): (\*(?:const|mut) )?(\$?\w+)", found[1]):
        params.append(abi.Param(name, None if rust == "$t" else RUST_TYPES[rust], pointer=bool(pointer)))
    return params


def _export_lists(name: str, file: str = "kernels.rs") -> list[list[str]]:
    """Words of each list called ``name`` in the file's ``export!`` invocation (``dtypes {...}``, ``ipts [...]``)."""
    invocation = (SOURCES / file).read_text().split("\nexport! {", 1)[1]
    bodies = re.findall(rf"\b{name}\s*[\[{{](.*?)[\]}}]", invocation, re.DOTALL)
    assert bodies, f"{file}: export! has no {name} list"
    return [re.findall(r"(\w+)(?::|\s|,|$)", body) for body in bodies]


def _export_list(name: str, file: str = "kernels.rs") -> list[str]:
    (words,) = _export_lists(name, file)
    return words


@pytest.mark.parametrize("operation", sorted(ENTRIES))
def test_param_table_matches_the_crate(operation):
    assert list(abi.PARAMS[operation]) == _rust_params(operation)


def test_the_host_knows_every_operation_the_crate_exports():
    assert set(ENTRIES) == abi.OPERATIONS


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
def test_every_pointer_param_but_load_dst_comes_from_the_batch(operation):
    batch = coopcheck.LoadBatch if operation == "block.load" else coopcheck.StoreBatch
    fields = set(batch.__dataclass_fields__)
    names = [p.name for p in abi.PARAMS[operation] if not (operation == "block.load" and p.name == "dst")]
    assert set(names) <= fields, f"not in {batch.__name__}: {set(names) - fields}"


def test_every_reduce_param_but_dst_comes_from_the_batch():
    names = [p.name for p in abi.PARAMS["block.reduce"]]
    assert names[-1] == "dst" and set(names[:-1]) <= set(coopcheck.ReduceBatch.__dataclass_fields__)


def test_every_scan_pointer_param_but_dst_comes_from_the_batch_and_the_values_are_its_run_time_statics():
    params = abi.PARAMS["block.scan"]
    pointers = [p.name for p in params if p.pointer]
    assert pointers[-1] == "dst" and set(pointers[:-1]) <= set(coopcheck.ScanBatch.__dataclass_fields__)
    assert [p.name for p in params if not p.pointer] == list(abi.RUN_TIME_STATICS["block.scan"])


def test_the_crate_reads_the_run_time_statics_by_the_codes_the_host_passes():
    source = (SOURCES / "scan.rs").read_text()
    codes = abi.RUN_TIME_STATICS["block.scan"]
    seeds = dict(re.findall(r"(\d+) => Seed::(\w+),", source))  # any other code is Seed::None
    assert [seeds.get(str(code), "None").lower() for code in range(len(codes["seed"]))] == list(codes["seed"])
    assert re.search(r"const INCLUSIVE: i64 = (\d+);", source)[1] == str(codes["mode"].index("inclusive"))
    assert re.search(r"pub const PREFIX_TILES: usize = (\d+);", source)[1] == str(scan.PREFIX_TILES)


@pytest.mark.parametrize("operation", sorted(WARP_BATCHES))
def test_every_warp_pointer_param_but_dst_comes_from_the_batch_and_the_values_are_its_run_time_statics(operation):
    params = abi.PARAMS[operation]
    pointers = [p.name for p in params if p.pointer]
    assert pointers[-1] == "dst" and set(pointers[:-1]) <= set(WARP_BATCHES[operation].__dataclass_fields__)
    assert [p.name for p in params if not p.pointer] == list(abi.RUN_TIME_STATICS[operation])


def test_the_warp_kernels_read_the_run_time_statics_by_the_codes_the_host_passes():
    reduce_source, scan_source = (SOURCES / "warp_reduce.rs").read_text(), (SOURCES / "warp_scan.rs").read_text()
    const = lambda source, name: int(re.search(rf"const {name}: i64 = (\d+);", source)[1])  # noqa: E731
    assert [const(reduce_source, m.upper()) for m in ("reduce", "head")] == [
        abi.RUN_TIME_STATICS["warp.reduce"]["mode"].index(m) for m in ("reduce", "head")]
    codes = abi.RUN_TIME_STATICS["warp.scan"]
    assert const(scan_source, "INCLUSIVE") == codes["mode"].index("inclusive")
    assert const(scan_source, "INITIAL") == codes["seed"].index("initial")
    assert const(scan_source, "AGGREGATE_ON") == codes["aggregate"].index("on")


@pytest.mark.parametrize(("width", "mode", "codes"), [("7", "reduce", [7, 0]), ("32", "tail", [32, 2]),
                                                      ("1", "head", [1, 1])])
def test_a_warp_reduce_launch_passes_its_width_in_lanes_and_the_code_of_its_mode(width, mode, codes):
    spec = KernelSpec("warp.reduce", "int8", (49,), 1, "any", variant=(("width", width), ("op", "sum"), ("mode", mode)))
    assert [abi.run_time_value(p, spec, None) for p in abi.PARAMS["warp.reduce"] if not p.pointer] == codes
    assert abi.entry_symbol(spec) == "coop_warp_reduce__int8__ipt1__any__sum"


@pytest.mark.parametrize("operation", sorted(WARP_BATCHES))
def test_every_warp_kernel_point_of_the_contract_has_an_entry_that_its_kernel_symbol_holds(operation):
    (contract,) = [c for c in load_contracts() if c.id == operation]
    specs = {case.spec for case in expand(contract, "rustfatbin", "full") if case.reject is None}
    symbols = {s for s in abi.exported_symbols() if s.startswith(f"coop_{operation.replace('.', '_')}__")}
    assert {abi.entry_symbol(s) for s in specs} == symbols
    assert len(symbols) == (8 * 5 + 3 * 4 if operation == "warp.reduce" else 8 * 4 + 3 * 3)  # no float matmul


@pytest.mark.parametrize(("mode", "seed", "codes"), [("inclusive", "none", [0, 0]), ("exclusive", "prefix", [1, 2]),
                                                     ("exclusive", "initial", [1, 1])])
def test_a_scan_launch_passes_the_codes_of_its_mode_and_seed(mode, seed, codes):
    spec = scan_spec("int32", "raking", "sum", mode=mode, seed=seed)
    assert [abi.run_time_value(p, spec, None) for p in abi.PARAMS["block.scan"] if not p.pointer] == codes


def test_the_crate_exports_every_dtype_ipt_and_algorithm_the_host_lists():
    dtypes = _export_list("dtypes")[0::2]  # "uint8: u8, ..." -> names
    assert dtypes == list(coopcheck.DTYPES)
    assert [int(n) for n in _export_list("ipts")] == list(abi.ITEMS_PER_THREAD)
    assert _export_list("algorithms")[0::2] == list(coopcheck.ALGORITHMS)


@pytest.mark.parametrize("file", ["exchange_kernels.rs", "shuffle_kernels.rs"])
def test_the_family_crates_export_every_dtype(file):
    assert _export_list("dtypes", file)[0::2] == list(coopcheck.DTYPES)


def test_the_crate_exports_every_exchange_method_at_the_items_per_thread_the_host_lists():
    assert _export_list("methods", "exchange_kernels.rs")[0::2] == list(exchange.METHODS)
    assert [int(n) for n in _export_list("ipts", "exchange_kernels.rs")] == list(abi.FAMILY_ITEMS_PER_THREAD)


def test_the_crate_exports_every_shuffle_method_at_the_items_per_thread_the_host_lists():
    exported = {}
    file = "shuffle_kernels.rs"
    for ipts, methods in zip(_export_lists("ipts", file), _export_lists("methods", file), strict=True):
        exported |= {method: [int(n) for n in ipts] for method in methods[0::2]}  # "up: Up"
    assert exported == {m: list(abi.exported_items_per_thread("block.shuffle", m)) for m in shuffle.METHODS}


def test_the_crate_exports_reduce_kernels_of_every_dtype_at_the_items_per_thread_the_host_lists():
    file = "reduce_kernels.rs"
    integers, floats = _export_list("integers", file)[0::2], _export_list("floats", file)[0::2]
    assert integers + floats == list(coopcheck.DTYPES) and all(f.startswith("float") for f in floats)
    assert [int(n) for n in _export_list("ipts", file)] == list(abi.REDUCE_ITEMS_PER_THREAD)


def test_the_crate_exports_scan_kernels_of_every_dtype_algorithm_and_operator_at_the_items_per_thread_listed():
    file = "scan_kernels.rs"
    integers, floats = _export_list("integers", file)[0::2], _export_list("floats", file)[0::2]
    assert integers + floats == list(coopcheck.DTYPES) and all(f.startswith("float") for f in floats)
    assert [int(n) for n in _export_list("ipts", file)] == list(abi.SCAN_ITEMS_PER_THREAD)
    invocation = (SOURCES / file).read_text()
    assert re.findall(r"export!\(@one \$dtype \$t \$ipt (\w+) ", invocation) == list(scan.ALGORITHMS)
    operators = re.findall(r"\[((?:\w+: \w+, )*\w+: \w+)\]\); \)\*", invocation)
    assert [[o.split(":")[0] for o in ops.split(", ")] for ops in operators] == [list(scan.OPERATORS),
                                                                                 ["sum", "min", "max"]]


def scan_spec(dtype: str, algorithm: str, op: str, ipt: int = 1, mode: str = "inclusive",
              seed: str = "none") -> KernelSpec:
    return KernelSpec("block.scan", dtype, (32,), ipt, algorithm, variant=(("op", op), ("mode", mode), ("seed", seed)))


def test_the_scan_entries_are_every_combination_the_static_rules_allow_less_mode_and_seed():
    symbols = {s for s in abi.exported_symbols() if s.startswith("coop_block_scan__")}
    # integers: 3 algorithms x 4 operators; floats: no matmul
    assert len(symbols) == len(abi.SCAN_ITEMS_PER_THREAD) * 3 * (8 * 4 + 3 * 3) == 615
    assert abi.entry_symbol(scan_spec("float16", "raking_memoize", "max", 16, "exclusive", "prefix")) in symbols
    assert abi.entry_symbol(scan_spec("int8", "warp_scans", "matmul", 7, seed="initial")) in symbols
    assert abi.entry_symbol(scan_spec("float64", "raking", "matmul")) not in symbols


def test_every_scan_kernel_point_of_the_contract_has_an_entry_that_its_kernel_symbol_begins_with():
    (contract,) = [c for c in load_contracts() if c.id == "block.scan"]
    specs = {case.spec for case in expand(contract, "rustfatbin", "full") if case.reject is None}
    symbols = abi.exported_symbols()
    assert len(specs) == 7 * 5 * 3 * 6 * (8 * 4 + 3 * 3)  # blocks x ipts x algorithms x modes and seeds x ...
    assert {s for s in specs if abi.entry_symbol(s) not in symbols} == set()
    assert all(kernel_symbol(s).startswith(abi.entry_symbol(s) + "__") for s in specs)


def reduce_spec(dtype: str, algorithm: str, op: str, ipt: int = 1) -> KernelSpec:
    return KernelSpec("block.reduce", dtype, (32,), ipt, algorithm, variant=(("op", op),))


def test_the_reduce_kernels_are_every_combination_the_static_rules_allow():
    symbols = {s for s in abi.exported_symbols() if s.startswith("coop_block_reduce__")}
    # integers: raking and warp_reductions x 5 operators, raking_commutative_only x sum, min, max; floats: no matmul
    assert len(symbols) == len(abi.REDUCE_ITEMS_PER_THREAD) * (8 * (2 * 5 + 3) + 3 * (2 * 4 + 3)) == 822
    assert kernel_symbol(reduce_spec("float16", "raking_commutative_only", "max", 16)) in symbols
    assert kernel_symbol(reduce_spec("int8", "warp_reductions", "matmul", 7)) in symbols
    assert kernel_symbol(reduce_spec("uint32", "raking_commutative_only", "first")) not in symbols
    assert kernel_symbol(reduce_spec("float64", "raking", "matmul")) not in symbols


def test_exported_symbols_are_kernel_symbols_of_every_combination():
    symbols = abi.exported_symbols()
    dtypes = len(coopcheck.DTYPES)
    load_store = len(coopcheck.OPERATIONS) * dtypes * len(abi.ITEMS_PER_THREAD) * len(coopcheck.ALGORITHMS)
    exchanges = dtypes * len(abi.FAMILY_ITEMS_PER_THREAD) * len(exchange.METHODS) * 2 * 2  # slicing, output
    shuffles = dtypes * 2 * (2 * 1 + 4 * len(abi.FAMILY_ITEMS_PER_THREAD))  # output; offset, rotate at ipt 1
    reduces, scans, warp_reduces, warp_scans = 822, 615, 52, 41
    assert len(symbols) == load_store + exchanges + shuffles + reduces + scans + warp_reduces + warp_scans == (
        770 + 2112 + 572 + 822 + 615 + 52 + 41)
    assert kernel_symbol(KernelSpec("block.store", "float16", (8, 4, 2), 7, "warp_transpose")) in symbols
    assert "coop_block_load__int32__ipt4__striped" in symbols
    assert "coop_block_exchange__uint8__ipt7__scatter_to_striped_flagged__on__separate" in symbols
    assert "coop_block_shuffle__float64__ipt1__rotate__inplace" in symbols
    assert "coop_block_shuffle__float64__ipt2__rotate__inplace" not in symbols


@pytest.mark.parametrize(("dtype", "block", "ipt", "algorithm", "expected"), [
    ("float64", (1024,), 16, "transpose", 1024 * 16 * 8),
    ("uint8", (5, 3, 2), 3, "transpose", 30 * 3),
    ("float16", (32, 4), 7, "warp_transpose", 128 * 7 * 2),
    ("int32", (128,), 4, "vectorize", 0),
])
def test_dynamic_shared_bytes_is_the_transpose_scratch_tile(dtype, block, ipt, algorithm, expected):
    assert abi.dynamic_shared_bytes(KernelSpec("block.load", dtype, block, ipt, algorithm)) == expected


@pytest.mark.parametrize(("dtype", "block", "ipt", "slicing", "expected"), [
    ("float64", (1024,), 8, "off", 1024 * 8 * 8),
    ("float64", (1024,), 8, "on", 32 * 8 * 8),
    ("uint8", (5, 3, 2), 3, "on", 30 * 3),  # fewer than 32 threads: the one warp's share is the tile
    ("int16", (10, 5), 7, "off", 50 * 7 * 2),
])
def test_an_exchange_takes_its_tile_or_time_sliced_one_warps_share(dtype, block, ipt, slicing, expected):
    spec = KernelSpec("block.exchange", dtype, block, ipt, "scatter_to_striped",
                      variant=(("slicing", slicing), ("output", "inplace")))
    assert abi.dynamic_shared_bytes(spec) == expected


def test_a_shuffle_takes_one_item_a_thread():
    spec = KernelSpec("block.shuffle", "int64", (10, 5), 4, "up", variant=(("output", "separate"),))
    assert abi.dynamic_shared_bytes(spec) == 50 * 8


@pytest.mark.parametrize(("dtype", "block"), [("float16", (65,)), ("uint64", (13, 5)), ("int8", (1,))])
def test_a_reduction_takes_one_item_a_thread_and_returns_two_a_thread(dtype, block):
    spec = KernelSpec("block.reduce", dtype, block, 3, "warp_reductions", variant=(("op", "first"),))
    threads = int(np.prod(block))
    assert abi.dynamic_shared_bytes(spec) == threads * np.dtype(dtype).itemsize
    assert abi.out_length(spec) == reduce.out_length(spec) == 2 * threads


@pytest.mark.parametrize(("dtype", "block", "seed"), [("float16", (65,), "prefix"), ("uint64", (13, 5), "none"),
                                                     ("int8", (1,), "initial")])
def test_a_scan_takes_an_item_a_thread_a_warp_and_one_more(dtype, block, seed):
    spec = KernelSpec("block.scan", dtype, block, 7, "raking", variant=(("op", "sum"), ("mode", "inclusive"),
                                                                         ("seed", seed)))
    threads = int(np.prod(block))
    assert abi.dynamic_shared_bytes(spec) == (threads + 32 + 1) * np.dtype(dtype).itemsize
    assert abi.out_length(spec) == scan.out_length(spec)


@pytest.mark.parametrize("dtype", coopcheck.DTYPES)
def test_item_bytes_are_numpy_item_sizes(dtype):
    assert abi.ITEM_BYTES[dtype] == np.dtype(dtype).itemsize
