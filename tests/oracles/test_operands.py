"""The reducing families' operands: matmul's data never lets a product collapse."""

from __future__ import annotations

import coopcheck
import numpy as np
import pytest

from harness.cases import kernel_points, point_cases
from harness.contracts import Contract, load_contracts
from harness.oracles.operands import invertible
from harness.oracles.values import raw_view

MATMUL = [c for c in load_contracts() if "matmul" in c.axes.get("op", ())]


def _odd_determinant(values: np.ndarray) -> np.ndarray:
    """Whether each packed matrix is invertible modulo 2**k: its determinant is odd."""
    k = values.dtype.itemsize * 2
    raw = raw_view(values).astype(np.uint64)
    a, b, c, d = ((raw >> np.uint64(j * k)) & np.uint64(1) for j in range(4))
    return ((a & d) ^ (b & c)) == 1


@pytest.mark.parametrize("contract", [pytest.param(c, id=c.id) for c in MATMUL])
def test_every_matmul_operand_of_pr_is_invertible(contract: Contract) -> None:
    """Every item, fill and seed value a pr matmul launch draws has an odd determinant, so every product of them
    does too (the determinant is multiplicative): a running product never becomes the zero matrix, after which
    operands taken in the wrong order would no longer show. Random matrices are singular 5 times in 8."""
    launches = 0
    for point in kernel_points(contract, "pr"):
        if dict(point)["op"] != "matmul":
            continue
        cases = point_cases(contract, "t", point)
        batch = contract.oracle.build(cases[0].spec, cases, 7).batch
        for name in ("items", "initial"):
            values = getattr(batch, name, None)
            if values is not None:
                assert _odd_determinant(np.asarray(values)).all(), (cases[0].kernel_id, name)
        launches += 1
    assert launches >= 9


def test_invertible_matrices_keep_every_bit_in_both_states() -> None:
    """Only the entries' lowest bits are constrained (one of the six invertible matrices over GF(2)): every bit
    of every entry still takes both states."""
    spec = coopcheck.KernelSpec("block.scan", "uint16", (32,), 1, "raking", variant=(("op", "matmul"),))
    rng = np.random.default_rng(3)
    bits, choice = rng.integers(0, 2**64, size=(2, 4096), dtype=np.uint64)
    values = raw_view(invertible(np.dtype(spec.dtype), bits, choice))
    assert _odd_determinant(values).all()
    for bit in range(16):
        assert set((values >> bit) & 1) == {0, 1}, bit
    low_bits = {int(v & 1 | (v >> 3) & 2 | (v >> 6) & 4 | (v >> 9) & 8) for v in values}
    assert len(low_bits) == 6
