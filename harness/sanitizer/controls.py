# numba.cuda's kernel language is dynamically typed: kernel arguments are typed at launch, and mypy
# sees the simulator's signatures.
# mypy: disable-error-code="no-untyped-def,no-untyped-call,call-arg,attr-defined"
"""The planted positive controls, one per tool, written directly with numba-cuda (imported with this module).

Each kernel carries exactly one bug its tool must report; the lane fails when the report is
missing, so a sanitizer that silently checks nothing (wrong tool, unsupported GPU, lost XML)
cannot pass a lane. Only a control item of a sanitizer lane imports this module. The kernels are
named as :data:`harness.sanitizer.tools.CONTROLS` says, which is how records find them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import cuda, int32
from numba.cuda.cudadrv.driver import CudaAPIError

WARP = 32
#: A global, so numba sees the shared array's size as a constant (``2 * WARP`` inline is not one).
RACE_ITEMS = 2 * WARP
#: What a control's launch raises when the sanitizer ends the planted kernel (its XML is the verdict).
LaunchError = CudaAPIError


@cuda.jit
def coop_control_shared_race(out):
    # Two warps: each thread writes its slot, then reads the slot of the thread 32 away (the
    # other warp) with no barrier between: read-after-write hazards across warps (Error level).
    buf = cuda.shared.array(RACE_ITEMS, int32)
    t = cuda.threadIdx.x
    buf[t] = t
    out[t] = buf[(t + WARP) % RACE_ITEMS]


@cuda.jit
def coop_control_oob_write(out):
    # Launched with one thread more than ``out`` has elements: the last one writes right past the
    # end of an exact-size allocation.
    t = cuda.threadIdx.x
    out[t] = t


@cuda.jit
def coop_control_uninit_read(src, out):
    # ``src`` was allocated and never written: every load reads uninitialized global memory.
    t = cuda.threadIdx.x
    out[t] = src[t]


@cuda.jit
def coop_control_bad_syncwarp_mask(out):
    # Every lane calls __syncwarp with a mask that names only the lower half of its warp, so the
    # upper lanes pass a mask without their own bit: synccheck reports invalid arguments. (Two
    # different __syncthreads in divergent code, the textbook case, hung the H200 under synccheck.)
    t = cuda.threadIdx.x
    out[t] = t
    cuda.syncwarp(0x0000FFFF)
    out[t] += 1


def _shared_race() -> None:
    out = cuda.device_array(2 * WARP, np.int32)
    coop_control_shared_race[1, 2 * WARP](out)
    out.copy_to_host()


def _oob_write() -> None:
    out = cuda.device_array(WARP, np.int32)
    coop_control_oob_write[1, WARP + 1](out)
    out.copy_to_host()


def _uninit_read() -> None:
    src, out = cuda.device_array(WARP, np.int32), cuda.device_array(WARP, np.int32)
    coop_control_uninit_read[1, WARP](src, out)
    out.copy_to_host()


def _bad_syncwarp_mask() -> None:
    out = cuda.device_array(2 * WARP, np.int32)
    coop_control_bad_syncwarp_mask[1, 2 * WARP](out)
    out.copy_to_host()


#: tool -> the host code that launches its control kernel once (one block) and waits for it.
LAUNCHERS: dict[str, Callable[[], None]] = {
    "racecheck": _shared_race,
    "memcheck": _oob_write,
    "initcheck": _uninit_read,
    "synccheck": _bad_syncwarp_mask,
}
