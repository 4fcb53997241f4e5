"""A representative sample of Reduce kernels compiles for sm_90a without a GPU, is named by its specialization,
keeps the contract's resource rules (checked on their SASS) and fits its block's registers (the
``meets_its_contract`` fixture), asks at launch for exactly one item a thread of scratch, and syncs its block where
its plan's schedule does (raking_commutative_only's fallback too).

The sample: every algorithm x operator it takes once on a block, dtype and ipt that cycle through the contract's
axes, and once at the heaviest corners (1024 threads, ipt 16, 8-byte items: float64, and int64 for matmul); and
the kernels the host lane over ``full`` found with local memory: one- and two-byte min / max at ipt 16, which
ptxas, free to aim at 32 blocks an SM, fitted in 31 registers with 8 bytes spilled.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.reduce import ALGORITHMS, COMMUTATIVE, OPERATORS
from coopcheck_cutlass.reduce_plan import SYNC, reduce_plan

from harness.contracts import load_contracts, parse_block

CONTRACT = {c.id: c for c in load_contracts()}["block.reduce"]
PAIRS = [(a, o) for a in ALGORITHMS for o in OPERATORS if a != "raking_commutative_only" or o in COMMUTATIVE]


def _spec(dtype: str, shape: str, ipt: int, algorithm: str, op: str) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.reduce", dtype, parse_block(shape), ipt, algorithm, variant=(("op", op),))


def _sample() -> list[coopcheck.KernelSpec]:
    axes, params = CONTRACT.axes, []
    integers = [d for d in axes["dtype"] if not d.startswith("float")]
    for k, (algorithm, op) in enumerate(PAIRS):
        dtypes = integers if op == "matmul" else axes["dtype"]
        points = [(dtypes[k % len(dtypes)], axes["block"][k % len(axes["block"])], axes["ipt"][k % len(axes["ipt"])]),
                  ("int64" if op == "matmul" else "float64", "1024", max(axes["ipt"]))]
        for dtype, shape, ipt in points:
            spec = _spec(dtype, shape, ipt, algorithm, op)
            params.append(spec)
    return params


#: Found by the host lane over full, each algorithm once: (dtype, block, ipt, algorithm, op).
SPILLED_OVER_FULL = [("uint8", "65", 16, "raking", "min"), ("int16", "13x5", 16, "warp_reductions", "max"),
                     ("uint16", "1024", 16, "raking_commutative_only", "min"), ("int8", "65", 16, "raking", "max")]
SAMPLE = _sample() + [_spec(*point) for point in SPILLED_OVER_FULL]


def test_the_sample_covers_every_algorithm_with_every_operator_it_takes_and_every_axis_value() -> None:
    assert {(s.algorithm, s.static("op")) for s in SAMPLE} == set(PAIRS)
    for axis, values in (("dtype", {s.dtype for s in SAMPLE}), ("ipt", {s.items_per_thread for s in SAMPLE}),
                         ("block", {"x".join(map(str, s.block)) for s in SAMPLE})):
        assert values == set(CONTRACT.axes[axis]), axis


@pytest.mark.parametrize("spec", SAMPLE)
def test_the_kernel_meets_its_contract_with_one_item_a_thread_of_scratch_and_its_schedules_barriers(
        spec: coopcheck.KernelSpec, meets_its_contract: Any) -> None:
    artifacts = meets_its_contract(spec, CONTRACT)
    plan = reduce_plan(spec)
    assert artifacts.dynamic_shared_bytes == plan.scratch_bytes == spec.threads * np.dtype(spec.dtype).itemsize
    paths = (plan.schedule, plan.fallback) if plan.commutative_path else (plan.schedule,)
    barriers = sum(step.kind == SYNC for steps in paths for step in steps)
    assert len(re.findall(r"\bbar(?:rier)?\.sync(?:\.aligned)?\s", artifacts.ptx or "")) == barriers
    assert not re.search(r"bar\.warp\.sync", artifacts.ptx or "")


# -- the checks bite: a Reduce with one decision flipped breaks a resource rule ---------------------------------


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_reduce_without_its_barriers_breaks_a_resource_rule(algorithm: str, meets_its_contract: Any,
                                                             mutants: ModuleType, violations: Any) -> None:
    """``transpose_without_barrier`` traces every block barrier away, the Reduce's too."""
    spec = _spec("int32", "128", 4, algorithm, "max")
    meets_its_contract(spec, CONTRACT)
    _, compiled = mutants.compile_mutant(mutants.transpose_without_barrier, spec)  # its own adapter, no disk cache
    found = violations(spec, compiled.artifacts, CONTRACT)
    assert [m for m in found if m.startswith("require_sass BAR")], found


def test_a_launch_passes_the_abi_arrays_then_the_block_count() -> None:
    """Reduce: items, valid, sentinel, dst, then n_blocks."""
    import cutlass
    from coopcheck_cutlass import kernels

    spec = _spec("uint16", "65", 2, "warp_reductions", "first")
    program = kernels.build(spec, "probe")
    batch = coopcheck.ReduceBatch(np.zeros(3 * spec.tile, np.uint16), np.zeros(3, np.int32), np.zeros(3, np.uint16),
                                  spec.tile)
    args = program.batch_arguments({"items": 16, "valid": 32, "sentinel": 48, "dst": 64}, batch)
    assert [a.dtype for a in args[:4]] == [cutlass.Uint16, cutlass.Int32, cutlass.Uint16, cutlass.Uint16]
    assert len(args) == 5 and isinstance(args[4], cutlass.Int32) and args[4].value == 3
