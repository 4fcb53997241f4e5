"""A sample of Warp Scan kernels compiles for sm_90a without a GPU, is named by its specialization, keeps the
contract's resource rules (checked on their SASS: no block barrier, no local memory, no CALL) and fits its block's
registers (the ``meets_its_contract`` fixture), takes no shared memory, and shuffles once per step of its plan, once
for the aggregate and, exclusive, once for the left neighbour (twice each for 8-byte items).

The sample: every operator, mode and seed at NVIDIA/cccl#858's width 7 on the largest block with 8-byte items (int64
for matmul, else float64), the aggregate on and off in turn, and a few corners: float16 (its bits shuffled as an
int16), a partial last hardware warp, a 2-D block, width 1 (no scan step).
"""

from __future__ import annotations

from itertools import product
from typing import Any

import coopcheck
import pytest
from coopcheck.warp_scan import AGGREGATES, MODES, OPERATORS, SEEDS
from coopcheck_cutlass.warp_plan import warp_scan_plan

from harness.contracts import load_contracts, parse_block

CONTRACT = {c.id: c for c in load_contracts()}["warp.scan"]


def _spec(dtype: str, shape: str, width: str, op: str, mode: str, seed: str, aggregate: str) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("warp.scan", dtype, parse_block(shape), 1, "any", variant=(
        ("width", width), ("op", op), ("mode", mode), ("seed", seed), ("aggregate", aggregate)))


CORNERS = [("float16", "100", "24", "max", "exclusive", "initial", "on"),
           ("uint8", "1", "1", "min", "exclusive", "none", "on"),
           ("int16", "16x8", "16", "sum", "inclusive", "initial", "off"),
           ("uint32", "49", "32", "matmul", "exclusive", "none", "off")]
SAMPLE = [
    *(_spec("int64" if op == "matmul" else "float64", "1024", "7", op, mode, seed, AGGREGATES[k % len(AGGREGATES)])
      for k, (op, mode, seed) in enumerate(product(OPERATORS, MODES, SEEDS))),
    *(_spec(*corner) for corner in CORNERS)]


def test_the_sample_covers_every_operator_mode_seed_and_aggregate_and_the_widths_at_the_ends() -> None:
    assert {(s.static("op"), s.static("mode"), s.static("seed")) for s in SAMPLE} == set(product(OPERATORS, MODES,
                                                                                                SEEDS))
    assert {s.static("aggregate") for s in SAMPLE} == set(AGGREGATES)
    assert {"1", "7", "32"} <= {s.static("width") for s in SAMPLE}


@pytest.mark.parametrize("spec", SAMPLE)
def test_the_kernel_meets_its_contract_and_shuffles_once_a_step_without_shared_memory(
        spec: coopcheck.KernelSpec, shuffles_without_shared_memory: Any) -> None:
    plan = warp_scan_plan(spec)
    shuffles_without_shared_memory(spec, CONTRACT, len(plan.offsets) + 1 + (not plan.inclusive))
