"""The adapter's host side: registration without the DSL, kernel keys, arch names, batch checks,
the launch-size reader and the artifact cache."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import coopcheck
import numpy as np
import pytest
from coopcheck_cutlass import adapter as adapter_module
from coopcheck_cutlass.adapter import UNWRITTEN, CutlassAdapter, dsl_arch
from coopcheck_cutlass.artifacts import ArtifactError, launch_dynamic_smem
from coopcheck_cutlass.cache import ArtifactCache

SPEC = coopcheck.KernelSpec("block.load", "int16", (16, 8), 4, "striped")


def test_the_entry_point_names_the_adapter() -> None:
    (point,) = [ep for ep in entry_points(group="coopcheck.backends") if ep.name == "cutlass"]
    assert point.value == "coopcheck_cutlass.adapter:CutlassAdapter"
    assert isinstance(point.load()(), coopcheck.Adapter)


@pytest.mark.parametrize(("spec", "rule"), [
    ('KernelSpec("block.load", "int32", (100,), 4, "warp_transpose")', "warp_multiple"),
    ('KernelSpec("block.exchange", "int32", (100,), 4, "blocked_to_warp_striped", '
     'variant=(("slicing", "on"), ("output", "inplace")))', "exchange_warp_multiple"),
    ('KernelSpec("block.shuffle", "int32", (64,), 1, "rotate", statics=(("static_distance", 64),), '
     'variant=(("output", "inplace"),))', "shuffle_rotate_distance"),
    ('KernelSpec("block.reduce", "uint32", (128,), 2, "raking_commutative_only", variant=(("op", "matmul"),))',
     "reduce_commutative"),
    ('KernelSpec("block.scan", "float32", (32,), 1, "raking", '
     'variant=(("op", "matmul"), ("mode", "exclusive"), ("seed", "initial")))', "scan_integer_operator"),
])
def test_registering_and_refusing_statics_load_no_dsl_and_no_cuda(spec: str, rule: str) -> None:
    """In a fresh interpreter: register the backend, let it refuse a bad static, list what loaded."""
    probe = f"""
import json, sys
import coopcheck
from coopcheck import KernelSpec
adapter = coopcheck.register("cutlass")
try:
    adapter.compile({spec}, arch="sm_90")
except coopcheck.InvalidParameter as error:
    rule = error.rule
