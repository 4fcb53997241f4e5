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


def test_is_a_coop_adapter(adapter):
    assert isinstance(adapter, coopcheck.Adapter) and adapter.name == "rustfatbin"


@pytest.mark.parametrize(("bad", "rule"), [
    (spec(ipt=0), "items_per_thread"),
    (spec(block=(100,), algorithm="warp_transpose"), "warp_multiple"),
    (spec(dtype="float32", block=(5, 3, 2), ipt=2, algorithm="warp_transpose"), "warp_multiple"),
    (spec(block=(64,), ipt=2, static_valid_items=-1), "valid_items_range"),
    (spec(block=(64,), ipt=2, algorithm="striped", static_valid_items=129), "valid_items_range"),
    (spec(block=(64,), ipt=2, static_offset=-1), "offset_negative"),
    (spec(operation="block.store", store_oob_default=True), "store_oob_default"),
    (spec(dtype="int128"), "dtype"),
])
def test_compile_refuses_bad_statics_with_their_rule(adapter, bad, rule):
    assert adapter.unsupported_reason(bad) is None  # a rejection case must reach compile
    with pytest.raises(InvalidParameter) as refused:
        adapter.compile(bad, arch="sm_90")
    assert refused.value.rule == rule


def test_an_items_per_thread_the_crate_lacks_is_unsupported_with_the_list(adapter):
    reason = adapter.unsupported_reason(spec(ipt=5))
    assert reason == "the rustfatbin crate exports kernels for items_per_thread in 1, 2, 3, 4, 7, 8, 16 only (got 5)"


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
    assert args[0].array is batch.src and args[2].like is batch.init and args[-1] == 1024


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
