"""Test-only broken variants of block Load, Exchange and Shuffle, to prove that the resource checks and racecheck
bite.

* ``transpose_without_barrier``: the transpose exchange with no barrier between the shared-memory
  writes and reads: racecheck must report it, and its SASS has fewer ``BAR`` than the real one.
* ``direct_through_shared``: a direct Load that stages its items through shared memory behind a
  barrier: correct results, but the host resource rules for ``direct`` must flag it.
* ``exchange_without_barrier``: the real block Exchange with its block barrier made a no-op, so every load
  step reads scratch that other warps may not have stored yet.
* ``rotate_without_barrier``: a Shuffle rotate that reads its neighbour's scratch entry with no barrier after
  the stores.
* ``scan_without_barrier``: the real raking Block Scan with its block barriers made no-ops, so the raking threads
  read partials other warps may not have stored yet, and every thread reads its prefix before it is written.

Run as a script on a GPU, it launches one of them under the contract ABI, for compute-sanitizer::

    compute-sanitizer --tool racecheck --error-exitcode 1 python mutants.py racy     # must report
    compute-sanitizer --tool racecheck --error-exitcode 1 python mutants.py control  # must be clean

``exchange-racy`` / ``exchange-control``, ``shuffle-racy`` / ``shuffle-control`` and ``scan-racy`` /
``scan-control`` do the same for a block Exchange (striped_to_blocked over 4 warps), a Shuffle (rotate over 4
warps, by every distance of its kernel point) and a Scan (raking over 4 warps, with a prefix callback), each
launched over every case of its kernel point as the engine launches it and judged by its oracle.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any
from unittest import mock

import coopcheck
import numpy as np
from coopcheck_numba import exchange, kernels, scan, shared_bytes
from coopcheck_numba.blockio import rank, threads
from coopcheck_numba.kernels import ContractKernel, contract_kernel, load_kernel
from numba import cuda
from numba.cuda.np import numpy_support

#: The specialization both mutants imitate: 4 warps, so the exchange crosses warps.
SPEC = coopcheck.KernelSpec("block.load", "int32", (128,), 4, "transpose")
DIRECT = coopcheck.KernelSpec("block.load", "int32", (128,), 4, "direct")
#: Static scratch of ``direct_through_shared``: static, so it shows in the cubin whatever the
#: artifacts declare; one tile of the largest block the mutant is launched with.
STAGING_ITEMS = 1024 * 4
EXCHANGE = coopcheck.KernelSpec("block.exchange", "int32", (128,), 4, "striped_to_blocked",
                                variant=(("slicing", "off"), ("output", "inplace")))
SHUFFLE = coopcheck.KernelSpec("block.shuffle", "int32", (128,), 1, "rotate", variant=(("output", "inplace"),))
SCAN = coopcheck.KernelSpec("block.scan", "int32", (128,), 4, "raking",
                            variant=(("op", "sum"), ("mode", "inclusive"), ("seed", "prefix")))


def transpose_without_barrier() -> ContractKernel:
    ipt, nbtype = SPEC.items_per_thread, numpy_support.from_dtype(np.dtype(SPEC.dtype))

    @cuda.jit(device=True)
    def load(src, items, valid_items, offset=0, oob_default=None):
        scratch = cuda.shared.array(0, nbtype)
        me, count = rank(), threads()
        for i in range(ipt):
            t = me + i * count
            if t < valid_items:
                scratch[t] = src[offset + t]
        # The barrier that belongs here is missing: reads below race with other warps' writes.
        for i in range(ipt):
            t = me * ipt + i
            if t < valid_items:
                items[i] = scratch[t]
            elif oob_default is not None:
                items[i] = oob_default

    return load_kernel(load, SPEC.dtype, ipt, coopcheck.kernel_symbol(SPEC) + "__mutant_no_barrier")


def direct_through_shared() -> ContractKernel:
    ipt, nbtype = DIRECT.items_per_thread, numpy_support.from_dtype(np.dtype(DIRECT.dtype))

    @cuda.jit(device=True)
    def load(src, items, valid_items, offset=0, oob_default=None):
        staging = cuda.shared.array(STAGING_ITEMS, nbtype)
        me = rank()
        for i in range(ipt):
            t = me * ipt + i
            if t < valid_items:
                staging[t] = src[offset + t]
        cuda.syncthreads()
        for i in range(ipt):
            t = me * ipt + i
            if t < valid_items:
                items[i] = staging[t]
            elif oob_default is not None:
                items[i] = oob_default

    return load_kernel(load, DIRECT.dtype, ipt, coopcheck.kernel_symbol(DIRECT) + "__mutant_shared")


@cuda.jit(device=True)
def _no_barrier(me, n_threads):
    pass


@contextmanager
def exchange_without_barrier() -> Iterator[None]:
    """While inside, a new Exchange contract kernel is built from the real device function with its block barrier
    a no-op (the builders' caches are bypassed, so no real kernel of this process is changed)."""
    def racy(dtype: str, ipt: int, method: str, warp_time_slicing: bool) -> Callable[..., Any]:
        with mock.patch.object(exchange, "_block_sync", _no_barrier):
            return exchange.build_exchange.__wrapped__(dtype, ipt, method, warp_time_slicing)

    with mock.patch.object(kernels, "build_exchange", racy), \
            mock.patch.object(kernels, "_exchange_contract_kernel", kernels._exchange_contract_kernel.__wrapped__):
        yield


@contextmanager
def rotate_without_barrier() -> Iterator[None]:
    """While inside, a new Shuffle contract kernel is built around a rotate that reads its neighbour's scratch
    entry without the barrier after the stores (the builders' caches are bypassed)."""
    nbtype = numpy_support.from_dtype(np.dtype(SHUFFLE.dtype))

    @cuda.jit(device=True)
    def rotate(items_in, items_out, distance, block_item):
        scratch = cuda.shared.array(0, nbtype)
        me, n_threads = np.int32(rank()), np.int32(threads())
        scratch[me] = items_in[0]
        # The barrier that belongs here is missing: the read below races with the other warps' stores.
        src = me + np.int32(distance)
        if src >= n_threads:
            src -= n_threads
        items_out[0] = scratch[src]
        cuda.syncthreads()

    with mock.patch.object(kernels, "build_shuffle", lambda dtype, ipt, method: rotate), \
            mock.patch.object(kernels, "_shuffle_contract_kernel", kernels._shuffle_contract_kernel.__wrapped__):
        yield


@cuda.jit(device=True)
def _no_block_barrier():
    pass


@contextmanager
def scan_without_barrier() -> Iterator[None]:
    """While inside, a new Scan contract kernel is built from the real device function with its block barriers
    no-ops (the builders' caches are bypassed)."""
    def racy(dtype: str, ipt: int, algorithm: str, op: str, mode: str, seed: str) -> Callable[..., Any]:
        with mock.patch.object(scan, "_barrier", _no_block_barrier):
            return scan.build_scan.__wrapped__(dtype, ipt, algorithm, op, mode, seed)

    with mock.patch.object(kernels, "build_scan", racy), \
            mock.patch.object(kernels, "_scan_contract_kernel", kernels._scan_contract_kernel.__wrapped__):
        yield


#: The family probes: mode prefix -> (the specialization it launches, the mutant that removes its barrier).
FAMILY_PROBES: dict[str, tuple[coopcheck.KernelSpec, Callable[[], AbstractContextManager[None]]]] = {
    "exchange": (EXCHANGE, exchange_without_barrier), "shuffle": (SHUFFLE, rotate_without_barrier),
    "scan": (SCAN, scan_without_barrier)}


def launch(kernel: ContractKernel, blocks: int = 8) -> np.ndarray:
    """One batched launch of a Load kernel of :data:`SPEC` over full tiles; returns ``dst``."""
    tile = SPEC.tile
    src = np.arange(blocks * tile, dtype=SPEC.dtype)
    args = [src, np.full(blocks * tile, -1, SPEC.dtype), np.zeros(blocks * tile, SPEC.dtype),
            np.full(blocks, tile, np.int32), np.zeros(blocks, np.int64), np.zeros(blocks, np.int32),
            np.zeros(blocks, SPEC.dtype)]
    device = [cuda.to_device(a) for a in args]
    shared = shared_bytes(SPEC.dtype, SPEC.items_per_thread, SPEC.algorithm, SPEC.threads)
    kernel.dispatcher[blocks, SPEC.block, 0, shared](*device, np.int64(tile))
    cuda.synchronize()
    return device[2].copy_to_host()


def family_probe(family: str, racy: bool) -> int:
    """Launch the family probe's kernel point (its kernel without its barrier when ``racy``) as the engine does,
    judged by its family's oracle; print how many lines of failures that gave (a race may or may not corrupt)."""
    from coopcheck_numba.adapter import NumbaAdapter

    from harness.contracts import load_contracts
    from harness.oracles.launch import point_failures

    spec, mutant = FAMILY_PROBES[family]
    contract = {c.id: c for c in load_contracts()}[spec.operation]
    point = (("dtype", spec.dtype), ("block", "x".join(map(str, spec.block))), ("ipt", spec.items_per_thread),
             ("alg", spec.algorithm), *spec.variant)
    with mutant() if racy else nullcontext():
        failures = point_failures(NumbaAdapter(), contract, point, 0)
    print(f"{family}-{'racy' if racy else 'control'}: {len(failures)} failure line(s)")
    return 0


def main(argv: list[str]) -> int:
    probes = {"racy": transpose_without_barrier, "control": lambda: contract_kernel(SPEC)}
    modes = [*probes, *(f"{family}-{kind}" for family in FAMILY_PROBES for kind in ("racy", "control"))]
    if len(argv) != 1 or argv[0] not in modes:
        print(f"usage: python mutants.py {{{'|'.join(modes)}}}", file=sys.stderr)
        return 2
    if argv[0] not in probes:
        family, _, kind = argv[0].rpartition("-")
        return family_probe(family, kind == "racy")
    kernel = probes[argv[0]]()
    out = launch(kernel)
    # Without a race the blocked result is the source itself; a racy run may or may not show it,
    # which is why racecheck, not this comparison, is the evidence.
    same = np.array_equal(out, np.arange(out.size, dtype=SPEC.dtype))
    print(f"launched {kernel.symbol}: output {'matches' if same else 'DIFFERS from'} the source")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