print(json.dumps({{"rule": rule, "loaded": sorted(m for m in sys.modules
                                                 if m.split(".")[0] in ("cutlass", "cuda", "torch"))}}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {"rule": rule, "loaded": []}


def _exchange(method: str, slicing: str = "off", output: str = "inplace", block: tuple[int, ...] = (64,),
              dtype: str = "int16", ipt: int = 3) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.exchange", dtype, block, ipt, method,
                                variant=(("slicing", slicing), ("output", output)))


def _shuffle(method: str, output: str = "inplace", block: tuple[int, ...] = (64,), dtype: str = "int16",
             ipt: int = 3) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.shuffle", dtype, block, ipt, method, variant=(("output", output),))


def test_declares_the_load_store_exchange_shuffle_reduce_scan_warp_reduce_and_warp_scan_families() -> None:
    assert CutlassAdapter.operations == {"block.load", "block.store", "block.exchange", "block.shuffle",
                                         "block.reduce", "block.scan", "warp.reduce", "warp.scan"}


def test_an_exchange_kernel_key_holds_its_block_and_its_variant() -> None:
    adapter = CutlassAdapter(disk_cache=False)
    spec = _exchange("scatter_to_striped")
    assert adapter.kernel_key(_exchange("scatter_to_striped")) == adapter.kernel_key(spec)
    others = [_exchange("scatter_to_striped", block=(32, 2)), _exchange("scatter_to_striped", slicing="on"),
              _exchange("scatter_to_striped", output="separate"), _exchange("scatter_to_striped_guarded")]
    assert len({adapter.kernel_key(s) for s in [spec, *others]}) == 5


def test_a_shuffle_kernel_key_holds_its_block_and_its_output() -> None:
    adapter = CutlassAdapter(disk_cache=False)
    spec = _shuffle("up_suffix")
    assert adapter.kernel_key(_shuffle("up_suffix")) == adapter.kernel_key(spec)
    others = [_shuffle("up_suffix", block=(32, 2)), _shuffle("up_suffix", output="separate"), _shuffle("up")]
    assert len({adapter.kernel_key(s) for s in [spec, *others]}) == 4


@pytest.mark.parametrize("family", ["block.exchange", "block.shuffle", "block.reduce", "block.scan", "warp.reduce",
                                    "warp.scan"])
def test_no_shipped_expectation_waives_a_cutlass_case_of_a_family_it_builds(family: str) -> None:
    """cutlass has Exchange, Shuffle, Reduce, Scan, Warp Reduce and Warp Scan builders and declines none of their
    cases (it has no ``unsupported_case``), so no shipped waiver declares one of them NotSupported: what is declared
    is what is declined."""
    from fnmatch import fnmatchcase

    from harness.cases import expand
    from harness.contracts import contracts_dir, load_contracts
    from harness.expectations import load_expectations

    contract = {c.id: c for c in load_contracts()}[family]
    shipped = load_expectations(contracts_dir() / "expectations.toml")
    ids = [case.id for case in expand(contract, "cutlass", "pr")]
    entries = [e for e in shipped if fnmatchcase("cutlass", e.tags.get("backend", "*"))]
    assert [i for i in ids if any(fnmatchcase(i, e.cases) for e in entries)] == []
    assert not hasattr(CutlassAdapter, "unsupported_case")


def _reduce(algorithm: str, op: str = "sum", block: tuple[int, ...] = (64,), dtype: str = "int16",
            ipt: int = 3) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.reduce", dtype, block, ipt, algorithm, variant=(("op", op),))


def test_a_reduce_kernel_key_holds_its_block_and_its_operator() -> None:
    adapter = CutlassAdapter(disk_cache=False)
    spec = _reduce("raking")
    assert adapter.kernel_key(_reduce("raking")) == adapter.kernel_key(spec)
    others = [_reduce("raking", block=(32, 2)), _reduce("raking", op="first"), _reduce("warp_reductions")]
    assert len({adapter.kernel_key(s) for s in [spec, *others]}) == 4


def _exchange_batch(spec: coopcheck.KernelSpec, n: int = 2) -> coopcheck.ExchangeBatch:
    size = n * spec.tile
    return coopcheck.ExchangeBatch(items=np.zeros(size, spec.dtype), ranks=np.zeros(size, np.int32),
                                   flags=np.zeros(size, np.int32), tile=spec.tile)


@pytest.mark.parametrize("output", ["inplace", "separate"])
def test_the_exchange_output_has_the_abi_length_and_starts_as_a_recognizable_pattern(output: str) -> None:
    spec = _exchange("blocked_to_striped", output=output)
    arrays = adapter_module._launch_arrays(spec, _exchange_batch(spec))
    assert sorted(arrays) == ["dst", "flags", "items", "ranks"]
    assert arrays["dst"].dtype == np.int16 and arrays["dst"].shape == (2 * coopcheck.exchange.out_length(spec),)
    assert set(arrays["dst"].view(np.uint8)) == {UNWRITTEN}


def _shuffle_batch(spec: coopcheck.KernelSpec, n: int = 2) -> coopcheck.ShuffleBatch:
    return coopcheck.ShuffleBatch(items=np.zeros(n * spec.tile, spec.dtype),
                                  prior=np.zeros(n * (spec.tile + spec.threads), spec.dtype),
                                  distance=np.zeros(n, np.int32), tile=spec.tile)


@pytest.mark.parametrize(("method", "output", "width"), [
    ("up", "inplace", 192), ("down", "separate", 2 * 192), ("up_suffix", "inplace", 192 + 64),
    ("down_prefix", "separate", 2 * 192 + 64)])
def test_the_shuffle_output_has_the_abi_length_and_starts_as_a_recognizable_pattern(method: str, output: str,
                                                                                   width: int) -> None:
    spec = _shuffle(method, output=output)
    arrays = adapter_module._launch_arrays(spec, _shuffle_batch(spec))
    assert sorted(arrays) == ["distance", "dst", "items", "prior"]
    assert arrays["dst"].dtype == np.int16 and arrays["dst"].shape == (2 * width,)
    assert set(arrays["dst"].view(np.uint8)) == {UNWRITTEN}


def _reduce_batch(spec: coopcheck.KernelSpec, n: int = 2) -> coopcheck.ReduceBatch:
    return coopcheck.ReduceBatch(items=np.zeros(n * spec.tile, spec.dtype), valid=np.zeros(n, np.int32),
                                 sentinel=np.zeros(n, spec.dtype), tile=spec.tile)


def test_the_reduce_output_has_the_abi_length_and_starts_as_a_recognizable_pattern() -> None:
    spec = _reduce("raking_commutative_only", op="max")
    arrays = adapter_module._launch_arrays(spec, _reduce_batch(spec))
    assert sorted(arrays) == ["dst", "items", "sentinel", "valid"]
    assert arrays["dst"].dtype == np.int16 and arrays["dst"].shape == (2 * 2 * 64,)  # return values, seen flags
    assert set(arrays["dst"].view(np.uint8)) == {UNWRITTEN}


def _scan(algorithm: str, op: str = "sum", mode: str = "inclusive", seed: str = "none", block: tuple[int, ...] = (64,),
          dtype: str = "int16", ipt: int = 3) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.scan", dtype, block, ipt, algorithm,
                                variant=(("op", op), ("mode", mode), ("seed", seed)))


