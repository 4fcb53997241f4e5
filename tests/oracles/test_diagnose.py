"""The Load/Store diagnosis of "another block's valid_items" judges every value of a launch at once: it must
name exactly the blocks that one expected output per value would name."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from harness.contracts import load_contracts
from harness.oracles import block_load_store as oracle
from harness.oracles import diagnose
from harness.oracles.values import raw_view
from tests.selftest.runs import plan


def _one_per_value(spec, snap, p, got_raw, at):  # type: ignore[no-untyped-def]
    """The definition: block b is explained when some valid_items v != its own gives exactly its output."""
    found = set()
    for v in np.unique(p.valid):
        rows = at[p.valid[at] != v]
        if rows.size:
            alt = raw_view(np.ascontiguousarray(oracle.expected(spec, snap, replace(p, valid=np.full_like(p.valid, v)),
                                                                rows)))
            found |= {int(b) for b in rows[(alt == got_raw[rows]).all(axis=1)]}
    return found


def _launches(contract_id: str, count: int):  # type: ignore[no-untyped-def]
    launches = plan(next(c for c in load_contracts() if c.id == contract_id), "pr").launches
    return launches[:: max(1, len(launches) // count)][:count]


@pytest.mark.parametrize("contract_id", ["block.load", "block.store"])
def test_other_block_valid_names_the_blocks_one_output_per_value_names(contract_id: str) -> None:
    rng = np.random.default_rng(5)
    named = 0
    for launch in _launches(contract_id, 12):
        spec, snap = launch.spec, launch.batch
        p = oracle.params_of(spec, snap)
        values = np.unique(p.valid)
        # each block's output as another block's valid_items gives it, then some of them spoiled in one element
        taken = rng.choice(values, size=snap.n_blocks)
        got = np.stack([oracle.expected(spec, snap, replace(p, valid=np.full_like(p.valid, v)), np.array([b]))[0]
                        for b, v in enumerate(taken)])
        spoiled = rng.random(snap.n_blocks) < 0.3
        columns = rng.integers(0, got.shape[1], size=snap.n_blocks)
        got_raw = raw_view(np.ascontiguousarray(got))
        got_raw[spoiled, columns[spoiled]] ^= got_raw.dtype.type(1)
        failing = diagnose._Failing.of(spec, snap, p, got_raw, np.ones(snap.n_blocks, dtype=bool))
        fast = {int(b) for b in diagnose._other_valid(spec, snap, p, failing)}
        assert fast == _one_per_value(spec, snap, p, got_raw, np.arange(snap.n_blocks)), spec
        named += len(fast)
    assert named  # the launches hold blocks that are explained, not only ones that are not
