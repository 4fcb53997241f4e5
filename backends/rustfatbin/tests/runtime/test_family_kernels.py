"""The fatbin's Exchange, Shuffle, Reduce and Scan kernels on a GPU, launched through the adapter as the harness
launches them (every case of the kernel point, each in every data pattern, one block each) and judged by the
family's oracle.

Every Exchange method runs time-sliced and not, in place and separate; every Shuffle method in place and separate;
over 1-D, 2-D and 3-D blocks, a partial last warp, a block of fewer than 32 threads (a warp method's barrier then
names 30 lanes) and 1024 threads (64 KiB of Exchange scratch unsliced, past the 48 KiB a launch gets without opting
in). Every Reduce algorithm runs with every operator it takes, over every block of its contract: the 65-thread
blocks of NVIDIA/cccl#1902, partial last warps, whole warps (raking_commutative_only's own path) and its fallback.
Every Scan algorithm runs with every operator, mode and seed (one entry serves the modes and seeds), over every
block of its contract.
"""

from __future__ import annotations

from typing import Any

import pytest
from coopcheck.reduce import COMMUTATIVE
from coopcheck_rustfatbin.adapter import RustFatbinAdapter

from harness.contracts import load_contracts
from harness.oracles.launch import point_failures

CONTRACTS = {c.id: c for c in load_contracts()}
#: (method, slicing, output, dtype, block, ipt)
EXCHANGES = [
    ("striped_to_blocked", "on", "separate", "float16", "100", 7),
    ("striped_to_blocked", "off", "inplace", "uint64", "5x3x2", 3),
    ("blocked_to_striped", "on", "inplace", "int8", "16x8", 2),
    ("blocked_to_striped", "off", "inplace", "float64", "1024", 8),
    ("warp_striped_to_blocked", "off", "separate", "int32", "5x3x2", 4),
    ("warp_striped_to_blocked", "on", "inplace", "float32", "1024", 3),
    ("blocked_to_warp_striped", "off", "inplace", "uint16", "8x4x2", 8),
    ("blocked_to_warp_striped", "on", "separate", "int64", "64", 1),
    ("scatter_to_blocked", "on", "separate", "uint32", "10x5", 4),
    ("scatter_to_blocked", "off", "inplace", "int8", "64", 3),
    ("scatter_to_striped", "off", "separate", "int16", "128", 2),
    ("scatter_to_striped", "on", "inplace", "float16", "8x4x2", 7),
    ("scatter_to_striped_guarded", "on", "inplace", "uint8", "100", 3),
    ("scatter_to_striped_guarded", "off", "separate", "float64", "32", 7),
    ("scatter_to_striped_flagged", "on", "inplace", "int32", "1024", 2),
    ("scatter_to_striped_flagged", "off", "separate", "float32", "10x5", 8),
]
#: (method, output, dtype, block, ipt)
SHUFFLES = [
    ("offset", "inplace", "float16", "1024", 1),
    ("offset", "separate", "int8", "10x5", 1),
    ("rotate", "inplace", "uint64", "100", 1),
    ("rotate", "separate", "int32", "5x3x2", 1),
    ("up", "inplace", "float64", "7", 8),
    ("up", "separate", "uint8", "16x8", 3),
    ("down", "inplace", "int16", "8x4x2", 7),
    ("down", "separate", "float32", "32", 2),
    ("up_suffix", "inplace", "uint16", "5x3x2", 4),
    ("up_suffix", "separate", "int64", "1024", 8),
    ("down_prefix", "inplace", "uint32", "100", 1),
    ("down_prefix", "separate", "float64", "10x5", 2),
]

#: (algorithm, dtype, block, ipt, op)
REDUCES = [
    ("raking", "int8", "65", 1, "sum"),
    ("raking", "float32", "13x5", 3, "first"),
    ("raking", "uint16", "7", 2, "matmul"),
    ("raking", "float64", "100", 16, "min"),
    ("raking", "uint32", "1024", 4, "max"),
    ("raking", "uint8", "8x4x2", 7, "first"),
    ("raking_commutative_only", "int32", "8x4x2", 2, "sum"),
    ("raking_commutative_only", "float16", "1024", 7, "max"),
    ("raking_commutative_only", "uint64", "32", 4, "min"),
    ("raking_commutative_only", "float32", "16x8", 16, "sum"),
    ("raking_commutative_only", "int8", "100", 1, "max"),
    ("warp_reductions", "int64", "65", 2, "first"),
    ("warp_reductions", "float16", "16x8", 1, "sum"),
    ("warp_reductions", "uint8", "1", 7, "max"),
    ("warp_reductions", "int16", "100", 3, "matmul"),
    ("warp_reductions", "float64", "13x5", 16, "min"),
]