def _scan_batch(spec: coopcheck.KernelSpec, n: int = 2) -> coopcheck.ScanBatch:
    tiles = coopcheck.scan.tiles(spec)
    return coopcheck.ScanBatch(items=np.zeros(n * tiles * spec.tile, spec.dtype), initial=np.zeros(n, spec.dtype),
                               tile=spec.tile, tiles=tiles)


def test_a_scan_kernel_key_holds_its_block_algorithm_operator_mode_and_seed() -> None:
    adapter = CutlassAdapter(disk_cache=False)
    spec = _scan("raking")
    assert adapter.kernel_key(_scan("raking")) == adapter.kernel_key(spec)
    others = [_scan("raking", block=(32, 2)), _scan("raking_memoize"), _scan("raking", op="matmul"),
              _scan("raking", mode="exclusive"), _scan("raking", seed="prefix")]
    assert len({adapter.kernel_key(s) for s in [spec, *others]}) == 6


@pytest.mark.parametrize(("seed", "tiles"), [("none", 1), ("initial", 1), ("prefix", 3)])
def test_the_scan_output_has_the_abi_length_and_starts_as_a_recognizable_pattern(seed: str, tiles: int) -> None:
    spec = _scan("warp_scans", seed=seed)
    arrays = adapter_module._launch_arrays(spec, _scan_batch(spec))
    assert sorted(arrays) == ["dst", "initial", "items"]
    assert arrays["items"].shape == (2 * tiles * 192,)
    # per block: the scanned tiles, every thread's aggregate of each tile, every thread's callback calls
    assert arrays["dst"].dtype == np.int16 and arrays["dst"].shape == (2 * (tiles * 192 + tiles * 64 + 64),)
    assert set(arrays["dst"].view(np.uint8)) == {UNWRITTEN}


@pytest.mark.parametrize(("algorithm", "block", "shared_bytes"), [
    ("raking", (65,), (65 + 22) * 2),  # the grid and the raking threads' totals
    ("raking", (32,), 32 * 2),  # warp-synchronous: the totals only
    ("warp_scans", (1024,), (1024 + 32) * 2),  # the grid and the warps' aggregates
])
def test_a_scans_shared_bytes_are_its_plans_grid_and_second_level(algorithm: str, block: tuple[int, ...],
                                                                 shared_bytes: int) -> None:
    """The host lane reads the launch's shared bytes from the compiled kernel; the plan says what they must be (the
    compile tests hold the kernel to it); seed prefix adds the slot of the block prefix."""
    from coopcheck_cutlass.scan_plan import scan_plan

    assert scan_plan(_scan(algorithm, block=block)).scratch_bytes == shared_bytes
    assert scan_plan(_scan(algorithm, block=block, seed="prefix")).scratch_bytes == shared_bytes + 2


