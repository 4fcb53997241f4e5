"""A sample of Warp Reduce kernels compiles for sm_90a without a GPU, is named by its specialization, keeps the
contract's resource rules (checked on their SASS: no block barrier, no local memory, no CALL) and fits its block's
registers (the ``meets_its_contract`` fixture), takes no shared memory, and shuffles once per step of its plan (twice
for 8-byte items), with one ballot in the segmented modes.

The sample: every operator and mode at NVIDIA/cccl#858's width 7 on the largest block with 8-byte items (int64 for
matmul, else float64), and a few corners: float16 (its bits shuffled as an int16), a partial last hardware warp, a
2-D block, width 1 (no shuffle).
"""

from __future__ import annotations

import re
from itertools import product
from typing import Any

import coopcheck
import pytest
from coopcheck.warp_reduce import MODES, OPERATORS
from coopcheck_cutlass.warp_plan import warp_reduce_plan

from harness.contracts import load_contracts, parse_block

CONTRACT = {c.id: c for c in load_contracts()}["warp.reduce"]


def _spec(dtype: str, shape: str, width: str, op: str, mode: str) -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("warp.reduce", dtype, parse_block(shape), 1, "any",
                                variant=(("width", width), ("op", op), ("mode", mode)))


CORNERS = [("float16", "100", "24", "first", "tail"), ("uint8", "1", "1", "max", "head"),
           ("int16", "16x8", "16", "min", "reduce"), ("uint32", "49", "32", "matmul", "head")]
SAMPLE = [
    *(_spec("int64" if op == "matmul" else "float64", "1024", "7", op, mode) for op, mode in product(OPERATORS, MODES)),
    *(_spec(*corner) for corner in CORNERS)]


def test_the_sample_covers_every_operator_mode_with_each_and_the_widths_at_the_ends() -> None:
    assert {(s.static("op"), s.static("mode")) for s in SAMPLE} == set(product(OPERATORS, MODES))
    assert {"1", "7", "32"} <= {s.static("width") for s in SAMPLE}


@pytest.mark.parametrize("spec", SAMPLE)
def test_the_kernel_meets_its_contract_and_shuffles_once_a_step_without_shared_memory(
        spec: coopcheck.KernelSpec, shuffles_without_shared_memory: Any) -> None:
    plan = warp_reduce_plan(spec)
    ptx = shuffles_without_shared_memory(spec, CONTRACT, len(plan.offsets))
    assert len(re.findall(r"\bvote\.sync\.ballot\.b32\b", ptx)) == (plan.mode != "reduce")
