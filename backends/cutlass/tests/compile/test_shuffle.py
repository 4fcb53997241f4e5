"""A representative sample of Shuffle kernels compiles for sm_90a without a GPU, is named by its specialization,
keeps the contract's resource rules (checked on their SASS) and fits its block's registers (the
``meets_its_contract`` fixture), asks at launch for exactly CUB's scratch (one item a thread), and syncs its block
twice (stores to loads, then before the scratch is reused).

The sample: every method x output once on a block, dtype and ipt that cycle through the contract's axes, and once
at the heaviest corner (1024 threads, float64, the largest ipt a method takes).
"""

from __future__ import annotations

import re
from itertools import product
from types import ModuleType
from typing import Any

import coopcheck
import numpy as np
import pytest
from coopcheck.shuffle import METHODS, OUTPUTS, SCALAR
from coopcheck_cutlass.shuffle_plan import shuffle_plan

from harness.contracts import load_contracts, parse_block

CONTRACT = {c.id: c for c in load_contracts()}["block.shuffle"]


def _sample() -> list[coopcheck.KernelSpec]:
    axes = CONTRACT.axes
    params, shifts = [], 0
    for k, (method, output) in enumerate(product(METHODS, OUTPUTS)):
        ipt = 1 if method in SCALAR else axes["ipt"][shifts % len(axes["ipt"])]  # offset and rotate: one item
        shifts += method not in SCALAR
        points = [(axes["dtype"][k % len(axes["dtype"])], axes["block"][k % len(axes["block"])], ipt),
                  ("float64", "1024", 1 if method in SCALAR else max(axes["ipt"]))]
        for dtype, shape, items in points:
            spec = coopcheck.KernelSpec("block.shuffle", dtype, parse_block(shape), items, method,
                                        variant=(("output", output),))
            params.append(spec)
    return params


SAMPLE = _sample()


def test_the_sample_covers_every_method_both_ways_and_every_axis_value() -> None:
    assert {(s.algorithm, s.static("output")) for s in SAMPLE} == set(product(METHODS, OUTPUTS))
    assert {s.dtype for s in SAMPLE} == set(CONTRACT.axes["dtype"])
    assert {s.items_per_thread for s in SAMPLE} == set(CONTRACT.axes["ipt"])
    assert {"x".join(map(str, s.block)) for s in SAMPLE} == set(CONTRACT.axes["block"])


@pytest.mark.parametrize("spec", SAMPLE)
def test_the_kernel_meets_its_contract_with_one_item_a_thread_of_scratch_and_two_block_barriers(
        spec: coopcheck.KernelSpec, meets_its_contract: Any) -> None:
    artifacts = meets_its_contract(spec, CONTRACT)
    assert artifacts.dynamic_shared_bytes == shuffle_plan(spec).scratch_bytes
    assert artifacts.dynamic_shared_bytes == spec.threads * np.dtype(spec.dtype).itemsize
    # the stores to the loads, then the loads to the scratch's reuse
    assert len(re.findall(r"\bbar(?:rier)?\.sync(?:\.aligned)?\s", artifacts.ptx or "")) == 2
    assert not re.search(r"bar\.warp\.sync", artifacts.ptx or "")


# -- the checks bite: a Shuffle with one decision flipped breaks a resource rule --------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_a_shuffle_without_its_barriers_breaks_a_resource_rule(method: str, meets_its_contract: Any,
                                                              mutants: ModuleType, violations: Any) -> None:
    """``transpose_without_barrier`` traces every block barrier away, the Shuffle's too."""
    spec = coopcheck.KernelSpec("block.shuffle", "int32", (128,), 1 if method in SCALAR else 4, method,
                                variant=(("output", "inplace"),))
    meets_its_contract(spec, CONTRACT)
    _, compiled = mutants.compile_mutant(mutants.transpose_without_barrier, spec)  # its own adapter, no disk cache
    found = violations(spec, compiled.artifacts, CONTRACT)
    assert [m for m in found if m.startswith("require_sass BAR")], found


def test_a_launch_passes_the_abi_arrays_then_the_block_count() -> None:
    """Shuffle: items, prior, distance, dst, then n_blocks."""
    import cutlass
    from coopcheck_cutlass import kernels

    spec = coopcheck.KernelSpec("block.shuffle", "uint16", (64,), 1, "rotate", variant=(("output", "separate"),))
    program = kernels.build(spec, "probe")
    batch = coopcheck.ShuffleBatch(np.zeros(3 * spec.tile, np.uint16), np.zeros(3 * (spec.tile + 64), np.uint16),
                                   np.zeros(3, np.int32), spec.tile)
    args = program.batch_arguments({"items": 16, "prior": 32, "distance": 48, "dst": 64}, batch)
    assert [a.dtype for a in args[:4]] == [cutlass.Uint16, cutlass.Uint16, cutlass.Int32, cutlass.Uint16]
    assert len(args) == 5 and isinstance(args[4], cutlass.Int32) and args[4].value == 3