def _tile_spec_and_batch(family: str) -> tuple[coopcheck.KernelSpec, object]:
    """A kernel spec of an Exchange, Shuffle, Reduce or Scan (int16, 64 threads, ipt 3: a tile of 192) and a batch of
    2 blocks."""
    if family == "block.exchange":
        spec = _exchange("scatter_to_striped_flagged")
        return spec, _exchange_batch(spec)
    if family == "block.reduce":
        spec = _reduce("warp_reductions", op="first")
        return spec, _reduce_batch(spec)
    if family == "block.scan":
        spec = _scan("raking_memoize", seed="prefix")
        return spec, _scan_batch(spec)
    spec = _shuffle("down_prefix")
    return spec, _shuffle_batch(spec)


@pytest.mark.parametrize(("family", "field", "value", "message"), [
    ("block.exchange", "ranks", np.zeros(2 * 192, np.int64), r"batch\.ranks: expected int32\[384\] \(got int64"),
    ("block.exchange", "items", np.zeros(2 * 192, np.int32), r"batch\.items: expected int16\[384\]"),
    ("block.exchange", "flags", np.zeros(3, np.int32), r"batch\.flags: expected int32\[384\] \(got int32\[3\]\)"),
    ("block.exchange", "tile", 64, r"batch\.tile: expected 192 \(got 64\)"),
    ("block.shuffle", "items", np.zeros(2 * 192, np.int32), r"batch\.items: expected int16\[384\] \(got int32"),
    ("block.shuffle", "prior", np.zeros(2 * 192, np.int16), r"batch\.prior: expected int16\[512\] \(got int16\[384"),
    ("block.shuffle", "distance", np.zeros(2, np.int64), r"batch\.distance: expected int32\[2\] \(got int64\[2\]\)"),
    ("block.shuffle", "tile", 64, r"batch\.tile: expected 192 \(got 64\)"),
    ("block.reduce", "items", np.zeros(2 * 192, np.int32), r"batch\.items: expected int16\[384\] \(got int32"),
    ("block.reduce", "valid", np.zeros(2, np.int64), r"batch\.valid: expected int32\[2\] \(got int64\[2\]\)"),
    ("block.reduce", "sentinel", np.zeros(3, np.int16), r"batch\.sentinel: expected int16\[2\] \(got int16\[3"),
    ("block.reduce", "tile", 64, r"batch\.tile: expected 192 \(got 64\)"),
    ("block.scan", "items", np.zeros(2 * 192, np.int16), r"batch\.items: expected int16\[1152\] \(got int16\[384"),
    ("block.scan", "initial", np.zeros(2, np.uint16), r"batch\.initial: expected int16\[2\] \(got uint16\[2\]\)"),
    ("block.scan", "tile", 64, r"batch\.tile: expected 192 \(got 64\)"),
    ("block.scan", "tiles", 1, r"batch\.tiles: expected 3 \(got 1\)"),
])
def test_a_tile_family_batch_that_breaks_the_abi_is_refused_naming_the_field(
        family: str, field: str, value: object, message: str) -> None:
    spec, batch = _tile_spec_and_batch(family)
    setattr(batch, field, value)
    with pytest.raises(ValueError, match=message):
        adapter_module._launch_arrays(spec, batch)


def test_an_exchange_batch_for_a_shuffle_kernel_and_the_reverse_are_refused() -> None:
    spec, other = _shuffle("up"), _exchange("striped_to_blocked")
    with pytest.raises(TypeError, match=r"block\.reduce needs a ReduceBatch \(got ShuffleBatch\)"):
        adapter_module._launch_arrays(_reduce("raking"), _shuffle_batch(spec))
    with pytest.raises(TypeError, match=r"block\.scan needs a ScanBatch \(got ReduceBatch\)"):
        adapter_module._launch_arrays(_scan("raking"), _reduce_batch(_reduce("raking")))
    with pytest.raises(TypeError, match=r"block\.shuffle needs a ShuffleBatch \(got ExchangeBatch\)"):
        adapter_module._launch_arrays(spec, _exchange_batch(other))
    with pytest.raises(TypeError, match=r"block\.exchange needs an ExchangeBatch \(got ShuffleBatch\)"):
        adapter_module._launch_arrays(other, _shuffle_batch(spec))


