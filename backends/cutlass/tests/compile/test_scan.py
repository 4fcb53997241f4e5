"""A small sample of Scan kernels compiles for sm_90a without a GPU, is named by its specialization, keeps the
contract's resource rules (checked on their SASS: shared scratch, barriers, no local memory) and fits its block's
registers (the ``meets_its_contract`` fixture), asks at launch for exactly its plan's scratch, and syncs its block
where its plan's schedule does, once per tile.

The sample (kept small: the DSL keeps about 3 MB of every kernel it builds): every algorithm on three shapes, a lone
thread or warp (raking's warp-synchronous path), a 2-D block with a partial last warp, and the heaviest corner (1024
threads, ipt 16, 8-byte items, the prefix callback over three tiles); operator, mode, seed and dtype cycle through
the contract's values. And what the host lane over ``full`` found with local memory: raking_memoize's uint8 min /
max at 1024 threads, a whole 32-item segment memoized (75 registers where a thread has 64); 8-byte warp_scans with
the prefix callback at 1024 threads, while every thread selected its warp's prefix from the running aggregate (64
registers, 8 or 16 bytes spilled).
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.scan import ALGORITHMS, tiles
from coopcheck_cutlass.scan_plan import SYNC, scan_plan

from harness.contracts import load_contracts, parse_block

CONTRACT = {c.id: c for c in load_contracts()}["block.scan"]
SHAPES = (("1", 7), ("13x5", 2), ("1024", 16))


def _spec(dtype: str, shape: str, ipt: int, algorithm: str, op: str, mode: str, seed: str) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.scan", dtype, parse_block(shape), ipt, algorithm,
                                variant=(("op", op), ("mode", mode), ("seed", seed)))


def _sample() -> list[coopcheck.KernelSpec]:
    axes, params, k = CONTRACT.axes, [], 0
    integers = [d for d in axes["dtype"] if not d.startswith("float")]
    for algorithm in ALGORITHMS:
        for shape, ipt in SHAPES:
            op, mode = axes["op"][k % len(axes["op"])], axes["mode"][k % len(axes["mode"])]
            seed = "prefix" if shape == "1024" else axes["seed"][k % len(axes["seed"])]
            dtypes = integers if op == "matmul" else axes["dtype"]
            dtype = ("int64" if op == "matmul" else "float64") if shape == "1024" else dtypes[k % len(dtypes)]
            spec = _spec(dtype, shape, ipt, algorithm, op, mode, seed)
            params.append(spec)
            k += 1
    return params


#: Found by the host lane over full: (dtype, block, ipt, algorithm, op, mode, seed). The warp_scans one stands for
#: 57 kernels (int64 and uint64 min / max / sum, float64 sum), fixed by passing each warp's prefix through the
#: scratch (``ScanPlan.warp_scans``).
SPILLED_OVER_FULL = [("uint8", "1024", 1, "raking_memoize", "min", "inclusive", "none"),
                     ("uint8", "1024", 4, "raking_memoize", "max", "exclusive", "prefix"),
                     ("int64", "1024", 1, "warp_scans", "sum", "inclusive", "prefix")]
SAMPLE = _sample() + [_spec(*point) for point in SPILLED_OVER_FULL]


def test_the_sample_covers_every_algorithm_operator_mode_and_seed() -> None:
    assert {s.algorithm for s in SAMPLE} == set(ALGORITHMS)
    for axis in ("op", "mode", "seed"):
        assert {s.static(axis) for s in SAMPLE} == set(CONTRACT.axes[axis]), axis


@pytest.mark.parametrize("spec", SAMPLE)
def test_the_kernel_meets_its_contract_with_its_plans_scratch_and_barriers(spec: coopcheck.KernelSpec,
                                                                           meets_its_contract: Any) -> None:
    artifacts = meets_its_contract(spec, CONTRACT)
    plan = scan_plan(spec)
    assert artifacts.dynamic_shared_bytes == plan.scratch_bytes == plan.scratch_items * np.dtype(spec.dtype).itemsize
    barriers = tiles(spec) * sum(step.kind == SYNC for step in plan.schedule)
    assert len(re.findall(r"\bbar(?:rier)?\.sync(?:\.aligned)?\s", artifacts.ptx or "")) == barriers
    assert not re.search(r"bar\.warp\.sync", artifacts.ptx or "")


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_items_compare_unsigned(dtype: str, adapter: Any) -> None:
    """The items arrive as a global-memory view, whose element type the DSL makes signless: min must stay an
    unsigned comparison."""
    spec = _spec(dtype, "32", 2, "warp_scans", "min", "inclusive", "none")
    ptx = adapter.artifacts(adapter.compile(spec, arch="sm_90")).ptx or ""
    assert re.search(r"\b(?:min|setp\.\w+)\.u(?:16|32|64)\b", ptx)
    assert not re.search(r"\bmin\.s(?:16|32|64)\b|\bsetp\.\w+\.s(?:16|64)\b", ptx)  # ranks compare as s32


# -- the checks bite: a Scan with one decision flipped breaks a resource rule ------------------------------------


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_scan_without_its_barriers_breaks_a_resource_rule(algorithm: str, mutants: ModuleType,
                                                           violations: Any) -> None:
    """``transpose_without_barrier`` traces every block barrier away, the Scan's too."""
    spec = _spec("int32", "128", 2, algorithm, "sum", "exclusive", "initial")
    _, compiled = mutants.compile_mutant(mutants.transpose_without_barrier, spec)  # its own adapter, no disk cache
    found = violations(spec, compiled.artifacts, CONTRACT)
    assert [m for m in found if m.startswith("require_sass BAR")], found


def test_a_launch_passes_the_abi_arrays_then_the_block_count() -> None:
    """Scan: items, initial, dst, then n_blocks."""
    import cutlass
    from coopcheck_cutlass import kernels

    spec = _spec("uint16", "65", 2, "raking", "max", "inclusive", "prefix")
    program = kernels.build(spec, "probe")
    batch = coopcheck.ScanBatch(np.zeros(3 * 3 * spec.tile, np.uint16), np.zeros(3, np.uint16), spec.tile, 3)
    args = program.batch_arguments({"items": 16, "initial": 32, "dst": 48}, batch)
    assert [a.dtype for a in args[:3]] == [cutlass.Uint16, cutlass.Uint16, cutlass.Uint16]
    assert len(args) == 4 and isinstance(args[3], cutlass.Int32) and args[3].value == 3
