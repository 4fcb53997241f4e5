"""Test-only broken variants of block Load, to prove that the resource checks and racecheck bite.

* ``transpose_without_barrier``: the transpose exchange with no barrier between the shared-memory
  writes and reads: racecheck must report it, and its SASS has fewer ``BAR`` than the real one.
* ``direct_through_shared``: a direct Load that stages its items through shared memory behind a
  barrier: correct results, but the host resource rules for ``direct`` must flag it.

Run as a script on a GPU, it launches one of them under the contract ABI, for compute-sanitizer::

    compute-sanitizer --tool racecheck --error-exitcode 1 python mutants.py racy     # must report
    compute-sanitizer --tool racecheck --error-exitcode 1 python mutants.py control  # must be clean
"""

from __future__ import annotations

import sys

import coopcheck
import numpy as np
from coopcheck_numba import shared_bytes
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


def main(argv: list[str]) -> int:
    kernels = {"racy": transpose_without_barrier, "control": lambda: contract_kernel(SPEC)}
    if len(argv) != 1 or argv[0] not in kernels:
        print(f"usage: python mutants.py {{{'|'.join(kernels)}}}", file=sys.stderr)
        return 2
    kernel = kernels[argv[0]]()
    out = launch(kernel)
    # Without a race the blocked result is the source itself; a racy run may or may not show it,
    # which is why racecheck, not this comparison, is the evidence.
    same = np.array_equal(out, np.arange(out.size, dtype=SPEC.dtype))
    print(f"launched {kernel.symbol}: output {'matches' if same else 'DIFFERS from'} the source")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