def test_a_load_batch_for_an_exchange_kernel_and_the_reverse_are_refused() -> None:
    spec = _exchange("striped_to_blocked")
    with pytest.raises(TypeError, match=r"block\.exchange needs an ExchangeBatch \(got LoadBatch\)"):
        adapter_module._launch_arrays(spec, _load_batch())
    with pytest.raises(TypeError, match=r"block\.load needs a LoadBatch \(got ExchangeBatch\)"):
        adapter_module._launch_arrays(SPEC, _exchange_batch(spec))


def test_the_block_shape_is_part_of_the_kernel_key() -> None:
    adapter = CutlassAdapter(disk_cache=False)
    same = coopcheck.KernelSpec("block.load", "int16", (16, 8), 4, "striped")
    assert adapter.kernel_key(same) == adapter.kernel_key(SPEC)
    assert adapter.kernel_key(coopcheck.KernelSpec("block.load", "int16", (32, 4), 4, "striped")) != \
        adapter.kernel_key(SPEC)


@pytest.mark.parametrize(("arch", "target"), [("sm_90", "sm_90a"), ("sm_90a", "sm_90a"), ("sm_100", "sm_100a"),
                                              ("sm_100f", "sm_100f"), ("sm_80", "sm_80")])
def test_the_dsl_targets_the_arch_specific_variant_from_sm_90(arch: str, target: str) -> None:
    assert dsl_arch(arch) == target


@pytest.mark.parametrize("arch", ["90", "sm90", "compute_90", "sm_90x"])
def test_a_malformed_arch_is_refused(arch: str) -> None:
    with pytest.raises(ValueError, match="arch must look like"):
        dsl_arch(arch)


def _load_batch(n: int = 2, region: int = 528) -> coopcheck.LoadBatch:
    return coopcheck.LoadBatch(
        src=np.zeros(n * region, np.int16), init=np.zeros(n * SPEC.tile, np.int16),
        valid=np.zeros(n, np.int32), offset=np.zeros(n, np.int64), has_oob=np.zeros(n, np.int32),
        oob=np.zeros(n, np.int16), region=region,
    )


def test_the_load_output_starts_as_a_recognizable_pattern() -> None:
    arrays = adapter_module._launch_arrays(SPEC, _load_batch())
    assert arrays["dst"].dtype == np.int16 and arrays["dst"].shape == (2 * SPEC.tile,)
    assert set(arrays["dst"].view(np.uint8)) == {UNWRITTEN}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("src", np.zeros(2 * 528, np.int32), r"batch\.src: expected int16\[1056\] \(got int32\[1056\]\)"),
     ("has_oob", np.zeros(3, np.int32), r"batch\.has_oob: expected int32\[2\] \(got int32\[3\]\)"),
     ("offset", np.zeros(2, np.int32), r"batch\.offset: expected int64\[2\]")],
)
def test_a_batch_that_breaks_the_abi_is_refused_naming_the_field(field: str, value: np.ndarray,
                                                                 message: str) -> None:
    batch = _load_batch()
    setattr(batch, field, value)
    with pytest.raises(ValueError, match=message):
        adapter_module._launch_arrays(SPEC, batch)


def test_a_store_batch_for_a_load_kernel_is_refused() -> None:
    store = coopcheck.StoreBatch(items=np.zeros(SPEC.tile, np.int16), dst=np.zeros(528, np.int16),
                            valid=np.zeros(1, np.int32), offset=np.zeros(1, np.int64), region=528)
    with pytest.raises(TypeError, match=r"block\.load needs a LoadBatch"):
        adapter_module._launch_arrays(SPEC, store)


_CONFIG = "!llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)>"
_HOST_IR = f"""
    %9 = llvm.mlir.constant(0 : i64) : i64
    %10 = llvm.mlir.constant(768 : i64) : i64
    %12 = llvm.alloca %5 x {_CONFIG} : (i32) -> !llvm.ptr
    %17 = llvm.getelementptr %12[0, 1, 2] : (!llvm.ptr) -> !llvm.ptr, {_CONFIG}
    llvm.store %9, %17 : i64, !llvm.ptr
    %18 = llvm.getelementptr %12[0, 2] : (!llvm.ptr) -> !llvm.ptr, {_CONFIG}
    llvm.store %10, %18 : i64, !llvm.ptr
"""


