"""A representative sample of Exchange kernels compiles for sm_90a without a GPU, is named by its specialization,
keeps the contract's resource rules (checked on their SASS, with the contract's ``when`` for each kernel point)
and fits its block's registers (the ``meets_its_contract`` fixture), asks at launch for exactly its plan's scratch
(one warp's share when time-sliced), and syncs a warp method's warp with the lanes that exist (PTX).

The sample: every method x slicing x output once on a block, dtype and ipt that cycle through the contract's
axes, and once at the heaviest corner (1024 threads, float64, ipt 8: 64 KiB of scratch unsliced); time-sliced,
also 1024 threads of four bytes each (uint8, ipt 4: 32 slices), where the slices unrolled kept the items in local
memory (found by the host lane over ``full``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import product
from types import ModuleType
from typing import Any
from unittest import mock

import coopcheck
import numpy as np
import pytest
from coopcheck.exchange import METHODS, OUTPUTS, SLICING, WARP_METHODS
from coopcheck_cutlass.adapter import CutlassAdapter
from coopcheck_cutlass.exchange_plan import exchange_plan

from harness.contracts import load_contracts, parse_block

ARCH = "sm_90"
CONTRACT = {c.id: c for c in load_contracts()}["block.exchange"]


def _sample() -> list[coopcheck.KernelSpec]:
    axes = CONTRACT.axes
    params, k = [], 0
    for method, slicing, output in product(METHODS, SLICING, OUTPUTS):
        block = axes["block"][k % len(axes["block"])]
        while method in WARP_METHODS and (threads := coopcheck.block_threads(parse_block(block))) > 32 \
                and threads % 32:
            k += 1  # a warp method on a partial last warp is a rejection case
            block = axes["block"][k % len(axes["block"])]
        points = [(axes["dtype"][k % len(axes["dtype"])], block, axes["ipt"][k % len(axes["ipt"])]),
                  ("float64", "1024", 8), *([("uint8", "1024", 4)] if slicing == "on" else [])]
        k += 1
        for dtype, shape, ipt in points:
            spec = coopcheck.KernelSpec("block.exchange", dtype, parse_block(shape), ipt, method,
                                        variant=(("slicing", slicing), ("output", output)))
            params.append(spec)
    return params


SAMPLE = _sample()


def _artifacts(adapter: CutlassAdapter, spec: coopcheck.KernelSpec) -> coopcheck.Artifacts:
    return adapter.artifacts(adapter.compile(spec, arch=ARCH))


def test_the_sample_covers_every_method_both_ways_and_every_axis_value() -> None:
    assert {(s.algorithm, *dict(s.variant).values()) for s in SAMPLE} == set(product(METHODS, SLICING, OUTPUTS))
    assert {s.dtype for s in SAMPLE} == set(CONTRACT.axes["dtype"])
    assert {s.items_per_thread for s in SAMPLE} == set(CONTRACT.axes["ipt"])
    assert {"x".join(map(str, s.block)) for s in SAMPLE} == set(CONTRACT.axes["block"])


@pytest.mark.parametrize("spec", SAMPLE)
def test_the_kernel_meets_its_contract_and_asks_for_its_plans_scratch(spec: coopcheck.KernelSpec,
                                                                      meets_its_contract: Any) -> None:
    artifacts = meets_its_contract(spec, CONTRACT)
    threads = min(spec.threads, 32) if spec.static("slicing") == "on" else spec.threads  # that share of the tile
    assert artifacts.dynamic_shared_bytes == exchange_plan(spec).scratch_bytes
    assert artifacts.dynamic_shared_bytes == threads * spec.items_per_thread * np.dtype(spec.dtype).itemsize


@pytest.mark.parametrize("spec", [s for s in SAMPLE if s.algorithm in WARP_METHODS])
def test_a_warp_method_syncs_its_warp_or_time_sliced_its_block(spec: coopcheck.KernelSpec,
                                                                 adapter: CutlassAdapter) -> None:
    """ptxas may drop a warp barrier from the SASS (a converged warp), so its mask is read from the PTX."""
    artifacts = _artifacts(adapter, spec)
    warp = re.findall(r"bar\.warp\.sync\s+(-?\d+);", artifacts.ptx or "")
    block = re.findall(r"\bbar(?:rier)?\.sync(?:\.aligned)?\s", artifacts.ptx or "")
    if spec.static("slicing") == "on":
        assert (warp, len(block) > 0) == ([], True)
    else:
        lanes = min(spec.threads, 32)
        assert warp and {int(m) & 0xFFFFFFFF for m in warp} == {(1 << lanes) - 1} and not block, (warp, block)


# -- the checks bite: an Exchange with one decision flipped breaks a resource rule ------------------------------


@contextmanager
def _block_barrier_for_warps() -> Iterator[None]:
    import cutlass.cute as cute

    with mock.patch.object(cute.arch, "sync_warp", lambda mask: cute.arch.sync_threads()):
        yield


#: What is flipped -> (the mutant: a ``tests/mutants.py`` context or one of this module's, method, slicing, the
#: rule it must break).
FLIPPED = {
    "block method without its barrier": ("transpose_without_barrier", "striped_to_blocked", "off", "require_sass BAR"),
    "time-sliced without its barriers": ("transpose_without_barrier", "blocked_to_warp_striped", "on",
                                         "require_sass BAR"),
    "warp method at a block barrier": (_block_barrier_for_warps, "warp_striped_to_blocked", "off", "forbid_sass BAR"),
}


@pytest.mark.parametrize("flipped", FLIPPED)
def test_a_flipped_barrier_breaks_a_resource_rule(flipped: str, adapter: CutlassAdapter, mutants: ModuleType,
                                                  violations: Any) -> None:
    """``transpose_without_barrier`` traces every block barrier away, the Exchange's too."""
    name, method, slicing, rule = FLIPPED[flipped]
    mutant = getattr(mutants, name) if isinstance(name, str) else name
    spec = coopcheck.KernelSpec("block.exchange", "int32", (128,), 4, method,
                                variant=(("slicing", slicing), ("output", "inplace")))
    assert violations(spec, _artifacts(adapter, spec), CONTRACT) == []
    _, compiled = mutants.compile_mutant(mutant, spec)  # never reaching the shared adapter or a disk cache
    found = violations(spec, compiled.artifacts, CONTRACT)
    assert [m for m in found if m.startswith(rule)], found