#: (algorithm, dtype, block, ipt, op, mode, seed)
SCANS = [
    ("raking", "int8", "65", 1, "sum", "inclusive", "none"),
    ("raking", "float16", "13x5", 2, "min", "exclusive", "none"),
    ("raking", "uint16", "1", 4, "matmul", "inclusive", "initial"),
    ("raking", "float64", "1024", 16, "max", "exclusive", "initial"),
    ("raking", "uint32", "8x4x2", 7, "sum", "inclusive", "prefix"),
    ("raking", "int64", "65", 2, "matmul", "exclusive", "prefix"),
    ("raking_memoize", "float16", "16x8", 7, "max", "inclusive", "none"),
    ("raking_memoize", "uint64", "32", 4, "matmul", "exclusive", "none"),
    ("raking_memoize", "int32", "65", 16, "min", "inclusive", "initial"),
    ("raking_memoize", "uint8", "13x5", 1, "sum", "exclusive", "initial"),
    ("raking_memoize", "float32", "1024", 2, "max", "inclusive", "prefix"),
    ("raking_memoize", "int16", "1", 7, "matmul", "exclusive", "prefix"),
    ("warp_scans", "uint16", "1024", 1, "matmul", "inclusive", "none"),
    ("warp_scans", "float64", "65", 7, "sum", "exclusive", "none"),
    ("warp_scans", "int8", "8x4x2", 2, "max", "inclusive", "initial"),
    ("warp_scans", "float16", "32", 16, "sum", "exclusive", "initial"),
    ("warp_scans", "int32", "13x5", 4, "min", "inclusive", "prefix"),
    ("warp_scans", "float16", "65", 1, "sum", "exclusive", "prefix"),
]


def _check(adapter: RustFatbinAdapter, contract: str, point: tuple[tuple[str, Any], ...]) -> None:
    for seed in (20261202, 7):
        failures = point_failures(adapter, CONTRACTS[contract], point, seed, adapter.bundle.archs()[-1])
        assert not failures, f"{dict(point)}, seed {seed}:\n" + "\n".join(failures[:8])


@pytest.mark.parametrize("kernel", EXCHANGES, ids=lambda k: "-".join(map(str, k)))
def test_an_exchange_kernel_matches_the_oracle(adapter: RustFatbinAdapter, kernel: tuple[Any, ...]) -> None:
    method, slicing, output, dtype, block, ipt = kernel
    _check(adapter, "block.exchange", (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", method),
                                       ("slicing", slicing), ("output", output)))


@pytest.mark.parametrize("kernel", SHUFFLES, ids=lambda k: "-".join(map(str, k)))
def test_a_shuffle_kernel_matches_the_oracle(adapter: RustFatbinAdapter, kernel: tuple[Any, ...]) -> None:
    method, output, dtype, block, ipt = kernel
    _check(adapter, "block.shuffle", (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", method),
                                      ("output", output)))


@pytest.mark.parametrize("kernel", REDUCES, ids=lambda k: "-".join(map(str, k)))
def test_a_reduce_kernel_matches_the_oracle(adapter: RustFatbinAdapter, kernel: tuple[Any, ...]) -> None:
    algorithm, dtype, block, ipt, op = kernel
    _check(adapter, "block.reduce", (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", algorithm),
                                     ("op", op)))


def test_the_reduce_kernels_cover_every_algorithm_with_its_operators_every_block_dtype_and_ipt() -> None:
    axes = CONTRACTS["block.reduce"].axes
    assert {(k[0], k[4]) for k in REDUCES} == {
        (a, o) for a in axes["alg"] for o in axes["op"] if a != "raking_commutative_only" or o in COMMUTATIVE}
    assert {k[1] for k in REDUCES} == set(axes["dtype"]) and {k[2] for k in REDUCES} == set(axes["block"])
    assert {k[3] for k in REDUCES} == set(axes["ipt"])


@pytest.mark.parametrize("kernel", SCANS, ids=lambda k: "-".join(map(str, k)))
def test_a_scan_kernel_matches_the_oracle(adapter: RustFatbinAdapter, kernel: tuple[Any, ...]) -> None:
    algorithm, dtype, block, ipt, op, mode, seed = kernel
    point = (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", algorithm), ("op", op), ("mode", mode),
             ("seed", seed))
    _check(adapter, "block.scan", point)


def test_the_scan_kernels_cover_every_algorithm_with_every_operator_mode_and_seed_every_block_dtype_and_ipt() -> None:
    axes = CONTRACTS["block.scan"].axes
    assert {(k[0], k[4]) for k in SCANS} == {(a, o) for a in axes["alg"] for o in axes["op"]}
    assert {(k[0], k[5], k[6]) for k in SCANS} == {(a, m, s) for a in axes["alg"] for m in axes["mode"]
                                                   for s in axes["seed"]}
    assert {k[1] for k in SCANS} == set(axes["dtype"]) and {k[2] for k in SCANS} == set(axes["block"])
    assert {k[3] for k in SCANS} == set(axes["ipt"])


def test_the_kernels_cover_every_method_both_ways_every_block_and_dtype() -> None:
    exchange, shuffle = CONTRACTS["block.exchange"].axes, CONTRACTS["block.shuffle"].axes
    assert {(k[0], k[1]) for k in EXCHANGES} >= {(m, s) for m in exchange["alg"] for s in exchange["slicing"]}
    assert {k[2] for k in EXCHANGES} == set(exchange["output"])
    assert {k[4] for k in EXCHANGES} == set(exchange["block"])
    assert {k[3] for k in EXCHANGES} == set(exchange["dtype"])
    assert {(k[0], k[1]) for k in SHUFFLES} == {(m, o) for m in shuffle["alg"] for o in shuffle["output"]}
    assert {k[3] for k in SHUFFLES} == set(shuffle["block"]) and {k[2] for k in SHUFFLES} == set(shuffle["dtype"])
