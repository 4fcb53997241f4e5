"""The crate's Warp Reduce and Warp Scan kernel bodies run on the host (``tests/hostrun/warp_host.rs``: a host thread
per GPU thread, every shuffle and vote an exchange of the block checked for its member mask) through the adapter's
own launch arguments, and judged by the contracts' oracles as the GPU runs are.

It is no GPU (float16's arithmetic is PTX, so float16 is not among the points), but a shuffle from the wrong lane, a
logical warp cut across a hardware warp, a segment end misplaced, operands swapped or a mask naming a lane the
hardware warp lacks fails here. The points cover every width, operator and mode (Scan: seed and aggregate), every
block shape of the contracts and every dtype but float16.
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

CONTRACTS = {c.id: c for c in load_contracts() if c.id in ("warp.reduce", "warp.scan")}
RUST_TYPES = {"uint8": "u8", "int8": "i8", "int16": "i16", "uint16": "u16", "int32": "i32", "uint32": "u32",
              "int64": "i64", "uint64": "u64", "float32": "f32", "float64": "f64"}
OPERATORS = {"sum": "Sum", "min": "Min", "max": "Max", "matmul": "Matmul", "first": "First"}
RUNS = {"warp.reduce": "run_reduce", "warp.scan": "run_scan"}
#: Seconds a launch may take (an exchange some threads never reach hangs it).
TIMEOUT = 120
#: Warp Reduce: (dtype, block, width, op, mode)
REDUCE_POINTS = [
    ("int8", "49", "7", "sum", "reduce"),
    ("uint8", "13x5", "24", "matmul", "head"),
    ("int16", "100", "16", "first", "tail"),
    ("uint16", "1", "1", "min", "reduce"),
    ("int32", "16x8", "32", "max", "head"),
    ("uint32", "7", "4", "sum", "tail"),
    ("int64", "1024", "2", "matmul", "reduce"),
    ("uint64", "32", "8", "first", "head"),
    ("float32", "49", "7", "min", "tail"),
    ("float64", "13x5", "24", "max", "reduce"),
    ("int32", "100", "7", "matmul", "tail"),
    ("uint16", "1024", "24", "first", "reduce"),
    ("float32", "16x8", "1", "sum", "head"),
]
#: Warp Scan: (dtype, block, width, op, mode, seed, aggregate)
SCAN_POINTS = [
    ("int8", "49", "7", "sum", "exclusive", "none", "on"),
    ("uint8", "13x5", "24", "matmul", "inclusive", "initial", "off"),
    ("int16", "100", "16", "min", "exclusive", "initial", "on"),
    ("uint16", "1", "1", "max", "inclusive", "none", "off"),
    ("int32", "16x8", "32", "matmul", "exclusive", "none", "off"),
    ("uint32", "7", "4", "sum", "inclusive", "initial", "on"),
    ("int64", "1024", "2", "max", "exclusive", "initial", "off"),
    ("uint64", "32", "8", "matmul", "inclusive", "none", "on"),
    ("float32", "49", "7", "min", "inclusive", "none", "on"),
    ("float64", "13x5", "24", "sum", "exclusive", "initial", "on"),
    ("int32", "100", "7", "matmul", "exclusive", "initial", "on"),
    ("uint16", "1024", "24", "sum", "exclusive", "none", "off"),
]
POINTS = [("warp.reduce", *k) for k in REDUCE_POINTS] + [("warp.scan", *k) for k in SCAN_POINTS]


def kernel_point(k: tuple[Any, ...]) -> tuple[tuple[str, Any], ...]:
    _, dtype, block, width, op, mode, *scan_statics = k
    point = (("dtype", dtype), ("block", block), ("ipt", 1), ("alg", "any"), ("width", width), ("op", op),
             ("mode", mode))
    return point + tuple(zip(("seed", "aggregate"), scan_statics, strict=False))


def _dispatch(points: list[tuple[Any, ...]]) -> str:
    """Rust source: ``dispatch(entry, threads, blocks, params)`` running the instantiation of each point's entry."""
    arms = {}
    for operation, dtype, _, _, op, *_ in points:
        spec = KernelSpec(operation, dtype, (1,), 1, "any", variant=(("op", op),))
        arms[abi.entry_symbol(spec)] = f"{RUNS[operation]}::<{RUST_TYPES[dtype]}, operator::{OPERATORS[op]}>"
    lines = [f'        "{entry}" => {call}(threads, blocks, params),' for entry, call in sorted(arms.items())]
    return ("fn dispatch(entry: &str, threads: u32, blocks: u32, params: &mut [Arg]) -> bool {\n    match entry {\n"
            + "\n".join(lines) + "\n        _ => return false,\n    }\n    true\n}\n")


@pytest.fixture(scope="module")
def runner(host_run_build: Callable[[str, str, str], Path]) -> Path:
    """The host build of the warp kernel bodies with a dispatch for every point's entry."""
    return host_run_build("warp_host", "COOP_WARP_POINTS", _dispatch(POINTS))


def _run_on_host(adapter: Any, compiled: CompiledKernel, spec: KernelSpec, batch: Any) -> Any:
    """One launch of the host build: the arguments as files, the output read back."""
    params, out = [], None
    for param, arg in zip(abi.PARAMS[spec.operation], _launch_args(compiled.symbol, spec, batch), strict=True):
        path = adapter.folder / param.name
        if isinstance(arg, In):
            path.write_bytes(arg.array.tobytes())
            params.append(f"in:{path}")
        elif isinstance(arg, Out):
            path.write_bytes(b"\xa5" * arg.nbytes)  # not one of the dtype's zeros: an unwritten output shows
            params.append(f"out:{path}")
            out = path
        else:
            params.append(str(arg))
    assert out is not None
    command = [str(adapter.binary), compiled.symbol, str(spec.threads), str(batch.n_blocks), *params]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if done.returncode:
        raise AssertionError(f"{compiled.symbol}: the host run exited with {done.returncode}: {done.stderr}")
    return np.frombuffer(out.read_bytes(), dtype=spec.dtype).copy()


@pytest.mark.parametrize("k", POINTS, ids=lambda k: "-".join(map(str, k)))
def test_the_warp_kernel_body_run_on_the_host_matches_the_oracle(runner: Path, tmp_path: Path,
                                                                 host_run_adapter: Any, k: tuple[Any, ...]) -> None:
    adapter = host_run_adapter(runner, tmp_path, _run_on_host)
    for seed in (20261203, 7):
        failures = point_failures(adapter, CONTRACTS[k[0]], kernel_point(k), seed)
        assert not failures, f"{k}, seed {seed}:\n" + "\n".join(failures[:8])


@pytest.mark.parametrize("operation", sorted(CONTRACTS))
def test_the_host_points_cover_every_width_operator_mode_block_and_dtype(operation: str) -> None:
    axes, points = CONTRACTS[operation].axes, [k[1:] for k in POINTS if k[0] == operation]
    statics = ["width", "op", "mode", "seed", "aggregate"][:len(points[0]) - 2]
    for i, axis in enumerate(statics, start=2):
        assert {k[i] for k in points} == set(axes[axis]), axis
    assert {k[1] for k in points} == set(axes["block"])
    assert {k[0] for k in points} == set(axes["dtype"]) - {"float16"}