def test_a_launch_passes_the_abi_arrays_then_the_batch_scalars() -> None:
    """Exchange: items, ranks, flags, dst, then n_blocks; Load/Store keep region, then n_blocks."""
    import cutlass
    from coopcheck_cutlass import kernels

    spec = coopcheck.KernelSpec("block.exchange", "uint16", (64,), 2, "scatter_to_striped",
                                variant=(("slicing", "off"), ("output", "separate")))
    program = kernels.build(spec, "probe")
    batch = coopcheck.ExchangeBatch(*(np.zeros(3 * spec.tile, t) for t in ("uint16", "int32", "int32")), spec.tile)
    args = program.batch_arguments({"items": 16, "ranks": 32, "flags": 48, "dst": 64}, batch)
    assert [a.dtype for a in args[:4]] == [cutlass.Uint16, cutlass.Int32, cutlass.Int32, cutlass.Uint16]
    assert len(args) == 5 and isinstance(args[4], cutlass.Int32) and args[4].value == 3
    load = kernels.build(coopcheck.KernelSpec("block.load", "int8", (32,), 2, "direct"), "probe")
    scalars = load.batch_arguments({name: 0 for name, _ in load.pointers},
                                   coopcheck.LoadBatch(*(np.zeros(1),) * 6, region=80))[-2:]
    assert [type(a) for a in scalars] == [cutlass.Int64, cutlass.Int32] and [a.value for a in scalars] == [80, 1]
