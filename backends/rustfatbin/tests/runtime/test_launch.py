"""The installed fatbin's kernels on a GPU, through the adapter and the loader: results judged by the
harness oracle, the per-capability probes, more than 48 KiB of dynamic shared memory, and refusals
that name their cause."""

from __future__ import annotations

import numpy as np
import pytest
from coopcheck import KernelSpec, LoadBatch, StoreBatch, fatbin
from coopcheck_rustfatbin import abi
from coopcheck_rustfatbin.adapter import RustFatbinAdapter
from coopcheck_rustfatbin.bundle import Bundle, LoaderError
from coopcheck_rustfatbin.loader import InOut, Module

from harness.oracles import block_load_store as oracle
from harness.oracles.values import pattern

SEED = 5


@pytest.fixture(scope="module")
def adapter() -> RustFatbinAdapter:
    adapter = RustFatbinAdapter()
    if not adapter.can_launch():
        pytest.skip("no CUDA device")
    return adapter


@pytest.fixture(scope="module")
def module(adapter) -> Module:
    return Module(adapter.bundle)


def blocks(spec: KernelSpec) -> tuple[np.ndarray, np.ndarray]:
    """One block per valid class (full, zero, one, tile-1, a third) with zero, aligned, misaligned offsets."""
    tile = spec.tile
    valid = np.array([tile, 0, 1, tile - 1, tile // 3], np.int32)
    offset = np.array([0, 32, 1, 1, 32], np.int64)
    return valid, offset


def load_batch(spec: KernelSpec) -> LoadBatch:
    valid, offset = blocks(spec)
    n, region = len(valid), oracle.region(spec)
    return LoadBatch(
        src=pattern(spec.dtype, n * region, "src", SEED), init=pattern(spec.dtype, n * spec.tile, "sentinel", SEED),
        valid=valid, offset=offset, has_oob=np.array([0, 1, 0, 1, 0], np.int32),
        oob=pattern(spec.dtype, n, "oob", SEED), region=region,
    )


def store_batch(spec: KernelSpec) -> StoreBatch:
    valid, offset = blocks(spec)
    n, region = len(valid), oracle.region(spec)
    return StoreBatch(items=pattern(spec.dtype, n * spec.tile, "src", SEED),
                      dst=pattern(spec.dtype, n * region, "sentinel", SEED), valid=valid, offset=offset, region=region)


SHAPES = [("int8", (128,), 7), ("float16", (16, 8), 4), ("float64", (4, 4, 4), 16), ("uint32", (5, 3, 2), 3)]
SPECS = [
    KernelSpec(operation, dtype, block, ipt, algorithm)
    for operation in ("block.load", "block.store")
    for dtype, block, ipt in SHAPES
    for algorithm in ("direct", "striped", "vectorize", "transpose", "warp_transpose")
    if not (algorithm == "warp_transpose" and np.prod(block) % 32)
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.operation}-{s.dtype}-{'x'.join(map(str, s.block))}-"
                                                     f"ipt{s.items_per_thread}-{s.algorithm}")
def test_results_satisfy_the_oracle(adapter, spec):
    compiled = adapter.compile(spec, arch=adapter.bundle.archs()[-1])
    batch = load_batch(spec) if spec.operation == "block.load" else store_batch(spec)
    before = oracle.snapshot(batch)
    assert oracle.block_failures(spec, before, adapter.launch(compiled, spec, batch)) == []


def test_a_transpose_past_48_kib_of_shared_memory_opts_in(adapter):
    spec = KernelSpec("block.load", "float64", (1024,), 16, "transpose")
    assert abi.dynamic_shared_bytes(spec) == 128 * 1024
    batch = load_batch(spec)
    before = oracle.snapshot(batch)
    out = adapter.launch(adapter.compile(spec, arch=adapter.bundle.archs()[-1]), spec, batch)
    assert oracle.block_failures(spec, before, out) == []


def test_the_probe_reports_the_arch_of_the_image_the_driver_chose(module, adapter):
    major = int(module.arch[3:-1])
    device = int(module.arch[3:])
    chosen = max(e.arch for e in adapter.bundle.entries
                 if e.kind == fatbin.KIND_ELF and e.arch // 10 == major and e.arch <= device)
    (out,) = module.run(abi.PROBE_CUDA_ARCH, grid=1, block=(1,), shared_bytes=0,
                        args=[InOut(np.full(1, 1000, np.uint32))])
    assert int(out[0]) == 1000 + chosen


def test_the_sm90_kernel_runs_exactly_on_sm90_and_newer(module):
    if int(module.arch[3:]) >= 90:
        (out,) = module.run(abi.PROBE_SM90, grid=1, block=(1,), shared_bytes=0, args=[InOut(np.zeros(1, np.uint32))])
        assert int(out[0]) == 1  # a launch without clusters: one block per cluster
    else:
        missing = f"{abi.PROBE_SM90}: cuModuleGetFunction failed with CUDA_ERROR_NOT_FOUND"
        with pytest.raises(LoaderError, match=missing):
            module.function(abi.PROBE_SM90)


def test_a_driver_error_names_the_kernel_and_the_result(module):
    # coopcheck.check_static refuses such a block before any launch; the loader itself must still name a
    # driver's refusal, so ask the driver directly for more threads than a block may have.
    with pytest.raises(LoaderError, match=rf"^{abi.PROBE_CUDA_ARCH}: cuLaunchKernel failed with "
                                          r"CUDA_ERROR_INVALID_VALUE$"):
        module.run(abi.PROBE_CUDA_ARCH, grid=1, block=(2048,), shared_bytes=0,
                   args=[InOut(np.zeros(1, np.uint32))])


def test_a_fatbin_without_an_image_for_the_device_is_refused(module, tmp_path, assembler):
    other = 80 if int(module.arch[3:]) // 10 != 8 else 90
    bundle = Bundle(assembler.build(tmp_path, assembler.entry(fatbin.KIND_ELF, other, assembler.elf(256))))
    with pytest.raises(LoaderError, match=rf"nothing in it runs on this {module.arch} device: it holds ELF sm_{other}"):
        Module(bundle)


def test_the_default_stream_is_torchs_current_stream():
    torch = pytest.importorskip("torch", reason="torch is optional; the loader follows its stream when present")
    from coopcheck_rustfatbin.loader import _stream_handle

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        assert _stream_handle(None) == stream.cuda_stream
    assert _stream_handle(None) == torch.cuda.current_stream().cuda_stream
