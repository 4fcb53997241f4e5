"""The crate's Scan kernel body run on the host (``tests/hostrun/scan_host.rs``: a host thread per GPU thread, the
block barrier a real barrier, the scratch's every access checked against the barriers) through the adapter's own
launch arguments, and judged by the contract's oracle as the GPU runs are.

It is no GPU (float16's arithmetic is PTX, so float16 is not among the points), but a barrier the scan needs that is
missing, a read of scratch nobody wrote, a seed taken from the wrong thread or a wrong prefix fails here. The
points cover every algorithm with every operator, mode and seed, every block shape of the contract and every ipt.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from coopcheck import KernelSpec
from coopcheck_rustfatbin import abi
from coopcheck_rustfatbin.adapter import CompiledKernel, _launch_args
from coopcheck_rustfatbin.loader import In, Out

from harness.contracts import load_contracts
from harness.oracles.launch import point_failures

pytestmark = pytest.mark.compile

CONTRACT = next(c for c in load_contracts() if c.id == "block.scan")
RUST_TYPES = {"uint8": "u8", "int8": "i8", "int16": "i16", "uint16": "u16", "int32": "i32", "uint32": "u32",
              "int64": "i64", "uint64": "u64", "float32": "f32", "float64": "f64"}
OPERATORS = {"sum": "Sum", "min": "Min", "max": "Max", "matmul": "Matmul"}
ALGORITHMS = {"raking": "Raking", "raking_memoize": "RakingMemoize", "warp_scans": "WarpScans"}
#: Seconds a launch may take (a barrier some threads never reach hangs it).
TIMEOUT = 120
#: (algorithm, dtype, block, ipt, op, mode, seed)
POINTS = [
    ("raking", "int8", "65", 1, "sum", "inclusive", "none"),
    ("raking", "float32", "13x5", 2, "min", "exclusive", "none"),
    ("raking", "uint16", "1", 4, "matmul", "inclusive", "initial"),
    ("raking", "float64", "1024", 16, "max", "exclusive", "initial"),
    ("raking", "uint32", "8x4x2", 7, "sum", "inclusive", "prefix"),
    ("raking", "int64", "65", 2, "matmul", "exclusive", "prefix"),
    ("raking_memoize", "int16", "16x8", 7, "max", "inclusive", "none"),
    ("raking_memoize", "uint64", "32", 4, "matmul", "exclusive", "none"),
    ("raking_memoize", "int32", "65", 16, "min", "inclusive", "initial"),
    ("raking_memoize", "uint8", "13x5", 1, "sum", "exclusive", "initial"),
    ("raking_memoize", "float32", "1024", 2, "max", "inclusive", "prefix"),
    ("raking_memoize", "uint32", "1", 7, "matmul", "exclusive", "prefix"),
    ("warp_scans", "uint16", "1024", 1, "matmul", "inclusive", "none"),
    ("warp_scans", "float64", "65", 7, "sum", "exclusive", "none"),
    ("warp_scans", "int8", "8x4x2", 2, "max", "inclusive", "initial"),
    ("warp_scans", "uint32", "32", 16, "min", "exclusive", "initial"),
    ("warp_scans", "int32", "13x5", 4, "sum", "inclusive", "prefix"),
    ("warp_scans", "int64", "65", 1, "matmul", "exclusive", "prefix"),
    ("warp_scans", "uint64", "1", 16, "max", "exclusive", "prefix"),
]


def kernel_point(k: tuple[Any, ...]) -> tuple[tuple[str, Any], ...]:
    algorithm, dtype, block, ipt, op, mode, seed = k
    return (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", algorithm), ("op", op), ("mode", mode),
            ("seed", seed))


def _dispatch(points: list[tuple[Any, ...]]) -> str:
    """Rust source: ``dispatch(entry, launch)`` running the instantiation of each point's entry."""
    arms = {}
    for algorithm, dtype, _, ipt, op, _, _ in points:
        spec = KernelSpec("block.scan", dtype, (1,), ipt, algorithm, variant=(("op", op),))
        arms[abi.entry_symbol(spec)] = (f"run::<{RUST_TYPES[dtype]}, operator::{OPERATORS[op]}, "
                                        f"scan::{ALGORITHMS[algorithm]}, {ipt}>(launch)")
    lines = [f'        "{entry}" => {call},' for entry, call in sorted(arms.items())]
    return ("fn dispatch(entry: &str, launch: &Launch) -> bool {\n    match entry {\n" + "\n".join(lines)
            + "\n        _ => return false,\n    }\n    true\n}\n")


@pytest.fixture(scope="module")
def runner(host_run_build: Callable[[str, str, str], Path]) -> Path:
    """The host build of the Scan kernel body with a dispatch for every point's entry."""
    return host_run_build("scan_host", "COOP_SCAN_POINTS", _dispatch(POINTS))


def _run_on_host(adapter: Any, compiled: CompiledKernel, spec: KernelSpec, batch: Any) -> Any:
    """One launch of the host build: the arguments as files, the output read back."""
    items, initial, dst, mode, seed = _launch_args(compiled.symbol, spec, batch)
    assert isinstance(items, In) and isinstance(initial, In) and isinstance(dst, Out)
    files = [adapter.folder / name for name in ("items", "initial", "dst")]
    files[0].write_bytes(items.array.tobytes())
    files[1].write_bytes(initial.array.tobytes())
    files[2].write_bytes(b"\xa5" * dst.nbytes)  # not one of the dtype's zeros: an unwritten output shows
    command = [str(adapter.binary), compiled.symbol, str(spec.threads), str(batch.n_blocks), str(mode), str(seed),
               str(compiled.dynamic_shared_bytes), *map(str, files)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if done.returncode:
        raise AssertionError(f"{compiled.symbol}: the host run exited with {done.returncode}: {done.stderr}")
    return np.frombuffer(files[2].read_bytes(), dtype=spec.dtype).copy()


@pytest.mark.parametrize("k", POINTS, ids=lambda k: "-".join(map(str, k)))
def test_the_scan_kernel_body_run_on_the_host_matches_the_oracle(runner: Path, tmp_path: Path,
                                                                 host_run_adapter: Any, k: tuple[Any, ...]) -> None:
    adapter = host_run_adapter(runner, tmp_path, _run_on_host)
    for seed in (20261203, 7):
        failures = point_failures(adapter, CONTRACT, kernel_point(k), seed)
        assert not failures, f"{k}, seed {seed}:\n" + "\n".join(failures[:8])


def test_the_host_points_cover_every_algorithm_operator_mode_seed_block_and_ipt() -> None:
    axes = CONTRACT.axes
    assert {(k[0], k[4]) for k in POINTS} == {(a, o) for a in axes["alg"] for o in axes["op"]}
    assert {(k[0], k[5], k[6]) for k in POINTS} == {(a, m, s) for a in axes["alg"] for m in axes["mode"]
                                                    for s in axes["seed"]}
    assert {k[2] for k in POINTS} == set(axes["block"]) and {k[3] for k in POINTS} == set(axes["ipt"])
    assert {k[1] for k in POINTS} == set(axes["dtype"]) - {"float16"}
