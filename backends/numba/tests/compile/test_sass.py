"""What the final SASS shows beyond the contract's rules: vectorize's 128-bit accesses and their
absence in direct, the barriers of each transpose, and the type check of the device functions."""

from __future__ import annotations

from typing import Any

import coopcheck
import coopcheck_numba
import numpy as np
import pytest
from coopcheck_numba.adapter import NumbaAdapter
from coopcheck_numba.toolchain import compile_ptx
from numba import cuda
from numba.core.errors import NumbaError
from numba.cuda import types
from numba.cuda.np import numpy_support

from harness.inspect import KernelReport, inspect_artifacts

ARCH = "sm_90"
#: (dtype, items_per_thread) whose thread items fill exactly 16 bytes per wide access.
WIDE_128 = [("uint8", 16), ("float16", 8), ("int32", 4), ("float32", 8), ("float64", 2), ("uint64", 16)]


def _report(adapter: NumbaAdapter, operation: str, dtype: str, ipt: int, algorithm: str) -> KernelReport:
    spec = coopcheck.KernelSpec(operation, dtype, (128,), ipt, algorithm)
    return inspect_artifacts(adapter.artifacts(adapter.compile(spec, arch=ARCH)))


def _wide(report: KernelReport, opcode: str) -> int:
    return sum(n for mnemonic, n in report.opcodes.items()
               if mnemonic.split(".")[0] == opcode and "128" in mnemonic.split("."))


@pytest.mark.parametrize(("operation", "opcode"), [("block.load", "LDG"), ("block.store", "STG")])
@pytest.mark.parametrize(("dtype", "ipt"), WIDE_128)
def test_vectorize_makes_128_bit_accesses_and_direct_does_not(
    adapter: NumbaAdapter, operation: str, opcode: str, dtype: str, ipt: int
) -> None:
    assert _wide(_report(adapter, operation, dtype, ipt, "vectorize"), opcode) > 0
    assert _wide(_report(adapter, operation, dtype, ipt, "direct"), opcode) == 0


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
def test_transpose_syncs_the_block_and_warp_transpose_does_not(adapter: NumbaAdapter, operation: str) -> None:
    transpose = _report(adapter, operation, "int16", 7, "transpose")
    # one barrier between the exchange's writes and reads, one before the scratch may be reused
    assert len(transpose.find("BAR")) >= 2 and transpose.barriers == 1
    warp = _report(adapter, operation, "int16", 7, "warp_transpose")
    assert warp.find("BAR") == [] and warp.barriers == 0
    assert warp.find("STS") and warp.find("LDS")


def _user_kernel(memory_dtype: str) -> tuple[Any, tuple[Any, ...]]:
    load = coopcheck_numba.block_load("int32", 4, "transpose")

    def kernel(src):
        items = cuda.local.array(4, types.int32)
        load(src, items, 512)

    return kernel, (types.Array(numpy_support.from_dtype(np.dtype(memory_dtype)), 1, "C"),)


def test_device_function_refuses_operands_of_another_dtype() -> None:
    kernel, signature = _user_kernel("float32")
    # numba re-raises the check's TypingError as its own (both are NumbaErrors).
    with pytest.raises(NumbaError, match=r"coopcheck_numba\.block_load\(int32, ipt=4, transpose\): memory operand "
                                          r"must be a 1-D C-contiguous int32 array, got array\(float32"):
        compile_ptx(kernel, signature, ARCH, "user kernel")


def test_device_function_compiles_in_a_user_kernel() -> None:
    kernel, signature = _user_kernel("int32")
    assert ".entry" in compile_ptx(kernel, signature, ARCH, "user kernel")


def test_device_function_takes_keyword_arguments() -> None:
    # numba's simulator passes positional arguments only, so this is checked compiled.
    load = coopcheck_numba.block_load("int16", 2, "vectorize")

    def kernel(src, valid_items):
        items = cuda.local.array(2, types.int16)
        load(src, items, valid_items, oob_default=-3, offset=5)

    signature = (types.Array(types.int16, 1, "C"), types.int32)
    assert ".entry" in compile_ptx(kernel, signature, ARCH, "user kernel")