def test_the_launch_size_is_the_constant_stored_in_the_launch_configuration() -> None:
    assert launch_dynamic_smem(_HOST_IR, "k") == 768


@pytest.mark.parametrize(
    ("host_ir", "message"),
    [("", "expected one launch configuration in the host code, found 0"),
     (_HOST_IR.replace("llvm.store %10, %18", "llvm.store %10, %19"), "is not stored once"),
     (_HOST_IR.replace("%10 = llvm.mlir.constant(768 : i64)", "%10 = llvm.load %3"), "not a compile-time")],
)
def test_an_unreadable_launch_size_is_an_error_naming_the_kernel(host_ir: str, message: str) -> None:
    with pytest.raises(ArtifactError, match=f"^k: .*{message}"):
        launch_dynamic_smem(host_ir, "k")


def test_the_artifact_cache_returns_what_it_stored_for_that_spec_only(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ArtifactCache(tmp_path / "cache")
    stored = coopcheck.Artifacts(kernel_name="k_0", cubin=b"\x7fELF", ptx="// ptx", arch="sm_90a",
                            dynamic_shared_bytes=768)
    assert cache.get(SPEC, "sm_90a") is None
    cache.put(SPEC, "sm_90a", stored)
    cache.put(SPEC, "sm_90a", stored)  # a second writer of the same entry changes nothing
    assert cache.get(SPEC, "sm_90a") == stored
    assert cache.get(SPEC, "sm_100a") is None
    assert cache.get(coopcheck.KernelSpec("block.load", "int16", (16, 8), 4, "direct"), "sm_90a") is None
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.name.startswith(".")] == []
    monkeypatch.setenv("CUTE_DSL_LINEINFO", "1")  # a DSL setting may change the code
    assert cache.get(SPEC, "sm_90a") is None


def _contract_rejects() -> list[object]:
    """Every contract's rejection cases, with the specs the engine builds for them."""
    from harness.cases import expand
    from harness.contracts import load_contracts

    return [pytest.param(case.spec, case.reject.rule, id=f"{contract.id}/{case.reject.name}")
            for contract in load_contracts() if contract.operation in CutlassAdapter.operations
            for case in expand(contract, "cutlass", "pr") if case.reject is not None]


def test_the_families_built_are_declared_and_their_rejection_cases_asked() -> None:
    """Every family is built (Load/Store, Exchange, Shuffle, Reduce, Scan, Warp Reduce and Warp Scan), so their
    rejection cases are asked."""
    from harness.contracts import load_contracts

    built = {c.operation for c in load_contracts()} & CutlassAdapter.operations
    assert built == {"block.load", "block.store", "block.exchange", "block.shuffle", "block.reduce",
                     "block.scan", "warp.reduce", "warp.scan"} == set(CutlassAdapter.operations)
    assert len(_contract_rejects()) == sum(len(c.rejects) for c in load_contracts() if c.operation in built)


@pytest.mark.parametrize(("spec", "rule"), _contract_rejects())
def test_the_contracts_rejection_cases_are_refused_naming_the_rule(spec: coopcheck.KernelSpec, rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        CutlassAdapter(disk_cache=False).compile(spec, arch="sm_90")
    assert raised.value.rule == rule


@pytest.mark.parametrize("edited", [Path(adapter_module.__file__).with_name("kernels.py"),
                                    Path(coopcheck.__file__).with_name("exchange.py")], ids=["own", "shared-abi"])
def test_the_cache_key_covers_every_source_a_kernel_is_built_from(edited: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels are built from this package and from the shared ABI package (tile lengths, warp lanes, rules):
    a change to either must not reuse a cached cubin, which the host lane would inspect in place of the new one."""
    from coopcheck_cutlass.cache import toolchain_digest

    before = toolchain_digest()
    toolchain_digest.cache_clear()
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda path: read(path) + (b"# edited\n" if path == edited else b""))
    try:
        assert toolchain_digest() != before
    finally:
        toolchain_digest.cache_clear()
