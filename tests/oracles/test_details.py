"""Failure details: values that print alike show their raw bits, and an output off the ABI says what it is."""

from __future__ import annotations

import coopcheck
import numpy as np

from harness.oracles import block_load_store as oracle


def test_floats_that_print_alike_show_their_raw_bits() -> None:
    signalling, quiet = np.array([0x7FA00001, 0x7FE00001], np.uint32).view(np.float32)
    assert oracle._show(signalling, quiet) == "nan(0x7fa00001)"
    assert oracle._show(np.float32(1.5), np.float32(2.0)) == "1.5"
    minus_zero, zero = np.array([0x8000, 0x0000], np.uint16).view(np.float16)
    assert oracle._show(minus_zero, zero) == "-0.0"  # -0.0 and 0.0 print apart


def test_an_output_off_the_abi_is_described_with_what_the_abi_says() -> None:
    spec = coopcheck.KernelSpec("block.load", "uint8", (32,), 2, "direct")
    batch = coopcheck.LoadBatch(src=np.zeros(96, np.uint8), init=np.zeros(64, np.uint8), valid=np.array([64], np.int32),
                           offset=np.zeros(1, np.int64), has_oob=np.zeros(1, np.int32), oob=np.zeros(1, np.uint8),
                           region=96)
    assert oracle.abi_problem(spec, batch, np.zeros(64, np.uint8)) is None
    assert oracle.abi_problem(spec, batch, np.zeros(64, np.uint16)) == (
        "launch returned uint16[64] (native); the ABI says uint8[64] in native byte order")
    swapped = np.zeros(64, np.dtype(">u2"))
    assert "big-endian" in str(oracle.abi_problem(spec, batch, swapped))
    assert oracle.abi_problem(spec, batch, [0] * 64) == (
        "launch returned list, not a NumPy array; the ABI says uint8[64] in native byte order")
